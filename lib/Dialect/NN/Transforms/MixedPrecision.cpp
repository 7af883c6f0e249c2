//===- MixedPrecision.cpp - nn-mixed-precision: low-precision compute ----===//
//
// Rewrites a forward function so the ops of a policy's low list run in its
// compute type (bf16, f16), the f32 list stays f32, and everything else
// follows its operands. Parameters keep their f32 type (master weights); a
// read that feeds low-precision work is cast once, right after the read, so
// mpmd-partition can hoist the parameter-only cast into the once-per-step
// prologue. The policy table is data (kPolicies): fp8 is a new row with its
// compute type and lists, not new code paths.
//
// Loss scaling is recorded on the function (`nn.loss_scale`, see
// MixedPrecision.h) for nn-autodiff and nn-optimizer, and dynamic scaling
// declares its state as `nn.parameter`s so checkpoints carry it.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/NN/Transforms/MixedPrecision.h"

#include "tandem/Dialect/NN/IR/NNOps.h"
#include "tandem/Dialect/NN/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>
#include <limits>

namespace tandem::nn {
#define GEN_PASS_DEF_NNMIXEDPRECISION
#include "tandem/Dialect/NN/Transforms/Passes.h.inc"
} // namespace tandem::nn

using namespace mlir;
using namespace tandem::nn;

//===----------------------------------------------------------------------===//
// The nn.loss_scale contract
//===----------------------------------------------------------------------===//

DictionaryAttr tandem::nn::buildLossScaleAttr(MLIRContext *context,
                                              const LossScale &scale) {
  Builder b(context);
  SmallVector<NamedAttribute> entries{
      b.getNamedAttr("scale", b.getF64FloatAttr(scale.scale))};
  if (scale.isDynamic()) {
    entries.push_back(b.getNamedAttr("factor", scale.factor));
    entries.push_back(b.getNamedAttr("good_steps", scale.goodSteps));
    entries.push_back(b.getNamedAttr(
        "growth_interval", b.getI64IntegerAttr(scale.growthInterval)));
  }
  return b.getDictionaryAttr(entries);
}

/// A rank-0 f32 `nn.parameter` named by `ref`, or an error on `func`.
static LogicalResult checkStateParameter(func::FuncOp func, StringRef pass,
                                         FlatSymbolRefAttr ref, StringRef key) {
  auto module = func->getParentOfType<ModuleOp>();
  auto parameter =
      module ? module.lookupSymbol<ParameterOp>(ref.getValue()) : ParameterOp();
  auto f32Scalar =
      RankedTensorType::get({}, Float32Type::get(func.getContext()));
  if (!parameter || parameter.getType() != f32Scalar)
    return func.emitError() << pass << ": '" << kLossScaleAttrName << "' key '"
                            << key << "' must name a rank-0 f32 nn.parameter, "
                            << "found " << ref;
  return success();
}

FailureOr<std::optional<LossScale>> tandem::nn::readLossScale(func::FuncOp func,
                                                              StringRef pass) {
  Attribute attr = func->getAttr(kLossScaleAttrName);
  if (!attr)
    return std::optional<LossScale>();
  auto fail = [&]() {
    return func.emitError()
           << pass << ": malformed '" << kLossScaleAttrName << "' " << attr
           << ": expected {scale = <positive f32-finite float>} or, for "
              "dynamic "
              "scaling, also factor = @<parameter>, good_steps = @<parameter>, "
              "growth_interval = <positive integer>";
  };
  auto dict = dyn_cast<DictionaryAttr>(attr);
  if (!dict)
    return fail();
  LossScale result;
  auto scale = dict.getAs<FloatAttr>("scale");
  if (!scale)
    return fail();
  result.scale = scale.getValueAsDouble();
  if (!(result.scale > 0.0) || !std::isfinite(static_cast<float>(result.scale)))
    return fail();
  result.factor = dict.getAs<FlatSymbolRefAttr>("factor");
  result.goodSteps = dict.getAs<FlatSymbolRefAttr>("good_steps");
  auto interval = dict.getAs<IntegerAttr>("growth_interval");
  size_t expectedSize = 1;
  if (result.factor || result.goodSteps || interval) {
    if (!result.factor || !result.goodSteps || !interval ||
        interval.getInt() < 1)
      return fail();
    result.growthInterval = interval.getInt();
    expectedSize = 4;
    if (failed(checkStateParameter(func, pass, result.factor, "factor")) ||
        failed(checkStateParameter(func, pass, result.goodSteps, "good_steps")))
      return failure();
  }
  if (dict.size() != expectedSize)
    return fail();
  return std::optional<LossScale>(result);
}

//===----------------------------------------------------------------------===//
// Policies
//===----------------------------------------------------------------------===//

