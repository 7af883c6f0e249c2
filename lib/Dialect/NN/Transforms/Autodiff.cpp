//===- Autodiff.cpp - nn-autodiff: reverse-mode differentiation -----------===//
//
// Clones @<function> into @<function>_grad (nn.attention decomposed first,
// so its gradient comes from the primitive ops' rules, unless
// decompose-attention=false: then nn.attention_grad), numbers the forward
// ops with `nn.id`, then walks them in reverse: each op on a path from a
// parameter to the loss hands the cotangents of its results to its gradient
// rule (GradientRules*.cpp), and the contributions to each operand are added
// in the order they arrive (users in reverse program order). All reads of
// one parameter symbol are summed, in program order, into its gradient.
//
// Every op the backward pass creates is tagged #nn.grad<B|W, of = id>: `of`
// is the forward op whose rule (or whose contribution sum) created it. An op
// is W when everything it feeds ends in cotangents of parameter-only values
// (values computed from nn.param reads and constants, not from function
// arguments); otherwise B. The classification runs backwards over the new
// ops, marking an op B when it feeds a B op, so no W op can feed a B op; the
// pass still checks that before it returns. The adds that sum the reads of
// one parameter also carry the unit attribute `nn.grad_sum`.
//
//===----------------------------------------------------------------------===//

#include "GradientRules.h"

#include "tandem/Dialect/NN/IR/NNOps.h"
#include "tandem/Dialect/NN/Transforms/Autodiff.h"
#include "tandem/Dialect/NN/Transforms/MixedPrecision.h"
#include "tandem/Dialect/NN/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"

namespace tandem::nn {
#define GEN_PASS_DEF_NNAUTODIFF
#include "tandem/Dialect/NN/Transforms/Passes.h.inc"
} // namespace tandem::nn

using namespace mlir;
using namespace tandem::nn;
using namespace tandem::nn::autodiff;

//===----------------------------------------------------------------------===//
// GradBuilder
//===----------------------------------------------------------------------===//

