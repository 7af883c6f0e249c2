//===- NNOps.cpp - nn dialect operations ----------------------------------===//
//
// Verifiers, result-type inference and folders of the nn ops. Inference
// reports what was expected and what was found at the op's location; Debian's
// MLIR has assertions off, so nothing here may assume well-formed input.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/NN/IR/NNOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace tandem::nn;

LogicalResult tandem::nn::verifyInsideFunction(Operation *op) {
  Operation *parent = op->getParentOp();
  if (parent && isa<ModuleOp>(parent))
    return op->emitOpError()
           << "must be inside a function (func.func or an mpmd fragment), "
              "found at module level, where nothing runs it and the rank "
              "programs would drop it";
  return success();
}

LogicalResult tandem::nn::verifyTensorSize(Operation *op, Type type,
                                           const Twine &what) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return success();
  Type element = tensor.getElementType();
  uint64_t bytes =
      element.isIntOrIndexOrFloat()
          ? (element.isIndex() ? 8 : (element.getIntOrFloatBitWidth() + 7) / 8)
          : 8;
  for (int64_t size : tensor.getShape())
    if (size >= 0 &&
        (__builtin_mul_overflow(bytes, static_cast<uint64_t>(size), &bytes) ||
         bytes > kMaxTensorBytes))
      return op->emitOpError()
             << what << " of type " << type
             << " holds more than 2^48 bytes, more than any machine can "
                "allocate";
  return success();
}

LogicalResult tandem::nn::verifyTensorSizes(Operation *op) {
  for (auto [i, type] : llvm::enumerate(op->getOperandTypes()))
    if (failed(verifyTensorSize(op, type, "operand " + Twine(i))))
      return failure();
  for (auto [i, type] : llvm::enumerate(op->getResultTypes()))
    if (failed(verifyTensorSize(op, type, "result " + Twine(i))))
      return failure();
  return success();
}

LogicalResult ParameterOp::verify() {
  if (failed(verifyTensorSize(*this, getType(), "the parameter")))
    return failure();
  if (auto seed = getSeedAttr(); seed && seed.getInt() < 0)
    return emitOpError() << "expected a non-negative seed, found "
                         << seed.getInt();
  auto logical = getLogicalShapeAttr();
  if (getInit().getKind() == InitKind::Orthonormal) {
    ArrayRef<int64_t> shape = getTensorType().getShape();
    if (logical)
      return emitOpError() << "an orthonormal parameter cannot be padded "
                              "(logical_shape)";
    if (shape.size() < 2)
      return emitOpError() << "an orthonormal parameter must have rank >= 2 "
                              "(a matrix: rows x columns), found rank "
                           << shape.size();
    // verifyTensorSize bounded the element count, so this cannot overflow.
    int64_t rows =
        shape.back() > 0 ? getTensorType().getNumElements() / shape.back() : 0;
    if (shape.back() < 1 || rows < shape.back())
      return emitOpError() << "an orthonormal parameter needs at least as "
                              "many rows as columns (the last dimension), "
                              "found "
                           << rows << " rows and " << shape.back()
                           << " columns";
  }
  if (!logical)
    return success();
  ArrayRef<int64_t> stored = getTensorType().getShape();
  if (logical.size() != static_cast<int64_t>(stored.size()))
    return emitOpError() << "expected a logical_shape of rank " << stored.size()
                         << " (the type's), found rank " << logical.size();
  unsigned padded = 0;
  for (auto [dim, size] : llvm::enumerate(logical.asArrayRef())) {
    if (size < 1 || size > stored[dim])
      return emitOpError() << "expected logical_shape dimension " << dim
                           << " in [1, " << stored[dim]
                           << "] (the stored size), found " << size;
    padded += size != stored[dim];
  }
  if (padded > 1)
    return emitOpError() << "expected a logical_shape that differs from the "
                            "type in at most one dimension, found "
                         << padded;
  return success();
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

namespace {
/// Prints a shape as `8x16x32` (or `scalar` for rank 0) in diagnostics.
struct ShapeStr {
  ArrayRef<int64_t> shape;
};
raw_ostream &operator<<(raw_ostream &os, ShapeStr s) {
  if (s.shape.empty())
    return os << "[]";
  os << "[";
  llvm::interleave(s.shape, os, "x");
  return os << "]";
}
Diagnostic &operator<<(Diagnostic &diag, ShapeStr s) {
  std::string str;
  llvm::raw_string_ostream os(str);
  os << s;
  return diag << str;
}
} // namespace

/// Emits "'<op>' op <message>" at `loc` when inference runs with a location
/// (verification and parsing) and stays silent otherwise.
template <typename... Args>
static LogicalResult inferError(std::optional<Location> loc, StringRef opName,
                                Args &&...args) {
  return emitOptionalError(loc, "'", opName, "' op ",
                           std::forward<Args>(args)...);
}

/// The operand's type as a ranked tensor; inference also runs while parsing,
/// before operand constraints are checked, so this may fail.
static FailureOr<RankedTensorType> getTensor(std::optional<Location> loc,
                                             StringRef opName, Value value,
                                             StringRef what) {
  auto type =
      dyn_cast_or_null<RankedTensorType>(value ? value.getType() : Type());
  if (!type || !type.hasStaticShape()) {
    (void)inferError(loc, opName, "expected ", what,
                     " to be a statically shaped tensor, found ",
                     value ? value.getType() : Type());
    return failure();
  }
  return type;
}

static LogicalResult checkSameElementType(std::optional<Location> loc,
                                          StringRef opName, StringRef what,
                                          RankedTensorType a,
                                          RankedTensorType b) {
  if (a.getElementType() == b.getElementType())
    return success();
  return inferError(loc, opName, "expected ", what,
                    " to have the same element type, found ",
                    a.getElementType(), " and ", b.getElementType());
}

bool tandem::nn::isFloat8(Type type) {
  return isa<Float8E4M3FNType, Float8E5M2Type>(type);
}

//===----------------------------------------------------------------------===//
// Custom directives
//===----------------------------------------------------------------------===//

static ParseResult parseInitializer(OpAsmParser &parser,
                                    InitializerAttr &init) {
  Attribute attr = InitializerAttr::parseBody(parser);
  if (!attr)
    return failure();
  init = cast<InitializerAttr>(attr);
  return success();
}

static void printInitializer(OpAsmPrinter &printer, Operation *,
                             InitializerAttr init) {
  init.printBody(printer);
}

#define GET_OP_CLASSES
#include "tandem/Dialect/NN/IR/NNOps.cpp.inc"

//===----------------------------------------------------------------------===//
// ParamOp
//===----------------------------------------------------------------------===//

ParameterOp ParamOp::getDeclaration() {
  return SymbolTable::lookupNearestSymbolFrom<ParameterOp>(*this,
                                                           getNameAttr());
}

bool ParamOp::readsFrozen() {
  ParameterOp declaration = getDeclaration();
  return declaration && declaration.getFrozen();
}

LogicalResult ParamOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto param =
      symbolTable.lookupNearestSymbolFrom<ParameterOp>(*this, getNameAttr());
  if (!param)
    return emitOpError() << "'" << getName()
                         << "' does not name an nn.parameter";
  if (param.getType() != getType())
    return emitOpError() << "result type " << getType()
                         << " does not match the type of parameter '"
                         << getName() << "', " << param.getType();
  return success();
}

