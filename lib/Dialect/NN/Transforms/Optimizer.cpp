//===- Optimizer.cpp - nn-optimizer: a training step from gradients -------===//
//
// Turns the gradient function of nn-autodiff (loss, then one gradient per
// parameter named in `nn.gradients`) into a pure training step: a copy of
// the gradient function's body followed by the update of every parameter
// (sgd, momentum or adamw; weight-decay groups; global-norm clipping; a
// learning-rate schedule driven by a step counter). Optimizer state is
// declared as zero-initialized `nn.parameter`s with the prefix `opt.`; the
// step returns the new values and lists them in `nn.updates`. See the pass
// description in Passes.td and docs/training.md for the exact formulas.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/NN/IR/NNOps.h"
#include "tandem/Dialect/NN/Transforms/MixedPrecision.h"
#include "tandem/Dialect/NN/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

namespace tandem::nn {
#define GEN_PASS_DEF_NNOPTIMIZER
#include "tandem/Dialect/NN/Transforms/Passes.h.inc"
} // namespace tandem::nn

using namespace mlir;
using namespace tandem::nn;

namespace {

enum class OptimizerKind { Sgd, Momentum, AdamW };
enum class DecayGroup { Matrices, All, None };
enum class Schedule { Constant, WarmupCosine };

/// Name of the discardable unit attribute on every op the pass adds.
constexpr llvm::StringLiteral kOptimizerAttr = "nn.optimizer";
/// Added to the global norm before dividing, as PyTorch's clip_grad_norm_.
constexpr double kClipEpsilon = 1e-6;

/// One parameter being trained: its declaration and its (possibly clipped)
/// gradient in the training step.
struct Trained {
  ParameterOp parameter;
  Value gradient;
  bool decays = false;
};

/// Builds the update ops. Every op is created through this class so it can
/// be tagged `nn.optimizer`.
class UpdateBuilder {
public:
  UpdateBuilder(OpBuilder &builder, Location loc)
      : builder(builder), loc(loc), f32(builder.getF32Type()) {}

  template <typename OpTy, typename... Args> Value make(Args &&...args) {
    auto op = OpTy::create(builder, loc, std::forward<Args>(args)...);
    op->setAttr(kOptimizerAttr, builder.getUnitAttr());
    return op->getResult(0);
  }

  /// A rank-0 f32 constant.
  Value scalar(double value) {
    auto type = RankedTensorType::get({}, f32);
    return make<ConstantOp>(
        type, DenseElementsAttr::get(type, static_cast<float>(value)));
  }
  Value read(ParameterOp parameter) {
    return make<ParamOp>(parameter.getTensorType(), parameter.getSymName());
  }
  Value add(Value a, Value b) { return make<AddOp>(a, b); }
  Value sub(Value a, Value b) { return make<SubOp>(a, b); }
  Value mul(Value a, Value b) { return make<MulOp>(a, b); }
  Value div(Value a, Value b) { return make<DivOp>(a, b); }
  Value min(Value a, Value b) { return make<MinimumOp>(a, b); }
  Value max(Value a, Value b) { return make<MaximumOp>(a, b); }
  Value sqrt(Value a) { return make<SqrtOp>(a); }
  Value select(Value cond, Value a, Value b) {
    return make<SelectOp>(cond, a, b);
  }

  /// The sum of `value`·0 over every element, as a rank-0 f32 tensor: 0
  /// when every element is finite, NaN otherwise (∞·0 and NaN·0 are NaN).
  /// Unlike a sum of squares, it cannot overflow on large finite values.
  Value nonFiniteProbe(Value value) {
    Value zero = scalar(0.0);
    Value product = mul(value, zero);
    int64_t rank = cast<RankedTensorType>(value.getType()).getRank();
    if (rank == 0)
      return product;
    auto axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    return make<ReduceSumOp>(product, builder.getDenseI64ArrayAttr(axes),
                             /*keepdims=*/UnitAttr());
  }

  /// `value` converted to f32 (unchanged when it already is).
  Value toF32(Value value) { return castTo(value, f32); }
  /// `value` converted to the element type `elementType`.
  Value castTo(Value value, Type elementType) {
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getElementType() == elementType)
      return value;
    // A cast to an 8-bit float must say what happens to large values.
    BoolAttr saturate;
    if (elementType.getIntOrFloatBitWidth() == 8)
      saturate = builder.getBoolAttr(true);
    return make<CastOp>(type.clone(elementType), value, saturate);
  }