Value GradBuilder::scalar(Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  llvm::APFloat apValue(value);
  bool losesInfo = false;
  apValue.convert(cast<FloatType>(elementType).getFloatSemantics(),
                  llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return ConstantOp::create(b, loc, type,
                            DenseElementsAttr::get(type, apValue));
}

Value GradBuilder::scalarLike(Value like, double value) {
  return scalar(tensorType(like).getElementType(), value);
}

Value GradBuilder::zeros(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  const llvm::fltSemantics &sem =
      cast<FloatType>(tensor.getElementType()).getFloatSemantics();
  return ConstantOp::create(
      b, loc, tensor,
      DenseElementsAttr::get(tensor, llvm::APFloat::getZero(sem)));
}

Value GradBuilder::add(Value a, Value c) { return AddOp::create(b, loc, a, c); }
Value GradBuilder::sub(Value a, Value c) { return SubOp::create(b, loc, a, c); }
Value GradBuilder::mul(Value a, Value c) { return MulOp::create(b, loc, a, c); }
Value GradBuilder::div(Value a, Value c) { return DivOp::create(b, loc, a, c); }
Value GradBuilder::neg(Value a) { return NegOp::create(b, loc, a); }

Value GradBuilder::reshape(Value a, Type type) {
  if (a.getType() == type)
    return a;
  return ReshapeOp::create(b, loc, type, a);
}

Value GradBuilder::reduceSum(Value a, ArrayRef<int64_t> axes, bool keepdims) {
  return ReduceSumOp::create(b, loc, a, axes, keepdims);
}

Value GradBuilder::reduceMean(Value a, ArrayRef<int64_t> axes, bool keepdims) {
  return ReduceMeanOp::create(b, loc, a, axes, keepdims);
}

Value GradBuilder::unbroadcast(Value cotangent, Type type) {
  if (cotangent.getType() == type)
    return cotangent;
  ArrayRef<int64_t> from = tensorType(cotangent).getShape();
  ArrayRef<int64_t> to = cast<RankedTensorType>(type).getShape();
  int64_t added = from.size() - to.size();
  SmallVector<int64_t> axes;
  for (int64_t i = 0, e = from.size(); i < e; ++i)
    if (i < added || (to[i - added] == 1 && from[i] != 1))
      axes.push_back(i);
  Value summed =
      axes.empty() ? cotangent : reduceSum(cotangent, axes, /*keepdims=*/false);
  return reshape(summed, type);
}

//===----------------------------------------------------------------------===//
// Rules and the op lists
//===----------------------------------------------------------------------===//

const GradRuleMap &tandem::nn::autodiff::getGradRules() {
  static const GradRuleMap rules = [] {
    GradRuleMap r;
    registerElementwiseGradients(r);
    registerLayerGradients(r);
    registerShapeGradients(r);
    registerCodecGradients(r);
    return r;
  }();
  return rules;
}

std::vector<std::string> tandem::nn::opsWithGradientRules() {
  std::vector<std::string> names;
  for (const auto &entry : getGradRules())
    names.push_back(entry.getKey().str());
  llvm::sort(names);
  return names;
}

std::vector<std::pair<std::string, std::string>>
tandem::nn::nonDifferentiableOps() {
  return {
      {AttentionGradOp::getOperationName().str(),
       "a gradient op itself: second-order differentiation through fused "
       "attention is not supported"},
      {LayerNormGradOp::getOperationName().str(),
       "a gradient op itself: second-order differentiation through the fused "
       "layer norm gradient is not supported"},
      {RMSNormGradOp::getOperationName().str(),
       "a gradient op itself: second-order differentiation through the fused "
       "RMS norm gradient is not supported"},
      {GeluGradOp::getOperationName().str(),
       "a gradient op itself: second-order differentiation through the fused "
       "GELU gradient is not supported"},
      {CrossEntropyGradOp::getOperationName().str(),
       "a gradient op itself: second-order differentiation through the fused "
       "cross-entropy gradient is not supported"},
      {ParameterOp::getOperationName().str(),
       "a module-level declaration, not a value; nn.param reads it"},
  };
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {

/// Which values of a function depend on parameters, on arguments, and reach
/// the loss.
struct Activity {
  llvm::DenseSet<Value> fromParam, fromArgument, toLoss;

  Activity(func::FuncOp func, Value loss) {
    Block &body = func.getBody().front();
    for (BlockArgument arg : body.getArguments())
      fromArgument.insert(arg);
    for (Operation &op : body) {
      // A frozen parameter is not trained: nothing flows back to it.
      auto read = dyn_cast<ParamOp>(op);
      bool param = read && !read.readsFrozen(), argument = false;
      for (Value operand : op.getOperands()) {
        param |= fromParam.contains(operand);
        argument |= fromArgument.contains(operand);
      }
      for (Value result : op.getResults()) {
        if (param)
          fromParam.insert(result);
        if (argument)
          fromArgument.insert(result);
      }
    }
    toLoss.insert(loss);
    for (Operation &op : llvm::reverse(body)) {
      if (llvm::none_of(op.getResults(),
                        [&](Value r) { return toLoss.contains(r); }))
        continue;
      for (Value operand : op.getOperands())
        toLoss.insert(operand);
    }
  }

  /// Carries a gradient from a parameter to the loss.
  bool isActive(Value v) const {
    return fromParam.contains(v) && toLoss.contains(v) &&
           static_cast<bool>(cotangentType(v));
  }
  bool isParameterOnly(Value v) const {
    return fromParam.contains(v) && !fromArgument.contains(v);
  }
};

struct NNAutodiffPass : tandem::nn::impl::NNAutodiffBase<NNAutodiffPass> {
  using NNAutodiffBase::NNAutodiffBase;
  void runOnOperation() override;

private:
  LogicalResult check(func::FuncOp func);
  LogicalResult differentiate(func::FuncOp grad);
};

} // namespace

/// The single rank-0 float result of `func`, or an error.
static LogicalResult checkSignature(func::FuncOp func) {
  auto results = func.getFunctionType().getResults();
  auto type = results.size() == 1 ? dyn_cast<RankedTensorType>(results.front())
                                  : RankedTensorType();
  if (!type || type.getRank() != 0 || !isa<FloatType>(type.getElementType())) {
    std::string found;
    llvm::raw_string_ostream os(found);
    llvm::interleaveComma(results, os);
    return func.emitError()
           << "nn-autodiff: expected @" << func.getSymName()
           << " to return exactly one rank-0 float tensor (the loss), found ("
           << found << ")";
  }
  if (!func.getBody().hasOneBlock())
    return func.emitError() << "nn-autodiff: expected @" << func.getSymName()
                            << " to have a single block";
  return success();
}

LogicalResult NNAutodiffPass::check(func::FuncOp func) {
  if (failed(checkSignature(func)))
    return failure();
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  Activity activity(func, ret.getOperand(0));
  const GradRuleMap &rules = getGradRules();
  for (Operation &op : body) {
    if (&op == ret)
      continue;
    bool onPath = llvm::any_of(op.getResults(),
                               [&](Value r) { return activity.isActive(r); });
    // A float computed from parameters, turned into integers that reach the
    // loss: the loss depends on it, but not differentiably.
    if (auto cast = dyn_cast<CastOp>(op)) {
      Value in = cast.getInput();
      if (isFloatTensor(in) && activity.fromParam.contains(in) &&
          !isFloatTensor(cast.getResult()) &&
          activity.toLoss.contains(cast.getResult()))
        return cast.emitError()
               << "nn-autodiff: non-differentiable use: a float value that "
                  "depends on parameters is cast to "
               << cast.getResult().getType()
               << " on the way to the loss; the gradient through it is "
                  "undefined";
    }
    if (onPath && !rules.contains(op.getName().getStringRef()))
      return op.emitError()
             << "nn-autodiff: no gradient rule for '" << op.getName()
             << "', which is on a differentiable path from a parameter to "
                "the loss";
  }
  return success();
}

void NNAutodiffPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto func = module.lookupSymbol<func::FuncOp>(function);
  if (!func) {
    module.emitError() << "nn-autodiff: no function @" << function
                       << " in the module (set it with function=<name>)";
    return signalPassFailure();
  }
  std::string gradName = function + "_grad";
  if (Operation *existing = module.lookupSymbol(gradName)) {
    existing->emitError() << "nn-autodiff: the module already has a symbol @"
                          << gradName
                          << "; nn-autodiff would create it (remove it or "
                             "differentiate another function)";
    return signalPassFailure();
  }
  if (func.isExternal()) {
    func.emitError() << "nn-autodiff: @" << function
                     << " is a declaration; expected a body to differentiate";
    return signalPassFailure();
  }
  if (failed(check(func)))
    return signalPassFailure();

  OpBuilder builder(module.getContext());
  builder.setInsertionPointAfter(func);
  auto grad = cast<func::FuncOp>(builder.clone(*func));
  grad.setSymName(gradName);
  if (failed(differentiate(grad))) {
    grad.erase();
    return signalPassFailure();
  }
}

/// Gives every nn.attention of `grad` without a log-sum-exp result one, for
/// nn.attention_grad to read (the same op otherwise).
static void giveAttentionLse(func::FuncOp grad) {
  SmallVector<AttentionOp> plain;
  grad.walk([&](AttentionOp op) {
    if (!op.getLse())
      plain.push_back(op);
  });
  for (AttentionOp op : plain) {
    OpBuilder b(op);
    auto withLse = AttentionOp::create(
        b, op.getLoc(), op.getQuery(), op.getKey(), op.getValue(),
        op.getHeads(), op.getCausal(), op.getScaleAttr(), op.getKvHeadsAttr(),
        /*withLse=*/true);
    withLse->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    op.getResult().replaceAllUsesWith(withLse.getResult());
    op.erase();
  }
}

LogicalResult NNAutodiffPass::differentiate(func::FuncOp grad) {
  MLIRContext *ctx = grad.getContext();
  if (decomposeAttention) {
    RewritePatternSet patterns(ctx);
    populateDecomposeAttentionPatterns(patterns);
    walkAndApplyPatterns(grad, std::move(patterns));
  } else {
    giveAttentionLse(grad);
  }
  Block &body = grad.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  Value loss = ret.getOperand(0);

  // Number the forward ops.
  llvm::DenseMap<Operation *, int64_t> ids;
  int64_t nextId = 0;
  for (Operation &op : body) {
    if (&op == ret)
      continue;
    ids[&op] = nextId;
    op.setAttr("nn.id", IntegerAttr::get(IntegerType::get(ctx, 64), nextId));
    ++nextId;
  }

  Activity activity(grad, loss);
  SmallVector<Operation *> forward;
  for (Operation &op : body)
    if (&op != ret)
      forward.push_back(&op);

  OpBuilder b(ret);
  // Every backward op, in creation order, with the forward op it belongs to.
  SmallVector<std::pair<Operation *, int64_t>> backward;
  auto tagSince = [&](Operation *before, int64_t id) {
    for (Operation *op = before ? before->getNextNode() : &body.front();
         op != ret; op = op->getNextNode())
      backward.push_back({op, id});
  };

  llvm::DenseMap<Value, Value> cot;
  // Cotangent values that are the final cotangent of a value that is not
  // parameter-only: their producers are B work.
  llvm::DenseSet<Value> inputGradients;

  // Seed: d loss / d loss = 1, times the loss scale when nn-mixed-precision
  // chose one (the gradients come out scaled; nn-optimizer unscales them).
  FailureOr<std::optional<LossScale>> lossScale =
      readLossScale(grad, "nn-autodiff");
  if (failed(lossScale))
    return failure();
  {
    Operation *before = ret->getPrevNode();
    GradBuilder gb{b, loss.getLoc()};
    Value seed = gb.scalarLike(loss, 1.0);
    if (*lossScale) {
      seed = gb.scalarLike(loss, (*lossScale)->scale);
      if ((*lossScale)->isDynamic()) {
        auto f32Scalar = RankedTensorType::get({}, b.getF32Type());
        Value factor = ParamOp::create(b, loss.getLoc(), f32Scalar,
                                       (*lossScale)->factor.getValue());
        if (factor.getType() != loss.getType())
          factor = CastOp::create(b, loss.getLoc(), loss.getType(), factor,
                                  BoolAttr());
        seed = gb.mul(seed, factor);
      }
    }
    cot[loss] = seed;
    Operation *lossOp = loss.getDefiningOp();
    tagSince(before, lossOp ? ids[lossOp] : 0);
  }

  const GradRuleMap &rules = getGradRules();
  for (Operation *op : llvm::reverse(forward)) {
    if (llvm::none_of(op->getResults(), [&](Value r) { return cot.count(r); }))
      continue;
    for (Value r : op->getResults())
      if (cot.count(r) && !activity.isParameterOnly(r))
        inputGradients.insert(cot[r]);
    if (isa<ParamOp>(op))
      continue;
    // nn.attention_grad takes the log-sum-exp as the forward pass left it,
    // a constant: it has no cotangent to pass on.
    if (auto at = dyn_cast<AttentionOp>(op);
        at && at.getLse() && cot.count(at.getLse()))
      return op->emitError() << "nn-autodiff: the loss depends on the "
                                "log-sum-exp result of '"
                             << op->getName()
                             << "', which fused attention does not "
                                "differentiate; use decompose-attention=true";
    auto rule = rules.find(op->getName().getStringRef());
    if (rule == rules.end())
      return op->emitError()
             << "nn-autodiff: no gradient rule for '" << op->getName() << "'";
    Operation *before = ret->getPrevNode();
    GradBuilder gb{b, op->getLoc(), !decomposeNorms, !decomposeGelu};
    SmallVector<Value> resultCots;
    for (Value r : op->getResults()) {
      if (auto it = cot.find(r); it != cot.end())
        resultCots.push_back(it->second);
      else
        resultCots.push_back(cotangentType(r) ? gb.zeros(cotangentType(r))
                                              : Value());
    }
    SmallVector<Value> operandCots;
    if (failed(rule->second(gb, op, resultCots, operandCots)))
      return failure();
    if (operandCots.size() != op->getNumOperands())
      return op->emitError() << "nn-autodiff: internal error: the gradient "
                                "rule returned "
                             << operandCots.size() << " cotangents for "
                             << op->getNumOperands() << " operands";
    for (auto [operand, d] : llvm::zip(op->getOperands(), operandCots)) {
      if (!d || !activity.isActive(operand))
        continue;
      if (d.getType() != cotangentType(operand))
        return op->emitError()
               << "nn-autodiff: internal error: the gradient rule produced "
               << d.getType() << " for an operand of type "
               << operand.getType();
      auto [it, inserted] = cot.try_emplace(operand, d);
      if (!inserted)
        it->second = gb.add(it->second, d);
    }
    tagSince(before, ids[op]);
  }

  // One gradient per parameter symbol, reads summed in program order.
  llvm::MapVector<StringRef, SmallVector<ParamOp>> reads;
  for (Operation *op : forward)
    if (auto param = dyn_cast<ParamOp>(op))
      reads[param.getName()].push_back(param);
  SmallVector<Value> results{loss};
  SmallVector<Attribute> names;
  auto module = grad->getParentOfType<ModuleOp>();
  for (auto parameter : module.getOps<ParameterOp>()) {
    auto it = reads.find(parameter.getSymName());
    if (it == reads.end() || parameter.getFrozen())
      continue;
    Operation *before = ret->getPrevNode();
    ParamOp first = it->second.front();
    GradBuilder gb{b, first.getLoc()};
    Value total;
    int64_t lastId = ids[first];
    for (ParamOp read : it->second) {
      auto found = cot.find(read.getResult());
      if (found == cot.end())
        continue;
      lastId = ids[read];
      if (!total) {
        total = found->second;
        continue;
      }
      total = gb.add(total, found->second);
      // mpmd-partition accumulates each read's contribution over
      // microbatches on its own stage and adds them once per step.
      total.getDefiningOp()->setAttr(kGradSumAttrName, b.getUnitAttr());
    }
    if (!total)
      total = gb.zeros(first.getType());
    tagSince(before, lastId);
    results.push_back(total);
    names.push_back(FlatSymbolRefAttr::get(ctx, parameter.getSymNameAttr()));
  }

  ret->setOperands(results);
  // Rules compute every operand's contribution; drop those nothing uses
  // (cotangents of function arguments, of constants), last first.
  SmallVector<std::pair<Operation *, int64_t>> live;
  for (auto &entry : llvm::reverse(backward)) {
    if (entry.first->use_empty())
      entry.first->erase();
    else
      live.push_back(entry);
  }
  backward.assign(live.rbegin(), live.rend());

  // B/W: backwards over the new ops, B when feeding a B op or producing a
  // final cotangent of a value that is not parameter-only.
  llvm::DenseSet<Operation *> isB;
  for (auto &[op, id] : llvm::reverse(backward)) {
    bool inputWork = false;
    for (Value r : op->getResults()) {
      inputWork |= inputGradients.contains(r);
      for (Operation *user : r.getUsers())
        inputWork |= isB.contains(user);
    }
    if (inputWork)
      isB.insert(op);
  }
  for (auto &[op, id] : backward)
    op->setAttr(
        "nn.grad",
        GradAttr::get(ctx, isB.contains(op) ? GradKind::B : GradKind::W, id));
  for (auto &[op, id] : backward) {
    if (isB.contains(op))
      continue;
    for (Operation *user : op->getUsers())
      if (isB.contains(user))
        return op->emitError() << "nn-autodiff: internal error: a W op feeds "
                                  "the B op "
                               << user->getName();
  }

  grad.setFunctionType(FunctionType::get(ctx, grad.getArgumentTypes(),
                                         ValueRange(results).getTypes()));
  grad->setAttr("nn.gradients", ArrayAttr::get(ctx, names));
  return success();
}