//===----------------------------------------------------------------------===//
// ConstantOp and CastOp
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

LogicalResult CastOp::verify() {
  Type dst = getType().getElementType();
  if (isFloat8(dst) && !getSaturate())
    return emitOpError() << "cast to " << dst
                         << " needs an explicit 'saturate' choice (true: "
                            "clamp to the largest finite value, false: "
                            "overflow to the non-finite value)";
  if (!isFloat8(dst) && getSaturate())
    return emitOpError()
           << "'saturate' applies only to casts to f8 types, found a cast to "
           << dst;
  return success();
}

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

OpFoldResult NegOp::fold(FoldAdaptor) {
  if (auto inner = getInput().getDefiningOp<NegOp>())
    return inner.getInput();
  return {};
}

OpFoldResult PowOp::fold(FoldAdaptor) {
  if (getExponent().convertToDouble() == 1.0)
    return getInput();
  return {};
}

FailureOr<SmallVector<int64_t>>
tandem::nn::broadcastShapes(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    size_t fromRight = rank - 1 - i;
    int64_t l = fromRight < lhs.size() ? lhs[lhs.size() - 1 - fromRight] : 1;
    int64_t r = fromRight < rhs.size() ? rhs[rhs.size() - 1 - fromRight] : 1;
    if (l == r || r == 1)
      result[i] = l;
    else if (l == 1)
      result[i] = r;
    else
      return failure();
  }
  return result;
}