  /// Sum of squares of every element, as a rank-0 f32 tensor.
  Value sumOfSquares(Value value) {
    Value squared = mul(value, value);
    int64_t rank = cast<RankedTensorType>(value.getType()).getRank();
    if (rank == 0)
      return squared;
    auto axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    return make<ReduceSumOp>(squared, builder.getDenseI64ArrayAttr(axes),
                             /*keepdims=*/UnitAttr());
  }

  /// 1 − β^n for n = `count` (a rank-0 f32 tensor), computed as
  /// −expm1(n·ln β) = −2h/(1 − h) with h = tanh(n·ln β / 2): the direct
  /// form 1 − exp(n·ln β) loses most digits of f32 when β is close to 1
  /// (a relative error up to 1e-4 for β = 0.999 in the first steps).
  Value oneMinusPower(double beta, Value count) {
    if (beta == 0.0)
      return scalar(1.0);
    Value halfLog = scalar(std::log(beta) / 2.0);
    Value h = make<TanhOp>(mul(count, halfLog));
    Value minusTwo = scalar(-2.0);
    Value numerator = mul(h, minusTwo);
    Value one = scalar(1.0);
    return div(numerator, sub(one, h));
  }

  OpBuilder &getBuilder() { return builder; }

private:
  OpBuilder &builder;
  Location loc;
  Type f32;
};

struct NNOptimizerPass : tandem::nn::impl::NNOptimizerBase<NNOptimizerPass> {
  using NNOptimizerBase::NNOptimizerBase;

  void runOnOperation() override;

private:
  LogicalResult parseOptions(ModuleOp module);
  /// The scheduled learning rate for step counter `step`.
  Value learningRate(UpdateBuilder &b, Value step);

  OptimizerKind kind = OptimizerKind::AdamW;
  DecayGroup group = DecayGroup::Matrices;
  Schedule sched = Schedule::Constant;
  double decayRate = 0.0;
};

LogicalResult NNOptimizerPass::parseOptions(ModuleOp module) {
  auto fail = [&]() { return module.emitError("nn-optimizer: "); };
  if (optimizer == "sgd")
    kind = OptimizerKind::Sgd;
  else if (optimizer == "momentum")
    kind = OptimizerKind::Momentum;
  else if (optimizer == "adamw")
    kind = OptimizerKind::AdamW;
  else
    return fail() << "unknown optimizer '" << optimizer
                  << "'; expected sgd, momentum or adamw";

  if (decay == "matrices")
    group = DecayGroup::Matrices;
  else if (decay == "all")
    group = DecayGroup::All;
  else if (decay == "none")
    group = DecayGroup::None;
  else
    return fail() << "unknown decay group '" << decay
                  << "'; expected matrices, all or none";

  if (schedule == "constant")
    sched = Schedule::Constant;
  else if (schedule == "warmup-cosine")
    sched = Schedule::WarmupCosine;
  else
    return fail() << "unknown schedule '" << schedule
                  << "'; expected constant or warmup-cosine";

  // `!(x > 0)` also rejects NaN.
  if (!(lr > 0.0) || !std::isfinite(lr))
    return fail() << "lr must be positive and finite, found " << lr;
  auto checkCoefficient = [&](StringRef name, double value) -> LogicalResult {
    if (!(value >= 0.0 && value < 1.0))
      return fail() << name << " must be in [0, 1), found " << value;
    return success();
  };
  if (kind == OptimizerKind::Momentum &&
      failed(checkCoefficient("momentum", momentum)))
    return failure();
  if (kind == OptimizerKind::AdamW) {
    if (failed(checkCoefficient("beta1", beta1)) ||
        failed(checkCoefficient("beta2", beta2)))
      return failure();
    if (!(eps > 0.0) || !std::isfinite(eps))
      return fail() << "eps must be positive and finite, found " << eps;
  }
  if (weightDecay == -1.0)
    decayRate = kind == OptimizerKind::AdamW ? 0.01 : 0.0;
  else if (!(weightDecay >= 0.0) || !std::isfinite(weightDecay))
    return fail() << "weight-decay must be non-negative and finite (or -1 "
                     "for the optimizer's default), found "
                  << weightDecay;
  else
    decayRate = weightDecay;
  if (!(clipNorm >= 0.0) || !std::isfinite(clipNorm))
    return fail() << "clip-norm must be non-negative and finite (0 turns "
                     "clipping off), found "
                  << clipNorm;

  if (sched == Schedule::WarmupCosine) {
    if (totalSteps <= 0)
      return fail() << "schedule warmup-cosine needs total-steps > 0, found "
                    << static_cast<int64_t>(totalSteps);
    if (warmupSteps < 0 || warmupSteps > totalSteps)
      return fail() << "warmup-steps must be in [0, total-steps = "
                    << static_cast<int64_t>(totalSteps) << "], found "
                    << static_cast<int64_t>(warmupSteps);
    if (!(minLr >= 0.0) || !(minLr <= lr))
      return fail() << "min-lr must be in [0, lr = " << lr << "], found "
                    << minLr;
  }
  return success();
}

