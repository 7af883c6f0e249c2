//===- Subspace.cpp - nn-subspace: a k-wide residual stream ---------------===//
//
// Protocol Models (Pluralis, 2025) trains pipelines over slow links by
// keeping a transformer's residual stream in a fixed k-dimensional subspace
// of the model width d: what crosses a stage edge is the stream's k
// coordinates. This pass finds the stream in an nn function (a token
// embedding, residual additions of projections, stage markers) and
// rewrites it in place, analysing everything first so a refusal leaves the
// module untouched. See the pass description (Passes.td) and
// docs/compression.md.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/NN/IR/NNOps.h"
#include "tandem/Dialect/NN/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringMap.h"

namespace tandem::nn {
#define GEN_PASS_DEF_NNSUBSPACE
#include "tandem/Dialect/NN/Transforms/Passes.h.inc"
} // namespace tandem::nn

using namespace mlir;
using namespace tandem::nn;

static constexpr llvm::StringLiteral kBasisName = "subspace.basis";
static constexpr llvm::StringLiteral kTokensName = "subspace.tokens";

namespace {

/// `h · weight (+ bias)`: a projection that writes into the stream.
struct Projection {
  MatmulOp product;
  ParamOp weight;
  AddOp biasAdd; // null without a bias
  ParamOp bias;  // null without a bias
};

/// How one stream value goes on: a residual addition of a projection, or a
/// stage marker passing it as operand `index`. Neither: the stream ends.
struct Continuation {
  Operation *op = nullptr;
  unsigned index = 0;
  Projection projection;
};

class SubspaceRewrite {
public:
  SubspaceRewrite(ModuleOp module, func::FuncOp func, int64_t rank,
                  int64_t seed)
      : module(module), func(func), rank(rank), seed(seed) {
    module.walk([&](ParamOp read) { reads[read.getName()].push_back(read); });
  }

  LogicalResult analyse();
  void rewrite();

private:
  /// The projection `value` is, or a failure (already reported) when it is
  /// one the rewrite cannot change; std::nullopt when it is no projection.
  FailureOr<std::optional<Projection>> projectionOf(Value value, Value stream);
  /// A trained parameter read that is its parameter's only read.
  LogicalResult checkOwnRead(ParamOp read, StringRef role);
  RankedTensorType narrowed(Type type) const {
    auto tensor = cast<RankedTensorType>(type);
    SmallVector<int64_t> shape(tensor.getShape());
    shape.back() = rank;
    return tensor.clone(shape);
  }
  void retypeParameter(ParamOp read);
  void setNarrowType(Value value) { value.setType(narrowed(value.getType())); }

  ModuleOp module;
  func::FuncOp func;
  int64_t rank, seed;
  llvm::StringMap<SmallVector<ParamOp>> reads;

  EmbeddingOp embedding;
  ParamOp table, positions;
  AddOp positionAdd;
  int64_t width = 0;
  /// The stream's values, first to last, and how each goes on (the last
  /// one's continuation is empty).
  SmallVector<Value> stream;
  SmallVector<Continuation> continuations;
};

} // namespace

LogicalResult SubspaceRewrite::checkOwnRead(ParamOp read, StringRef role) {
  if (read.readsFrozen())
    return read.emitError("nn-subspace: ")
           << role << " @" << read.getName()
           << " is frozen; the rewrite narrows trained parameters";
  // One read with one use: the rewrite narrows the read itself.
  if (reads[read.getName()].size() != 1 || !read->hasOneUse())
    return read.emitError("nn-subspace: ")
           << role << " @" << read.getName()
           << " is read elsewhere too, so it cannot become " << rank << " wide";
  return success();
}