LogicalResult tandem::nn::inferBroadcastResult(StringRef opName,
                                               std::optional<Location> loc,
                                               Value lhs, Value rhs,
                                               SmallVectorImpl<Type> &results) {
  auto lt = getTensor(loc, opName, lhs, "lhs");
  auto rt = getTensor(loc, opName, rhs, "rhs");
  if (failed(lt) || failed(rt))
    return failure();
  if (failed(checkSameElementType(loc, opName, "operands", *lt, *rt)))
    return failure();
  auto shape = broadcastShapes(lt->getShape(), rt->getShape());
  if (failed(shape))
    return inferError(loc, opName, "cannot broadcast shapes ",
                      ShapeStr{lt->getShape()}, " and ",
                      ShapeStr{rt->getShape()});
  results.push_back(RankedTensorType::get(*shape, lt->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// SelectOp
//===----------------------------------------------------------------------===//

LogicalResult SelectOp::verify() {
  ArrayRef<int64_t> cond = getCond().getType().getShape();
  ArrayRef<int64_t> shape = getType().getShape();
  auto broadcasts = [&] {
    if (cond.size() > shape.size())
      return false;
    size_t offset = shape.size() - cond.size();
    for (size_t i = 0; i < cond.size(); ++i)
      if (cond[i] != 1 && cond[i] != shape[offset + i])
        return false;
    return true;
  };
  if (!broadcasts())
    return emitOpError() << "condition of shape " << ShapeStr{cond}
                         << " does not broadcast to the result shape "
                         << ShapeStr{shape};
  return success();
}

OpFoldResult SelectOp::fold(FoldAdaptor adaptor) {
  if (getTrueValue() == getFalseValue())
    return getTrueValue();
  // A constant condition that is uniformly non-zero or zero picks one
  // operand whole.
  auto cond = dyn_cast_if_present<DenseFPElementsAttr>(adaptor.getCond());
  if (!cond || !cond.isSplat())
    return {};
  return cond.getSplatValue<APFloat>().isZero() ? getFalseValue()
                                                : getTrueValue();
}

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  StringRef name = getOperationName();
  auto lt = getTensor(loc, name, adaptor.getLhs(), "lhs");
  auto rt = getTensor(loc, name, adaptor.getRhs(), "rhs");
  if (failed(lt) || failed(rt))
    return failure();
  if (failed(checkSameElementType(loc, name, "operands", *lt, *rt)))
    return failure();
  int64_t lr = lt->getRank(), rr = rt->getRank();
  if (lr < 2 || rr < 2)
    return inferError(loc, name,
                      "expected operands of rank >= 2, found lhs "
                      "rank ",
                      lr, " and rhs rank ", rr);
  if (rr != 2 && rr != lr)
    return inferError(loc, name,
                      "expected rhs to be 2-D or to have the rank of lhs (", lr,
                      "), found rank ", rr);
  ArrayRef<int64_t> ls = lt->getShape(), rs = rt->getShape();
  ArrayRef<int64_t> batch = ls.drop_back(2);
  if (rr == lr && rs.drop_back(2) != batch)
    return inferError(loc, name, "batch dimensions differ: lhs has ",
                      ShapeStr{batch}, ", rhs has ", ShapeStr{rs.drop_back(2)});
  bool tl = adaptor.getTransposeLhs(), tr = adaptor.getTransposeRhs();
  int64_t m = tl ? ls[lr - 1] : ls[lr - 2];
  int64_t kl = tl ? ls[lr - 2] : ls[lr - 1];
  int64_t kr = tr ? rs[rr - 1] : rs[rr - 2];
  int64_t n = tr ? rs[rr - 2] : rs[rr - 1];
  if (kl != kr)
    return inferError(loc, name, "contraction dimensions differ: lhs has ", kl,
                      ", rhs has ", kr);
  SmallVector<int64_t> shape(batch);
  shape.push_back(m);
  shape.push_back(n);
  results.push_back(RankedTensorType::get(shape, lt->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Softmax-like ops and normalizations
//===----------------------------------------------------------------------===//

template <typename OpTy> static LogicalResult verifyAxisOp(OpTy op) {
  int64_t rank = op.getType().getRank();
  int64_t axis = op.getAxis();
  if (axis < 0 || axis >= rank)
    return op.emitOpError() << "axis " << axis << " is out of range for rank "
                            << rank << " (expected 0 <= axis < " << rank << ")";
  return success();
}

LogicalResult SoftmaxOp::verify() { return verifyAxisOp(*this); }
LogicalResult LogSoftmaxOp::verify() { return verifyAxisOp(*this); }

/// Checks a normalization's 1-D parameter against the input's last dimension.
static LogicalResult checkNormParam(std::optional<Location> loc,
                                    StringRef opName, StringRef what,
                                    RankedTensorType input,
                                    RankedTensorType param) {
  if (failed(checkSameElementType(loc, opName, Twine("input and " + what).str(),
                                  input, param)))
    return failure();
  int64_t last = input.getShape().back();
  if (param.getRank() != 1 || param.getShape()[0] != last)
    return inferError(loc, opName, "expected ", what, " of shape [", last,
                      "] (the input's last dimension), found ",
                      ShapeStr{param.getShape()});
  return success();
}

static LogicalResult checkEpsilon(std::optional<Location> loc, StringRef opName,
                                  double eps) {
  if (!(eps > 0.0) || !std::isfinite(eps))
    return inferError(loc, opName, "expected a positive finite epsilon, found ",
                      eps);
  return success();
}

/// A normalization's (or its gradient's) epsilon: positive and finite.
template <typename NormOp> static LogicalResult verifyNormEpsilon(NormOp op) {
  return checkEpsilon(op.getLoc(), op.getOperationName(),
                      op.getEpsilon().convertToDouble());
}

static FailureOr<RankedTensorType> getNormInput(std::optional<Location> loc,
                                                StringRef opName, Value input) {
  auto it = getTensor(loc, opName, input, "input");
  if (failed(it))
    return failure();
  if (it->getRank() < 1) {
    (void)inferError(loc, opName,
                     "expected an input of rank >= 1, found a "
                     "rank-0 tensor");
    return failure();
  }
  return it;
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  StringRef name = getOperationName();
  auto it = getNormInput(loc, name, adaptor.getInput());
  if (failed(it))
    return failure();
  auto wt = getTensor(loc, name, adaptor.getWeight(), "weight");
  auto bt = getTensor(loc, name, adaptor.getBias(), "bias");
  if (failed(wt) || failed(bt) ||
      failed(checkNormParam(loc, name, "weight", *it, *wt)) ||
      failed(checkNormParam(loc, name, "bias", *it, *bt)))
    return failure();
  results.push_back(*it);
  return success();
}

// The generated parser runs inference before the attr-dict's inherent
// attributes reach the properties, so `epsilon` is checked here, not there.
LogicalResult LayerNormOp::verify() { return verifyNormEpsilon(*this); }

LogicalResult RMSNormOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  StringRef name = getOperationName();
  auto it = getNormInput(loc, name, adaptor.getInput());
  if (failed(it))
    return failure();
  auto wt = getTensor(loc, name, adaptor.getWeight(), "weight");
  if (failed(wt) || failed(checkNormParam(loc, name, "weight", *it, *wt)))
    return failure();
  results.push_back(*it);
  return success();
}

LogicalResult RMSNormOp::verify() { return verifyNormEpsilon(*this); }

/// A normalization gradient's operands: the input, a weight like the
/// forward op's, a cotangent of the input's type; dx and dy·x̂ are that
/// type.
template <typename Adaptor>
static LogicalResult inferNormGrad(std::optional<Location> loc, StringRef name,
                                   Adaptor adaptor,
                                   SmallVectorImpl<Type> &results) {
  auto it = getNormInput(loc, name, adaptor.getInput());
  if (failed(it))
    return failure();
  auto wt = getTensor(loc, name, adaptor.getWeight(), "weight");
  auto gt = getTensor(loc, name, adaptor.getCotangent(), "cotangent");
  if (failed(wt) || failed(gt) ||
      failed(checkNormParam(loc, name, "weight", *it, *wt)))
    return failure();
  if (*gt != *it)
    return inferError(loc, name, "expected a cotangent of the input's type ",
                      *it, ", found ", *gt);
  results.push_back(*it);
  results.push_back(*it);
  return success();
}

LogicalResult
LayerNormGradOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                  Adaptor adaptor,
                                  SmallVectorImpl<Type> &results) {
  return inferNormGrad(loc, getOperationName(), adaptor, results);
}

LogicalResult LayerNormGradOp::verify() { return verifyNormEpsilon(*this); }

LogicalResult RMSNormGradOp::inferReturnTypes(MLIRContext *,
                                              std::optional<Location> loc,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &results) {
  return inferNormGrad(loc, getOperationName(), adaptor, results);
}

LogicalResult RMSNormGradOp::verify() { return verifyNormEpsilon(*this); }

//===----------------------------------------------------------------------===//
// EmbeddingOp, AttentionOp, CrossEntropyOp
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  StringRef name = getOperationName();
  auto tt = getTensor(loc, name, adaptor.getTable(), "table");
  auto it = getTensor(loc, name, adaptor.getIds(), "ids");
  if (failed(tt) || failed(it))
    return failure();
  if (tt->getRank() != 2)
    return inferError(loc, name,
                      "expected a 2-D table (vocabulary x "
                      "dimension), found shape ",
                      ShapeStr{tt->getShape()});
  if (!it->getElementType().isSignlessInteger())
    return inferError(loc, name, "expected integer ids, found element type ",
                      it->getElementType());
  if (auto rows = adaptor.getRowsAttr();
      rows && (rows.getInt() < 1 || rows.getInt() > tt->getShape()[0]))
    return inferError(loc, name, "expected rows in [1, ", tt->getShape()[0],
                      "] (the table's first dimension), found ", rows.getInt());
  SmallVector<int64_t> shape(it->getShape());
  shape.push_back(tt->getShape()[1]);
  results.push_back(RankedTensorType::get(shape, tt->getElementType()));
  return success();
}

/// The checks nn.attention and nn.attention_grad share: query, key and value
/// of one element type, 3-D, agreeing on batch; heads dividing the query's
/// dimension D and kv_heads dividing heads, key and value kv_heads·D/heads
/// wide; a causal mask over equal lengths; a positive finite scale.
template <typename AdaptorT>
static LogicalResult checkAttentionOperands(std::optional<Location> loc,
                                            StringRef name, AdaptorT adaptor,
                                            RankedTensorType *queryType) {
  auto qt = getTensor(loc, name, adaptor.getQuery(), "query");
  auto kt = getTensor(loc, name, adaptor.getKey(), "key");
  auto vt = getTensor(loc, name, adaptor.getValue(), "value");
  if (failed(qt) || failed(kt) || failed(vt))
    return failure();
  if (failed(checkSameElementType(loc, name, "query and key", *qt, *kt)) ||
      failed(checkSameElementType(loc, name, "query and value", *qt, *vt)))
    return failure();
  if (qt->getRank() != 3 || kt->getRank() != 3 || vt->getRank() != 3)
    return inferError(loc, name,
                      "expected 3-D query, key and value (batch x sequence x "
                      "dimension), found shapes ",
                      ShapeStr{qt->getShape()}, ", ", ShapeStr{kt->getShape()},
                      " and ", ShapeStr{vt->getShape()});
  ArrayRef<int64_t> q = qt->getShape(), k = kt->getShape(), v = vt->getShape();
  if (q[0] != k[0] || q[0] != v[0])
    return inferError(loc, name,
                      "expected query, key and value to agree on batch, "
                      "found shapes ",
                      ShapeStr{q}, ", ", ShapeStr{k}, " and ", ShapeStr{v});
  if (k[1] != v[1] || k[2] != v[2])
    return inferError(loc, name,
                      "expected key and value of the same shape, found ",
                      ShapeStr{k}, " and ", ShapeStr{v});
  int64_t heads = adaptor.getHeads();
  if (heads <= 0 || q[2] % heads != 0)
    return inferError(loc, name,
                      "expected a head count that divides the "
                      "dimension ",
                      q[2], ", found ", heads);
  int64_t kvHeads = heads;
  if (auto attr = adaptor.getKvHeadsAttr()) {
    kvHeads = attr.getInt();
    if (kvHeads <= 0 || heads % kvHeads != 0)
      return inferError(loc, name,
                        "expected kv_heads to divide the head count ", heads,
                        ", found ", kvHeads);
  }
  // kvHeads divides heads, which divides q[2]: no overflow.
  int64_t kvDim = q[2] / heads * kvHeads;
  if (k[2] != kvDim)
    return inferError(loc, name, "expected key and value of dimension ", kvDim,
                      " (", kvHeads, " key and value heads of ", q[2] / heads,
                      "), found ", k[2]);
  if (adaptor.getCausal() && q[1] != k[1])
    return inferError(loc, name,
                      "causal attention needs query and key of the same "
                      "sequence length, found ",
                      q[1], " and ", k[1]);
  if (auto scale = adaptor.getScale()) {
    double s = scale->convertToDouble();
    if (!(s > 0.0) || !std::isfinite(s))
      return inferError(loc, name, "expected a positive finite scale, found ",
                        s);
  }
  *queryType = *qt;
  return success();
}

RankedTensorType AttentionOp::getLseType(RankedTensorType query,
                                         int64_t heads) {
  return RankedTensorType::get(
      {query.getShape()[0], heads, query.getShape()[1]},
      Float32Type::get(query.getContext()));
}

void AttentionOp::build(OpBuilder &b, OperationState &state, Value query,
                        Value key, Value value, int64_t heads, bool causal,
                        FloatAttr scale, IntegerAttr kvHeads, bool withLse) {
  build(b, state, query.getType(),
        withLse ? getLseType(cast<RankedTensorType>(query.getType()), heads)
                : Type(),
        query, key, value, heads, causal, scale, kvHeads);
}

/// An attention op's log-sum-exp (`what`) for a query of type `queryType`.
static LogicalResult checkLse(std::optional<Location> loc, StringRef name,
                              Value lse, RankedTensorType queryType,
                              int64_t heads, StringRef what) {
  RankedTensorType expected = AttentionOp::getLseType(queryType, heads);
  if (lse.getType() != expected)
    return inferError(loc, name, "expected ", what, " of type ", expected,
                      " (batch x heads x query length, f32), found ",
                      lse.getType());
  return success();
}

LogicalResult AttentionOp::verify() {
  std::optional<Location> loc = getLoc();
  RankedTensorType queryType;
  if (failed(
          checkAttentionOperands(loc, getOperationName(), *this, &queryType)))
    return failure();
  if (getResult().getType() != queryType)
    return emitOpError("expected a result of the query's type ")
           << queryType << ", found " << getResult().getType();
  if (Value lse = getLse())
    return checkLse(loc, getOperationName(), lse, queryType, getHeads(),
                    "a log-sum-exp result");
  return success();
}

LogicalResult
AttentionGradOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                  Adaptor adaptor,
                                  SmallVectorImpl<Type> &results) {
  StringRef name = getOperationName();
  RankedTensorType queryType;
  if (failed(checkAttentionOperands(loc, name, adaptor, &queryType)))
    return failure();
  auto yt = getTensor(loc, name, adaptor.getOutput(), "output");
  auto dt = getTensor(loc, name, adaptor.getCotangent(), "cotangent");
  if (failed(yt) || failed(dt))
    return failure();
  if (*yt != queryType)
    return inferError(loc, name, "expected an output of the query's type ",
                      queryType, ", found ", *yt);
  if (failed(checkLse(loc, name, adaptor.getLse(), queryType,
                      adaptor.getHeads(), "a log-sum-exp operand")))
    return failure();
  if (*dt != queryType)
    return inferError(loc, name, "expected a cotangent of the query's type ",
                      queryType, ", found ", *dt);
  results.push_back(queryType);
  results.push_back(adaptor.getKey().getType());
  results.push_back(adaptor.getValue().getType());
  return success();
}

/// The softmax scale of an attention op: `scale`, or 1/sqrt(head dimension).
static double effectiveAttentionScale(std::optional<llvm::APFloat> scale,
                                      Value query, int64_t heads) {
  if (scale)
    return scale->convertToDouble();
  int64_t headDim =
      cast<RankedTensorType>(query.getType()).getShape()[2] / heads;
  return 1.0 / std::sqrt(static_cast<double>(headDim));
}

double AttentionOp::getEffectiveScale() {
  return effectiveAttentionScale(getScale(), getQuery(), getHeads());
}

double AttentionGradOp::getEffectiveScale() {
  return effectiveAttentionScale(getScale(), getQuery(), getHeads());
}

int64_t AttentionOp::getKeyValueHeads() {
  return getKvHeads().value_or(getHeads());
}

int64_t AttentionGradOp::getKeyValueHeads() {
  return getKvHeads().value_or(getHeads());
}

/// `classes`, when present, must be in [1, V] for logits of V columns.
static LogicalResult checkClasses(std::optional<Location> loc, StringRef name,
                                  IntegerAttr classes,
                                  RankedTensorType logits) {
  if (!classes)
    return success();
  int64_t columns = logits.getShape().back();
  int64_t count = classes.getInt();
  if (count < 1 || count > columns)
    return inferError(loc, name, "expected classes in [1, ", columns,
                      "] (the logits' last dimension), found ", count);
  return success();
}

LogicalResult CrossEntropyOp::inferReturnTypes(MLIRContext *,
                                               std::optional<Location> loc,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &results) {
  StringRef name = getOperationName();
  auto lt = getTensor(loc, name, adaptor.getLogits(), "logits");
  auto tt = getTensor(loc, name, adaptor.getTargets(), "targets");
  if (failed(lt) || failed(tt))
    return failure();
  if (lt->getRank() < 1)
    return inferError(loc, name,
                      "expected logits of rank >= 1, found a "
                      "rank-0 tensor");
  if (!tt->getElementType().isSignlessInteger())
    return inferError(loc, name,
                      "expected integer targets, found element type ",
                      tt->getElementType());
  if (tt->getShape() != lt->getShape().drop_back())
    return inferError(loc, name, "expected targets of shape ",
                      ShapeStr{lt->getShape().drop_back()},
                      " (the logits without the class dimension), found ",
                      ShapeStr{tt->getShape()});
  if (failed(checkClasses(loc, name, adaptor.getClassesAttr(), *lt)))
    return failure();
  results.push_back(RankedTensorType::get({}, lt->getElementType()));
  return success();
}

LogicalResult EmbeddingGradOp::verify() {
  auto ct = getCotangent().getType();
  auto it = getIds().getType();
  auto rt = getType();
  if (rt.getRank() != 2)
    return emitOpError() << "expected a 2-D result (vocabulary x dimension), "
                            "found shape "
                         << ShapeStr{rt.getShape()};
  if (ct.getElementType() != rt.getElementType())
    return emitOpError() << "expected the result element type to be "
                         << ct.getElementType() << ", found "
                         << rt.getElementType();
  SmallVector<int64_t> expected(it.getShape());
  expected.push_back(rt.getShape()[1]);
  if (ct.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "expected a cotangent of shape "
                         << ShapeStr{expected}
                         << " (the ids' shape and the table's dimension), "
                            "found "
                         << ShapeStr{ct.getShape()};
  if (auto rows = getRowsAttr();
      rows && (rows.getInt() < 1 || rows.getInt() > rt.getShape()[0]))
    return emitOpError() << "expected rows in [1, " << rt.getShape()[0]
                         << "] (the result's first dimension), found "
                         << rows.getInt();
  return success();
}

LogicalResult OneHotOp::verify() {
  int64_t classes = getClasses();
  if (classes < 1)
    return emitOpError() << "expected at least one class, found classes = "
                         << classes;
  auto it = getIds().getType();
  auto rt = getType();
  SmallVector<int64_t> expected(it.getShape());
  expected.push_back(classes);
  if (rt.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "expected a result of shape " << ShapeStr{expected}
                         << " (the ids' shape and the " << classes
                         << " classes), found " << ShapeStr{rt.getShape()};
  return success();
}

LogicalResult
CrossEntropyGradOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                     Adaptor adaptor,
                                     SmallVectorImpl<Type> &results) {
  StringRef name = getOperationName();
  auto lt = getTensor(loc, name, adaptor.getLogits(), "logits");
  auto tt = getTensor(loc, name, adaptor.getTargets(), "targets");
  auto ct = getTensor(loc, name, adaptor.getCotangent(), "cotangent");
  if (failed(lt) || failed(tt) || failed(ct))
    return failure();
  if (lt->getRank() < 1)
    return inferError(loc, name,
                      "expected logits of rank >= 1, found a rank-0 tensor");
  if (tt->getShape() != lt->getShape().drop_back())
    return inferError(loc, name, "expected targets of shape ",
                      ShapeStr{lt->getShape().drop_back()},
                      " (the logits without the class dimension), found ",
                      ShapeStr{tt->getShape()});
  if (ct->getRank() != 0)
    return inferError(loc, name, "expected a rank-0 cotangent, found shape ",
                      ShapeStr{ct->getShape()});
  if (failed(checkSameElementType(loc, name, "logits and cotangent", *lt, *ct)))
    return failure();
  if (failed(checkClasses(loc, name, adaptor.getClassesAttr(), *lt)))
    return failure();
  results.push_back(*lt);
  return success();
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto in = getInput().getType();
  auto out = getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError() << "expected the result element type to be "
                         << in.getElementType() << ", found "
                         << out.getElementType();
  if (in.getNumElements() != out.getNumElements())
    return emitOpError() << "cannot reshape " << in.getNumElements()
                         << " elements " << ShapeStr{in.getShape()} << " into "
                         << out.getNumElements() << " elements "
                         << ShapeStr{out.getShape()};
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto inner = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput()))
    return dense.reshape(getType());
  return {};
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  StringRef name = getOperationName();
  auto it = getTensor(loc, name, adaptor.getInput(), "input");
  if (failed(it))
    return failure();
  ArrayRef<int64_t> perm = adaptor.getPermutation();
  int64_t rank = it->getRank();
  llvm::SmallVector<bool> seen(rank, false);
  bool valid = static_cast<int64_t>(perm.size()) == rank;
  for (int64_t p : perm) {
    if (!valid || p < 0 || p >= rank || seen[p]) {
      valid = false;
      break;
    }
    seen[p] = true;
  }
  if (!valid) {
    std::string permStr;
    llvm::raw_string_ostream os(permStr);
    os << "[";
    llvm::interleaveComma(perm, os);
    os << "]";
    if (rank == 0)
      return inferError(loc, name,
                        "expected an empty permutation for a rank-0 input, "
                        "found ",
                        permStr);
    return inferError(loc, name, "expected a permutation of 0..", rank - 1,
                      " for rank ", rank, ", found ", permStr);
  }
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(it->getShape()[p]);
  results.push_back(RankedTensorType::get(shape, it->getElementType()));
  return success();
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  ArrayRef<int64_t> perm = getPermutation();
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return getInput();
  // transpose(transpose(x, p), q) = transpose(x, p∘q).
  if (auto inner = getInput().getDefiningOp<TransposeOp>()) {
    ArrayRef<int64_t> innerPerm = inner.getPermutation();
    SmallVector<int64_t> composed;
    for (int64_t p : perm)
      composed.push_back(innerPerm[p]);
    getInputMutable().assign(inner.getInput());
    setPermutation(composed);
    return getResult();
  }
  return {};
}