Value NNOptimizerPass::learningRate(UpdateBuilder &b, Value step) {
  if (sched == Schedule::Constant)
    return b.scalar(lr);
  double warmup = static_cast<double>(warmupSteps);
  double total = static_cast<double>(totalSteps);
  // Progress p of the cosine phase, clamped to [0, 1]: 0 during warmup, 1
  // from total-steps on.
  // (Every operand is built in its own statement so the IR's order does
  // not depend on the compiler's argument evaluation order.)
  Value progress;
  if (total > warmup) {
    Value start = b.scalar(warmup);
    Value length = b.scalar(total - warmup);
    progress = b.div(b.sub(step, start), length);
  } else { // No cosine phase: p jumps from 0 to 1 at t = total-steps.
    Value start = b.scalar(warmup - 1.0);
    progress = b.sub(step, start);
  }
  Value zero = b.scalar(0.0);
  progress = b.max(progress, zero);
  Value one = b.scalar(1.0);
  progress = b.min(progress, one);
  // min-lr + (lr − min-lr)/2·(1 + cos(π·p)), which is lr during warmup.
  Value pi = b.scalar(llvm::numbers::pi);
  Value cosine = b.make<CosOp>(b.mul(progress, pi));
  Value amplitude = b.scalar((lr - minLr) / 2.0);
  Value floor = b.scalar(minLr);
  Value rate = b.add(floor, b.mul(amplitude, b.add(one, cosine)));
  if (warmupSteps == 0)
    return rate;
  // Warmup factor min(1, (t+1)/W).
  Value steps = b.scalar(warmup);
  Value factor = b.min(b.div(b.add(step, one), steps), one);
  return b.mul(rate, factor);
}

void NNOptimizerPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (failed(parseOptions(module)))
    return signalPassFailure();

  SymbolTable symbols(module);
  auto gradFn = symbols.lookup<func::FuncOp>(function);
  if (!gradFn) {
    module.emitError("nn-optimizer: no function @")
        << function << " (the gradient function, option 'function')";
    return signalPassFailure();
  }
  if (Operation *existing = symbols.lookup(result)) {
    existing->emitError("nn-optimizer: the module already has a symbol @")
        << result << " (the training step to create, option 'result')";
    return signalPassFailure();
  }
  // nn-mixed-precision's loss scaling, on the gradient function; its
  // dynamic state is the only `opt.` symbol that may already exist.
  FailureOr<std::optional<LossScale>> lossScale =
      readLossScale(gradFn, "nn-optimizer");
  if (failed(lossScale))
    return signalPassFailure();
  llvm::StringSet<> lossScaleState;
  if (*lossScale && (*lossScale)->isDynamic()) {
    lossScaleState.insert((*lossScale)->factor.getValue());
    lossScaleState.insert((*lossScale)->goodSteps.getValue());
  }
  for (Operation &op : module.getBody()->getOperations()) {
    auto name = op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
    if (name && name.getValue().starts_with("opt.") &&
        !lossScaleState.contains(name.getValue())) {
      op.emitError("nn-optimizer: the module already declares @")
          << name.getValue()
          << "; the prefix 'opt.' is reserved for optimizer state";
      return signalPassFailure();
    }
  }

  // The gradient function's contract (docs/training.md).
  if (gradFn.isExternal() || !gradFn.getBody().hasOneBlock()) {
    gradFn.emitError("nn-optimizer: gradient function @")
        << function << " must have a body of one block";
    return signalPassFailure();
  }
  auto gradients = gradFn->getAttrOfType<ArrayAttr>("nn.gradients");
  if (!gradients) {
    gradFn.emitError("nn-optimizer: function @")
        << function
        << " has no 'nn.gradients' attribute naming the parameter of each "
           "gradient result (run nn-autodiff first)";
    return signalPassFailure();
  }
  FunctionType gradType = gradFn.getFunctionType();
  if (gradType.getNumResults() != gradients.size() + 1) {
    gradFn.emitError("nn-optimizer: function @")
        << function << " returns " << gradType.getNumResults()
        << " value(s) but 'nn.gradients' names " << gradients.size()
        << " parameter(s); expected the loss followed by one gradient per "
           "parameter";
    return signalPassFailure();
  }
  auto lossType = dyn_cast<RankedTensorType>(gradType.getResult(0));
  if (!lossType || lossType.getRank() != 0 ||
      !isa<FloatType>(lossType.getElementType())) {
    gradFn.emitError("nn-optimizer: result #0 of @")
        << function << " must be a rank-0 float loss, found "
        << gradType.getResult(0);
    return signalPassFailure();
  }

  // Declaration order of the module's parameters: the canonical order.
  llvm::DenseMap<Operation *, unsigned> declarationIndex;
  ParameterOp lastParameter;
  for (auto parameter : module.getOps<ParameterOp>()) {
    declarationIndex[parameter] = declarationIndex.size();
    lastParameter = parameter;
  }

  SmallVector<Trained> trained;
  llvm::StringSet<> seen;
  for (auto [i, entry] : llvm::enumerate(gradients)) {
    auto ref = dyn_cast<FlatSymbolRefAttr>(entry);
    if (!ref) {
      gradFn.emitError("nn-optimizer: 'nn.gradients' entry #")
          << i << " must be a flat symbol reference, found " << entry;
      return signalPassFailure();
    }
    auto parameter = symbols.lookup<ParameterOp>(ref.getValue());
    if (!parameter) {
      gradFn.emitError("nn-optimizer: 'nn.gradients' entry #")
          << i << " names " << ref << ", which is not an nn.parameter";
      return signalPassFailure();
    }
    if (parameter.getFrozen()) {
      gradFn.emitError("nn-optimizer: 'nn.gradients' names ")
          << ref << ", a frozen parameter (nothing trains it)";
      return signalPassFailure();
    }
    if (!seen.insert(ref.getValue()).second) {
      gradFn.emitError("nn-optimizer: 'nn.gradients' names ")
          << ref << " twice";
      return signalPassFailure();
    }
    if (!trained.empty() && declarationIndex[parameter] <
                                declarationIndex[trained.back().parameter]) {
      gradFn.emitError("nn-optimizer: 'nn.gradients' must list parameters in "
                       "module declaration order (the canonical order), but ")
          << ref << " follows @" << trained.back().parameter.getSymName();
      return signalPassFailure();
    }
    Type gradientType = gradType.getResult(i + 1);
    if (gradientType != parameter.getType()) {
      gradFn.emitError("nn-optimizer: result #")
          << i + 1 << " of @" << function << " is the gradient of " << ref
          << " and must have its type " << parameter.getType() << ", found "
          << gradientType;
      return signalPassFailure();
    }
    Trained t;
    t.parameter = parameter;
    StringRef name = parameter.getSymName();
    t.decays = decayRate > 0.0 &&
               (group == DecayGroup::All ||
                (group == DecayGroup::Matrices &&
                 parameter.getTensorType().getRank() >= 2)) &&
               llvm::none_of(noDecay, [&](const std::string &substring) {
                 return name.contains(substring);
               });
    trained.push_back(t);
  }

  MLIRContext *context = &getContext();
  OpBuilder builder(context);
  Location loc = gradFn.getLoc();
  auto f32 = builder.getF32Type();

  // Optimizer state, declared after the last parameter (or first in the
  // module), zeros. The step counter is f32: it counts exactly up to 2^24
  // (16.7M) steps, past which t + 1 rounds back to t; one f32 type for all
  // state keeps the step a float tensor like every other parameter.
  if (lastParameter)
    builder.setInsertionPointAfter(lastParameter);
  else
    builder.setInsertionPointToStart(module.getBody());
  auto zeros = InitializerAttr::getZeros(context);
  auto declare = [&](const Twine &name, RankedTensorType type) {
    return ParameterOp::create(builder, loc, name.str(), type, zeros);
  };
  ParameterOp stepParam = declare("opt.step", RankedTensorType::get({}, f32));
  struct State {
    ParameterOp first, second;
  };
  SmallVector<State> states;
  for (Trained &t : trained) {
    auto type = t.parameter.getTensorType().clone(f32);
    StringRef name = t.parameter.getSymName();
    State state;
    if (kind == OptimizerKind::Momentum) {
      state.first = declare("opt.mom." + name, type);
    } else if (kind == OptimizerKind::AdamW) {
      state.first = declare("opt.m." + name, type);
      state.second = declare("opt.v." + name, type);
    }
    states.push_back(state);
  }

  // The training step: same arguments, a copy of the gradient function's
  // body (keeping every attribute, so the autodiff tags survive).
  builder.setInsertionPointAfter(gradFn);
  auto step =
      func::FuncOp::create(builder, gradFn.getLoc(), result,
                           builder.getFunctionType(gradType.getInputs(), {}));
  if (ArrayAttr argAttrs = gradFn.getAllArgAttrs())
    step.setAllArgAttrs(argAttrs);
  Block *body = step.addEntryBlock();
  IRMapping mapping;
  for (auto [from, to] : llvm::zip(gradFn.getArguments(), body->getArguments()))
    mapping.map(from, to);
  builder.setInsertionPointToEnd(body);
  Operation *terminator = gradFn.getBody().front().getTerminator();
  for (Operation &op : gradFn.getBody().front().without_terminator())
    builder.clone(op, mapping);
  SmallVector<Value> gradResults;
  for (Value operand : terminator->getOperands())
    gradResults.push_back(mapping.lookupOrDefault(operand));
  Value loss = gradResults.front();

  UpdateBuilder b(builder, loc);
  for (auto [t, gradient] : llvm::zip(trained, llvm::drop_begin(gradResults)))
    t.gradient = b.toF32(gradient);

  // Loss scaling: `ok` is 1 when every gradient is finite, 0 otherwise; the
  // probes are added in canonical order like the clipping norm's squares,
  // so a partitioned program sums per-stage partial probes in the same
  // order and computes the decision once. Gradients are unscaled here,
  // after the microbatch accumulation (these are step ops).
  Value ok, lossScaleFactor;
  if (*lossScale) {
    Value probe;
    for (Trained &t : trained) {
      Value p = b.nonFiniteProbe(t.gradient);
      probe = probe ? b.add(probe, p) : p;
    }
    Value zero = b.scalar(0.0);
    ok = probe ? b.make<GreaterEqualOp>(probe, zero) : b.scalar(1.0);
    Value scale = b.scalar((*lossScale)->scale);
    if ((*lossScale)->isDynamic()) {
      auto f32Scalar = RankedTensorType::get({}, f32);
      lossScaleFactor =
          b.make<ParamOp>(f32Scalar, (*lossScale)->factor.getValue());
      scale = b.mul(scale, lossScaleFactor);
    }
    for (Trained &t : trained)
      t.gradient = b.div(t.gradient, scale);
  }

  // Global-norm clipping: squared norms added in canonical order.
  if (clipNorm > 0.0 && !trained.empty()) {
    Value total;
    for (Trained &t : trained) {
      Value squares = b.sumOfSquares(t.gradient);
      total = total ? b.add(total, squares) : squares;
    }
    Value norm = b.sqrt(total);
    Value epsilon = b.scalar(kClipEpsilon);
    Value threshold = b.scalar(clipNorm);
    Value one = b.scalar(1.0);
    Value scale = b.min(one, b.div(threshold, b.add(norm, epsilon)));
    for (Trained &t : trained)
      t.gradient = b.mul(t.gradient, scale);
  }

  Value counter = b.read(stepParam);
  Value increment = b.scalar(1.0);
  Value nextCounter = b.add(counter, increment);
  Value rate = learningRate(b, counter);
  Value decayStep;
  if (llvm::any_of(trained, [](const Trained &t) { return t.decays; })) {
    Value wd = b.scalar(decayRate);
    decayStep = b.mul(rate, wd);
  }
  Value correction1, correction2;
  if (kind == OptimizerKind::AdamW) {
    correction1 = b.oneMinusPower(beta1, nextCounter);
    correction2 = b.oneMinusPower(beta2, nextCounter);
  }

  SmallVector<Value> results{loss};
  SmallVector<Attribute> updates;
  SmallVector<Value> stateResults;
  SmallVector<Attribute> stateUpdates{FlatSymbolRefAttr::get(stepParam)};
  stateResults.push_back(nextCounter);
  // The value before the step of every result after the loss, in result
  // order, for skipping a step with loss scaling.
  SmallVector<Value> parameterOlds, stateOlds{counter};
  for (auto [t, state] : llvm::zip(trained, states)) {
    Value gradient = t.gradient;
    Value direction;
    switch (kind) {
    case OptimizerKind::Sgd:
      direction = gradient;
      break;
    case OptimizerKind::Momentum: {
      Value mu = b.scalar(momentum);
      Value old = b.read(state.first);
      stateOlds.push_back(old);
      Value buffer = b.add(b.mul(old, mu), gradient);
      stateResults.push_back(buffer);
      stateUpdates.push_back(FlatSymbolRefAttr::get(state.first));
      direction = buffer;
      break;
    }
    case OptimizerKind::AdamW: {
      Value b1 = b.scalar(beta1), oneMinusB1 = b.scalar(1.0 - beta1);
      Value oldM = b.read(state.first);
      stateOlds.push_back(oldM);
      Value m = b.mul(oldM, b1);
      m = b.add(m, b.mul(gradient, oneMinusB1));
      Value b2 = b.scalar(beta2), oneMinusB2 = b.scalar(1.0 - beta2);
      Value oldV = b.read(state.second);
      stateOlds.push_back(oldV);
      Value v = b.mul(oldV, b2);
      Value squared = b.mul(gradient, gradient);
      v = b.add(v, b.mul(squared, oneMinusB2));
      stateResults.push_back(m);
      stateUpdates.push_back(FlatSymbolRefAttr::get(state.first));
      stateResults.push_back(v);
      stateUpdates.push_back(FlatSymbolRefAttr::get(state.second));
      Value epsilon = b.scalar(eps);
      Value denominator = b.add(b.sqrt(b.div(v, correction2)), epsilon);
      direction = b.div(b.div(m, correction1), denominator);
      break;
    }
    }
    Type elementType = t.parameter.getTensorType().getElementType();
    Value raw = b.read(t.parameter);
    parameterOlds.push_back(raw);
    Value current = b.toF32(raw);
    Value next = current;
    if (t.decays)
      next = b.sub(next, b.mul(current, decayStep));
    next = b.sub(next, b.mul(direction, rate));
    results.push_back(b.castTo(next, elementType));
    updates.push_back(FlatSymbolRefAttr::get(t.parameter));
  }
  llvm::append_range(results, stateResults);
  llvm::append_range(updates, stateUpdates);

  if (ok) {
    // A non-finite gradient skips the whole step: every result keeps the
    // value it had, bit for bit (the step counter included).
    SmallVector<Value> olds(parameterOlds);
    llvm::append_range(olds, stateOlds);
    for (auto [result, old] : llvm::zip(llvm::drop_begin(results), olds))
      result = b.select(ok, result, old);
  }
  if (lossScaleFactor) {
    // Dynamic scaling: after `growth_interval` finite steps in a row the
    // scale doubles and the count restarts; a skipped step halves it.
    Value good = b.make<ParamOp>(lossScaleFactor.getType(),
                                 (*lossScale)->goodSteps.getValue());
    Value one = b.scalar(1.0), zero = b.scalar(0.0);
    Value counted = b.add(good, one);
    Value interval =
        b.scalar(static_cast<double>((*lossScale)->growthInterval));
    Value grow = b.make<GreaterEqualOp>(counted, interval);
    Value growth = b.scalar(kLossScaleGrowth);
    Value grown =
        b.select(grow, b.mul(lossScaleFactor, growth), lossScaleFactor);
    Value backoff = b.scalar(kLossScaleBackoff);
    Value reduced = b.mul(lossScaleFactor, backoff);
    results.push_back(b.select(ok, grown, reduced));
    updates.push_back((*lossScale)->factor);
    Value goodAfter = b.select(grow, zero, counted);
    results.push_back(b.select(ok, goodAfter, zero));
    updates.push_back((*lossScale)->goodSteps);
  }

  func::ReturnOp::create(builder, loc, results);
  step.setFunctionType(builder.getFunctionType(gradType.getInputs(),
                                               ValueRange(results).getTypes()));
  step->setAttr("nn.updates", builder.getArrayAttr(updates));
}

} // namespace