FailureOr<std::optional<Projection>>
SubspaceRewrite::projectionOf(Value value, Value streamValue) {
  Projection projection;
  Value product = value;
  if (auto add = value.getDefiningOp<AddOp>()) {
    for (unsigned i = 0; i < 2; ++i) {
      auto matmul = add->getOperand(i).getDefiningOp<MatmulOp>();
      auto bias = add->getOperand(1 - i).getDefiningOp<ParamOp>();
      if (matmul && bias) {
        projection.biasAdd = add;
        projection.bias = bias;
        product = matmul.getResult();
      }
    }
    if (!projection.biasAdd)
      return std::optional<Projection>();
  }
  auto matmul = product.getDefiningOp<MatmulOp>();
  if (!matmul)
    return std::optional<Projection>();
  projection.product = matmul;
  projection.weight = matmul.getRhs().getDefiningOp<ParamOp>();
  auto weightType =
      projection.weight
          ? dyn_cast<RankedTensorType>(projection.weight.getType())
          : RankedTensorType();
  if (!weightType || weightType.getRank() != 2 || matmul.getTransposeLhs() ||
      matmul.getTransposeRhs())
    return matmul.emitError("nn-subspace: this projection into the residual "
                            "stream is not `h · weight` with a rank-2 "
                            "parameter weight (in x out, untransposed), the "
                            "form the rewrite narrows");
  if (!matmul.getResult().hasOneUse() ||
      (projection.biasAdd && !projection.biasAdd.getResult().hasOneUse()))
    return matmul.emitError("nn-subspace: this projection into the residual "
                            "stream is also used elsewhere, so it cannot "
                            "become ")
           << rank << " wide";
  if (failed(checkOwnRead(projection.weight, "the projection weight")))
    return failure();
  if (projection.bias) {
    auto biasType = cast<RankedTensorType>(projection.bias.getType());
    if (biasType.getRank() != 1 || biasType.getShape()[0] != width)
      return projection.bias.emitError("nn-subspace: the bias of a projection "
                                       "into the residual stream must be a "
                                       "vector of the model width ")
             << width << ", found " << biasType;
    if (failed(checkOwnRead(projection.bias, "the projection bias")))
      return failure();
  }
  if (value.getType() != streamValue.getType())
    return value.getDefiningOp()->emitError(
               "nn-subspace: this projection's type ")
           << value.getType() << " differs from the residual stream's "
           << streamValue.getType();
  return std::optional<Projection>(projection);
}