namespace {

/// What a policy does. A new format (fp8) is a new row: its compute type
/// (casts to 8-bit floats saturate), its lists and its default scaling.
struct Policy {
  llvm::StringLiteral name;
  /// The low-precision compute type; null for a policy that changes nothing.
  Type (*computeType)(MLIRContext *);
  ArrayRef<llvm::StringLiteral> lowOps;
  ArrayRef<llvm::StringLiteral> f32Ops;
  /// The loss scaling `loss-scale=default` selects.
  llvm::StringLiteral defaultLossScale;
};

/// Matmuls are where low precision pays (tensor cores, half the bytes);
/// their products are accumulated wide and rounded once. Attention is two
/// matmuls around a softmax that every lowering keeps in f32 (the fused
/// kernels compute in f32 from narrow operands, the decomposition widens
/// them), so only its operands and output are narrow, as with PyTorch's
/// scaled_dot_product_attention under autocast.
constexpr llvm::StringLiteral kLowOps[] = {"nn.matmul", "nn.attention"};
/// Ops whose results lose too much in 8 or 11 bits of mantissa, or whose
/// range overflows f16: exponentials, normalizations, reductions, the loss
/// (PyTorch's autocast keeps the same families in f32).
constexpr llvm::StringLiteral kF32Ops[] = {
    "nn.softmax",       "nn.log_softmax", "nn.layer_norm",  "nn.rms_norm",
    "nn.cross_entropy", "nn.reduce_sum",  "nn.reduce_mean", "nn.reduce_max",
    "nn.exp",           "nn.log",         "nn.pow"};

Type getBF16(MLIRContext *context) { return BFloat16Type::get(context); }
Type getF16(MLIRContext *context) { return Float16Type::get(context); }

const Policy kPolicies[] = {
    {"bf16", getBF16, kLowOps, kF32Ops, "none"},
    // f16's range (max 65504, smallest normal 6e-5) underflows small
    // gradients without a loss scale.
    {"fp16", getF16, kLowOps, kF32Ops, "dynamic"},
    {"f32", nullptr, {}, {}, "none"},
};

/// Ops that do not compute and so cannot be listed: reads, constants,
/// casts, markers and declarations keep the types they have.
constexpr llvm::StringLiteral kStructuralOps[] = {
    "nn.parameter", "nn.param", "nn.constant", "nn.cast", "nn.stage_end"};

constexpr double kDefaultInitialScale = 65536.0;
constexpr int64_t kDefaultGrowthInterval = 2000;

enum class Precision { Low, F32, Follow };

struct NNMixedPrecisionPass
    : tandem::nn::impl::NNMixedPrecisionBase<NNMixedPrecisionPass> {
  using NNMixedPrecisionBase::NNMixedPrecisionBase;
  void runOnOperation() override;

private:
  LogicalResult parseLists(ModuleOp module, const Policy &policy);
  /// Parses `spec` into `result` (std::nullopt for none).
  LogicalResult parseLossScale(ModuleOp module, StringRef spec,
                               std::optional<LossScale> &result, bool &dynamic);
  void rewrite(func::FuncOp func, Type compute);
  /// `value` with element type `elementType`, through at most one cast.
  Value convert(Value value, Type elementType);

  llvm::StringMap<Precision> precision;
  /// Casts the pass created, by (source, element type), and their sources.
  llvm::DenseMap<std::pair<Value, Type>, Value> casts;
  llvm::DenseMap<Value, Value> castSource;
};

} // namespace

LogicalResult NNMixedPrecisionPass::parseLists(ModuleOp module,
                                               const Policy &policy) {
  for (StringRef op : policy.lowOps)
    precision[op] = Precision::Low;
  for (StringRef op : policy.f32Ops)
    precision[op] = Precision::F32;
  MLIRContext *context = module.getContext();
  llvm::StringSet<> named;
  auto move = [&](ArrayRef<std::string> ops, StringRef option,
                  Precision to) -> LogicalResult {
    for (const std::string &op : ops) {
      std::optional<RegisteredOperationName> registered =
          RegisteredOperationName::lookup(op, context);
      if (!registered || registered->getDialectNamespace() != "nn")
        return module.emitError("nn-mixed-precision: unknown op '")
               << op << "' in " << option << " (expected nn ops such as "
               << "nn.matmul)";
      if (llvm::is_contained(kStructuralOps, op))
        return module.emitError("nn-mixed-precision: '")
               << op << "' in " << option
               << " is not a compute op; its result type follows its "
                  "definition";
      if (!named.insert(op).second)
        return module.emitError("nn-mixed-precision: '")
               << op << "' is named in both low-precision-ops and f32-ops";
      precision[op] = to;
    }
    return success();
  };
  if (failed(move(lowPrecisionOps, "low-precision-ops", Precision::Low)) ||
      failed(move(f32Ops, "f32-ops", Precision::F32)))
    return failure();
  return success();
}