LogicalResult BroadcastToOp::verify() {
  auto in = getInput().getType();
  auto out = getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError() << "expected the result element type to be "
                         << in.getElementType() << ", found "
                         << out.getElementType();
  auto shape = broadcastShapes(in.getShape(), out.getShape());
  if (in.getRank() > out.getRank() || failed(shape) ||
      ArrayRef<int64_t>(*shape) != out.getShape())
    return emitOpError() << "cannot broadcast shape " << ShapeStr{in.getShape()}
                         << " to " << ShapeStr{out.getShape()};
  return success();
}

OpFoldResult BroadcastToOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput()))
    if (dense.isSplat())
      return DenseElementsAttr::get(getType(),
                                    dense.getSplatValue<Attribute>());
  return {};
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  StringRef name = getOperationName();
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return inferError(loc, name, "expected at least one input");
  auto first = getTensor(loc, name, inputs[0], "inputs");
  if (failed(first))
    return failure();
  int64_t rank = first->getRank();
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= rank)
    return inferError(loc, name, "axis ", axis, " is out of range for rank ",
                      rank);
  SmallVector<int64_t> shape(first->getShape());
  for (auto [i, input] : llvm::enumerate(inputs.drop_front())) {
    auto t = getTensor(loc, name, input, "inputs");
    if (failed(t) ||
        failed(checkSameElementType(loc, name, "inputs", *first, *t)))
      return failure();
    bool compatible = t->getRank() == rank;
    for (int64_t d = 0; compatible && d < rank; ++d)
      compatible = d == axis || t->getShape()[d] == shape[d];
    if (!compatible)
      return inferError(loc, name, "input ", i + 1, " has shape ",
                        ShapeStr{t->getShape()},
                        ", which does not match input 0's shape ",
                        ShapeStr{first->getShape()},
                        " outside the concatenation axis ", axis);
    shape[axis] += t->getShape()[axis];
  }
  results.push_back(RankedTensorType::get(shape, first->getElementType()));
  return success();
}

OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1 && getInputs()[0].getType() == getType())
    return getInputs()[0];
  return {};
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  StringRef name = getOperationName();
  auto it = getTensor(loc, name, adaptor.getInput(), "input");
  if (failed(it))
    return failure();
  ArrayRef<int64_t> starts = adaptor.getStarts(), limits = adaptor.getLimits(),
                    strides = adaptor.getStrides();
  int64_t rank = it->getRank();
  if (static_cast<int64_t>(starts.size()) != rank ||
      static_cast<int64_t>(limits.size()) != rank ||
      static_cast<int64_t>(strides.size()) != rank)
    return inferError(loc, name, "expected ", rank,
                      " starts, limits and strides (one per dimension), found ",
                      starts.size(), ", ", limits.size(), " and ",
                      strides.size());
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t dim = it->getShape()[d];
    if (starts[d] < 0 || starts[d] >= limits[d] || limits[d] > dim)
      return inferError(loc, name, "dimension ", d,
                        ": expected 0 <= start < "
                        "limit <= ",
                        dim, ", found start ", starts[d], " and limit ",
                        limits[d]);
    if (strides[d] < 1)
      return inferError(loc, name, "dimension ", d,
                        ": expected a positive stride, found ", strides[d]);
    // ceil((limit - start) / stride), written so that a huge stride cannot
    // overflow: 0 < limit - start <= dim here.
    shape.push_back((limits[d] - starts[d] - 1) / strides[d] + 1);
  }
  results.push_back(RankedTensorType::get(shape, it->getElementType()));
  return success();
}