LogicalResult SubspaceRewrite::analyse() {
  if (rank < 1)
    return module.emitError("nn-subspace: rank must be at least 1, found ")
           << rank;
  if (seed < 0)
    return module.emitError("nn-subspace: seed must be non-negative, found ")
           << seed;
  for (StringRef name : {kBasisName, kTokensName})
    if (module.lookupSymbol(name))
      return module.lookupSymbol(name)->emitError("nn-subspace: @")
             << name << " already exists: was the pass run twice?";

  unsigned embeddings = 0;
  func.walk([&](EmbeddingOp op) {
    auto read = op.getTable().getDefiningOp<ParamOp>();
    if (!read || !isa<BlockArgument>(op.getIds()) || read.readsFrozen())
      return;
    embedding = op;
    ++embeddings;
  });
  if (embeddings != 1)
    return func.emitError("nn-subspace: @")
           << func.getSymName()
           << " has no single token embedding (nn.embedding of a trained "
              "parameter table by a function argument): not a residual "
              "transformer the rewrite knows";
  table = embedding.getTable().getDefiningOp<ParamOp>();
  auto tableType = cast<RankedTensorType>(table.getType());
  if (tableType.getRank() != 2)
    return embedding.emitError("nn-subspace: the token table must be rank 2, "
                               "found ")
           << tableType;
  width = tableType.getShape()[1];
  if (rank > width)
    return embedding.emitError("nn-subspace: rank ")
           << rank << " does not fit the model width " << width
           << " (expected 1 to " << width << ")";
  if (embedding.getRows())
    return embedding.emitError("nn-subspace: the token table is padded "
                               "(rows); run nn-subspace before "
                               "nn-pad-classes");

  // The stream starts at the tokens, or at tokens + a learned position
  // table.
  Value x = embedding.getResult();
  if (x.hasOneUse())
    if (auto add = dyn_cast<AddOp>(*x.user_begin()))
      for (Value operand : add->getOperands())
        if (auto read = operand.getDefiningOp<ParamOp>();
            read && operand != x && add.getType() == x.getType()) {
          auto type = cast<RankedTensorType>(read.getType());
          if (type.getRank() < 1 || type.getShape().back() != width)
            continue;
          if (failed(checkOwnRead(read, "the position table")))
            return failure();
          positions = read;
          positionAdd = add;
          x = add.getResult();
          break;
        }

  while (true) {
    stream.push_back(x);
    Continuation next;
    for (OpOperand &use : x.getUses()) {
      Operation *user = use.getOwner();
      Continuation found;
      if (isa<StageEndOp>(user)) {
        found.op = user;
        found.index = use.getOperandNumber();
      } else if (auto add = dyn_cast<AddOp>(user);
                 add && add.getType() != x.getType()) {
        // A broadcast would make the stream another type midway; the
        // edges after it would silently stay d wide.
        return add.emitError("nn-subspace: this addition to the residual "
                             "stream changes its type from ")
               << x.getType() << " to " << add.getType()
               << "; the rewrite needs the stream to keep its type";
      } else if (auto add = dyn_cast<AddOp>(user)) {
        Value other = add->getOperand(1 - use.getOperandNumber());
        if (other == x)
          return add.emitError("nn-subspace: the residual stream is added to "
                               "itself");
        FailureOr<std::optional<Projection>> projection =
            projectionOf(other, x);
        if (failed(projection))
          return failure();
        if (!*projection)
          return add.emitError("nn-subspace: this addition to the residual "
                               "stream adds something that is no projection "
                               "the rewrite recognises (nn.matmul of a "
                               "parameter weight, optionally plus a "
                               "parameter bias)");
        found.op = user;
        found.projection = **projection;
      } else {
        continue;
      }
      if (next.op) {
        // Reported at the later of the two, in program order.
        Operation *later = next.op->isBeforeInBlock(user) ? user : next.op;
        Operation *earlier = later == user ? next.op : user;
        InFlightDiagnostic diag = later->emitError(
            "nn-subspace: the residual stream forks: it goes on here and at "
            "another op");
        diag.attachNote(earlier->getLoc()) << "the other op";
        return diag;
      }
      next = found;
    }
    continuations.push_back(next);
    if (!next.op)
      break;
    x = next.op->getResult(next.index);
  }
  if (continuations.size() < 2)
    return embedding.emitError("nn-subspace: no residual addition follows "
                               "the token embedding: not a residual "
                               "transformer");
  return success();
}

void SubspaceRewrite::retypeParameter(ParamOp read) {
  auto parameter = read.getDeclaration();
  RankedTensorType type = narrowed(parameter.getType());
  parameter.setTypeAttr(TypeAttr::get(type));
  for (ParamOp other : reads[read.getName()])
    other.getResult().setType(type);
}