LogicalResult
NNMixedPrecisionPass::parseLossScale(ModuleOp module, StringRef spec,
                                     std::optional<LossScale> &result,
                                     bool &dynamic) {
  auto fail = [&]() {
    return module.emitError("nn-mixed-precision: invalid loss-scale '")
           << spec
           << "'; expected none, static:<s>, dynamic, dynamic:<initial> or "
              "dynamic:<initial>:<interval> with a positive scale that is "
              "finite in f32 and an interval >= 1";
  };
  SmallVector<StringRef> parts;
  spec.split(parts, ':');
  StringRef kind = parts.front();
  dynamic = kind == "dynamic";
  if (kind == "none" && parts.size() == 1) {
    result = std::nullopt;
    return success();
  }
  if (!(kind == "static" && parts.size() == 2) &&
      !(dynamic && parts.size() <= 3))
    return fail();
  LossScale scale;
  scale.scale = kDefaultInitialScale;
  scale.growthInterval = kDefaultGrowthInterval;
  if (parts.size() >= 2 && parts[1].getAsDouble(scale.scale))
    return fail();
  if (!(scale.scale > 0.0) || !std::isfinite(static_cast<float>(scale.scale)))
    return fail();
  if (parts.size() == 3 && (parts[2].getAsInteger(10, scale.growthInterval) ||
                            scale.growthInterval < 1))
    return fail();
  if (!dynamic)
    scale.growthInterval = 0;
  result = scale;
  return success();
}

Value NNMixedPrecisionPass::convert(Value value, Type elementType) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getElementType() == elementType)
    return value;
  // Convert a value this pass cast from its source, so no cast reads a
  // cast and a value that went f32 → bf16 comes back as the f32 original.
  if (Value source = castSource.lookup(value))
    value = source;
  type = cast<RankedTensorType>(value.getType());
  if (type.getElementType() == elementType)
    return value;
  auto [it, inserted] = casts.try_emplace({value, elementType}, Value());
  if (!inserted)
    return it->second;
  OpBuilder builder(value.getContext());
  if (Operation *def = value.getDefiningOp())
    builder.setInsertionPointAfter(def);
  else
    builder.setInsertionPointToStart(cast<BlockArgument>(value).getOwner());
  // A cast to an 8-bit float must say what happens beyond its range;
  // saturating keeps a large activation finite.
  BoolAttr saturate;
  if (isFloat8(elementType))
    saturate = builder.getBoolAttr(true);
  Value result = CastOp::create(builder, value.getLoc(),
                                type.clone(elementType), value, saturate);
  it->second = result;
  castSource[result] = value;
  return result;
}

static bool isFloatTensorValue(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && isa<FloatType>(type.getElementType());
}

/// A parameter read, or a view of one (reshape, broadcast_to, transpose:
/// how an importer shapes a bias for its add).
static bool isMasterWeight(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (isa<ParamOp>(def))
      return true;
    if (!isa<ReshapeOp, BroadcastToOp, TransposeOp>(def))
      return false;
    value = def->getOperand(0);
  }
  return false;
}

/// The type a follow op runs in: its float operands' when they agree, f32
/// (the wider) when they do not. A master weight is f32 for the optimizer's
/// sake, not as a claim on the compute's precision, so it does not widen an
/// op whose other operands are narrow: a bias added to a bf16 product is
/// cast to bf16, as PyTorch's autocast casts a linear layer's bias with its
/// weight. An op that reads only master weights keeps their type.
static Type followedType(Operation *op, Type original) {
  SmallVector<Value> floats;
  for (Value operand : op->getOperands())
    if (isFloatTensorValue(operand))
      floats.push_back(operand);
  bool onlyWeights = llvm::all_of(floats, isMasterWeight);
  Type common;
  bool agree = true;
  for (Value operand : floats) {
    if (!onlyWeights && isMasterWeight(operand))
      continue;
    Type t = cast<RankedTensorType>(operand.getType()).getElementType();
    agree &= !common || common == t;
    common = common ? common : t;
  }
  return common && agree ? common : original;
}