OpFoldResult SliceOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType() &&
      llvm::all_of(getStarts(), [](int64_t s) { return s == 0; }) &&
      llvm::all_of(getStrides(), [](int64_t s) { return s == 1; }))
    return getInput();
  return {};
}

LogicalResult SplitOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  StringRef name = getOperationName();
  auto it = getTensor(loc, name, adaptor.getInput(), "input");
  if (failed(it))
    return failure();
  int64_t rank = it->getRank();
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= rank)
    return inferError(loc, name, "axis ", axis, " is out of range for rank ",
                      rank);
  ArrayRef<int64_t> sizes = adaptor.getSizes();
  if (sizes.empty())
    return inferError(loc, name, "expected at least one piece size");
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s <= 0)
      return inferError(loc, name, "expected positive piece sizes, found ", s);
    if (llvm::AddOverflow(total, s, total))
      return inferError(loc, name,
                        "piece sizes overflow a 64-bit sum, expected them to "
                        "sum to the size of axis ",
                        axis, ", ", it->getShape()[axis]);
  }
  if (total != it->getShape()[axis])
    return inferError(loc, name, "piece sizes sum to ", total,
                      ", expected the size of axis ", axis, ", ",
                      it->getShape()[axis]);
  for (int64_t s : sizes) {
    SmallVector<int64_t> shape(it->getShape());
    shape[axis] = s;
    results.push_back(RankedTensorType::get(shape, it->getElementType()));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

LogicalResult tandem::nn::inferReduceResult(StringRef opName,
                                            std::optional<Location> loc,
                                            Value input, ArrayRef<int64_t> axes,
                                            bool keepdims,
                                            SmallVectorImpl<Type> &results) {
  auto it = getTensor(loc, opName, input, "input");
  if (failed(it))
    return failure();
  int64_t rank = it->getRank();
  int64_t previous = -1;
  for (int64_t axis : axes) {
    if (axis < 0 || axis >= rank)
      return inferError(loc, opName, "axis ", axis,
                        " is out of range for rank ", rank);
    if (axis <= previous)
      return inferError(loc, opName,
                        "expected distinct axes in increasing order, found ",
                        axis, " after ", previous);
    previous = axis;
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (!llvm::is_contained(axes, d))
      shape.push_back(it->getShape()[d]);
    else if (keepdims)
      shape.push_back(1);
  }
  results.push_back(RankedTensorType::get(shape, it->getElementType()));
  return success();
}

OpFoldResult tandem::nn::foldReduce(Operation *op, ArrayRef<int64_t> axes) {
  if (axes.empty() && op->getOperand(0).getType() == op->getResult(0).getType())
    return op->getOperand(0);
  return {};
}

//===----------------------------------------------------------------------===//
// StageEndOp
//===----------------------------------------------------------------------===//

LogicalResult StageEndOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location>,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &results) {
  llvm::append_range(results, adaptor.getInputs().getTypes());
  return success();
}

LogicalResult StageEndOp::verify() {
  if (getInputs().empty())
    return emitOpError() << "expected at least one value to carry across the "
                            "stage boundary";
  return success();
}