void SubspaceRewrite::rewrite() {
  MLIRContext *ctx = module.getContext();
  auto tableType = cast<RankedTensorType>(table.getType());
  auto tableDecl = table.getDeclaration();
  InitializerAttr tableInit = tableDecl.getInit();

  // The frozen basis and token table, after the last declaration.
  OpBuilder b(ctx);
  ParameterOp last;
  for (auto parameter : module.getOps<ParameterOp>())
    last = parameter;
  if (last)
    b.setInsertionPointAfter(last);
  else
    b.setInsertionPointToStart(module.getBody());
  auto basisType =
      RankedTensorType::get({width, rank}, tableType.getElementType());
  auto declare = [&](StringRef name, RankedTensorType type,
                     InitializerAttr init) {
    auto parameter =
        ParameterOp::create(b, tableDecl.getLoc(), name, type, init);
    parameter.setFrozen(true);
    parameter.setSeedAttr(b.getI64IntegerAttr(seed));
  };
  declare(kBasisName, basisType, InitializerAttr::getOrthonormal(ctx));
  declare(kTokensName, tableType, tableInit);

  // Narrow the trained parameters and the stream in place. Every use of the
  // token table but the embedding's (a tied head, through its own read or
  // the embedding's, after CSE) will read the lifted table.
  llvm::MapVector<Value, SmallVector<OpOperand *>> tiedUses;
  for (ParamOp read : reads[table.getName()])
    for (OpOperand &use : read->getUses())
      if (use.getOwner() != embedding.getOperation())
        tiedUses[read.getResult()].push_back(&use);
  retypeParameter(table);
  setNarrowType(embedding.getResult());
  if (positions) {
    retypeParameter(positions);
    setNarrowType(positionAdd.getResult());
  }
  for (Continuation &next : continuations) {
    if (!next.op)
      continue;
    if (Projection &p = next.projection; p.product) {
      retypeParameter(p.weight);
      setNarrowType(p.product.getResult());
      if (p.bias) {
        retypeParameter(p.bias);
        setNarrowType(p.biasAdd.getResult());
      }
    }
    setNarrowType(next.op->getResult(next.index));
  }

  Value ids = embedding.getIds();
  auto readFrozen = [&](OpBuilder &builder, Location loc, StringRef name,
                        Type type) {
    return ParamOp::create(builder, loc, type, name).getResult();
  };
  // Every other read of the stream reads x = T[ids] + c · Uᵀ, built right
  // before its first reader.
  for (auto [c, next] : llvm::zip(stream, continuations)) {
    SmallVector<OpOperand *> readers;
    for (OpOperand &use : c.getUses())
      if (use.getOwner() != next.op)
        readers.push_back(&use);
    if (readers.empty())
      continue;
    Operation *first = readers.front()->getOwner();
    for (OpOperand *use : readers)
      if (use->getOwner()->isBeforeInBlock(first))
        first = use->getOwner();
    OpBuilder at(first);
    Location loc =
        NameLoc::get(StringAttr::get(ctx, "subspace.lift"), first->getLoc());
    Value tokens = EmbeddingOp::create(
        at, loc, readFrozen(at, loc, kTokensName, tableType), ids,
        /*rows=*/nullptr);
    Value lifted =
        MatmulOp::create(at, loc, c, readFrozen(at, loc, kBasisName, basisType),
                         /*transpose_lhs=*/false,
                         /*transpose_rhs=*/true);
    Value full = AddOp::create(at, loc, tokens, lifted);
    for (OpOperand *use : readers)
      use->set(full);
  }

  // A tied head reads T + E_k · Uᵀ, built after the read it lifts.
  for (auto &[read, uses] : tiedUses) {
    OpBuilder at(read.getDefiningOp()->getNextNode());
    Location loc =
        NameLoc::get(StringAttr::get(ctx, "subspace.tied"), read.getLoc());
    Value lifted = MatmulOp::create(at, loc, read,
                                    readFrozen(at, loc, kBasisName, basisType),
                                    /*transpose_lhs=*/false,
                                    /*transpose_rhs=*/true);
    Value full = AddOp::create(
        at, loc, readFrozen(at, loc, kTokensName, tableType), lifted);
    for (OpOperand *use : uses)
      use->set(full);
  }
}

namespace {
struct NNSubspacePass
    : public tandem::nn::impl::NNSubspaceBase<NNSubspacePass> {
  using NNSubspaceBase::NNSubspaceBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>(function);
    if (!func) {
      module.emitError("nn-subspace: no function @") << function;
      return signalPassFailure();
    }
    SubspaceRewrite rewrite(module, func, rank, seed);
    if (failed(rewrite.analyse()))
      return signalPassFailure();
    rewrite.rewrite();
  }
};
} // namespace