void NNMixedPrecisionPass::rewrite(func::FuncOp func, Type compute) {
  Type f32 = Float32Type::get(func.getContext());
  Block &body = func.getBody().front();
  SmallVector<Operation *> ops;
  for (Operation &op : body)
    ops.push_back(&op);
  for (Operation *op : ops) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (auto [operand, type] :
           llvm::zip(ret->getOpOperands(), func.getResultTypes()))
        if (operand.get().getType() != type &&
            isFloatTensorValue(operand.get()))
          operand.set(convert(operand.get(),
                              cast<RankedTensorType>(type).getElementType()));
      continue;
    }
    // Reads, constants and the author's own casts keep their types.
    if (isa<ParamOp, ConstantOp, CastOp>(op))
      continue;
    // The identity marker passes each value through in its own type.
    if (isa<StageEndOp>(op)) {
      for (auto [operand, result] :
           llvm::zip(op->getOperands(), op->getResults()))
        result.setType(operand.getType());
      continue;
    }
    // The op's element type in the original program: its float results
    // have not been retyped yet.
    Type original;
    for (Value result : op->getResults())
      if (isFloatTensorValue(result)) {
        original = cast<RankedTensorType>(result.getType()).getElementType();
        break;
      }
    // Only f32 work changes: f64 or already-narrow ops were chosen by the
    // model's author.
    if (!original || original != f32)
      continue;
    Type target = original;
    auto it = precision.find(op->getName().getStringRef());
    Precision kind = it == precision.end() ? Precision::Follow : it->second;
    if (kind == Precision::Low) {
      target = compute;
    } else if (kind == Precision::Follow) {
      target = followedType(op, original);
    }
    for (OpOperand &operand : op->getOpOperands())
      if (isFloatTensorValue(operand.get()))
        operand.set(convert(operand.get(), target));
    // Attention's log-sum-exp is f32 whatever its operands' type.
    auto attention = dyn_cast<AttentionOp>(op);
    for (Value result : op->getResults())
      if (isFloatTensorValue(result) &&
          !(attention && result == attention.getLse()))
        result.setType(cast<RankedTensorType>(result.getType()).clone(target));
  }
}

void NNMixedPrecisionPass::runOnOperation() {
  ModuleOp module = getOperation();
  const Policy *row = llvm::find_if(
      kPolicies, [&](const Policy &p) { return p.name == policy; });
  if (row == std::end(kPolicies)) {
    module.emitError("nn-mixed-precision: unknown policy '")
        << policy << "'; expected bf16, fp16 or f32";
    return signalPassFailure();
  }
  if (failed(parseLists(module, *row)))
    return signalPassFailure();
  StringRef spec = lossScale == "default" ? StringRef(row->defaultLossScale)
                                          : StringRef(lossScale);
  std::optional<LossScale> scale;
  bool dynamic = false;
  if (failed(parseLossScale(module, spec, scale, dynamic)))
    return signalPassFailure();

  auto func = module.lookupSymbol<func::FuncOp>(function);
  if (!func) {
    module.emitError("nn-mixed-precision: no function @")
        << function << " (option 'function')";
    return signalPassFailure();
  }
  if (func.isExternal() || !func.getBody().hasOneBlock()) {
    func.emitError("nn-mixed-precision: @")
        << function << " must have a body of one block";
    return signalPassFailure();
  }
  if (func->hasAttr(kLossScaleAttrName)) {
    func.emitError("nn-mixed-precision: @")
        << function << " already has '" << kLossScaleAttrName
        << "' (the pass ran twice?)";
    return signalPassFailure();
  }

  MLIRContext *context = &getContext();
  if (row->computeType)
    rewrite(func, row->computeType(context));

  if (!scale)
    return;
  if (dynamic) {
    // The state is declared like the optimizer's (nn-optimizer leaves these
    // two to this pass and updates them), after the last parameter.
    SymbolTable symbols(module);
    for (StringRef name : {"opt.loss_scale", "opt.good_steps"})
      if (Operation *existing = symbols.lookup(name)) {
        existing->emitError("nn-mixed-precision: the module already declares @")
            << name << ", which dynamic loss scaling declares";
        return signalPassFailure();
      }
    OpBuilder builder(context);
    ParameterOp last;
    for (auto parameter : module.getOps<ParameterOp>())
      last = parameter;
    if (last)
      builder.setInsertionPointAfter(last);
    else
      builder.setInsertionPointToStart(module.getBody());
    auto type = RankedTensorType::get({}, builder.getF32Type());
    // Initializers hold no arbitrary constant, so the parameter is the
    // scale relative to the initial one: it starts at 1.
    auto factor = ParameterOp::create(builder, func.getLoc(), "opt.loss_scale",
                                      type, InitializerAttr::getOnes(context));
    auto good = ParameterOp::create(builder, func.getLoc(), "opt.good_steps",
                                    type, InitializerAttr::getZeros(context));
    scale->factor = FlatSymbolRefAttr::get(factor.getSymNameAttr());
    scale->goodSteps = FlatSymbolRefAttr::get(good.getSymNameAttr());
  }
  func->setAttr(kLossScaleAttrName, buildLossScaleAttr(context, *scale));
}
