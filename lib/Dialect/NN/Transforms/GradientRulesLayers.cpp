//===- GradientRulesLayers.cpp - matmul, normalizations, embedding, loss --===//

#include "GradientRules.h"

using namespace mlir;
using namespace tandem::nn;
using namespace tandem::nn::autodiff;

namespace {

using Cots = ArrayRef<Value>;
using Out = SmallVectorImpl<Value>;

/// `x` with its last two dimensions swapped.
Value swapLastTwo(GradBuilder &gb, Value x) {
  int64_t rank = tensorType(x).getRank();
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(perm[rank - 1], perm[rank - 2]);
  return TransposeOp::create(gb.b, gb.loc, x, perm);
}

/// `x` as a 2-D matrix, keeping the last dimension.
Value flattenRows(GradBuilder &gb, Value x) {
  auto type = tensorType(x);
  int64_t cols = type.getShape().back();
  auto flat = RankedTensorType::get({type.getNumElements() / cols, cols},
                                    type.getElementType());
  return gb.reshape(x, flat);
}

Value matmul(GradBuilder &gb, Value a, Value c, bool ta, bool tc) {
  return MatmulOp::create(gb.b, gb.loc, a, c, ta, tc);
}

// With op(A) (M×K) and op(B) (K×N) the operands as multiplied and g = dY:
// d op(A) = g op(B)ᵀ and d op(B) = op(A)ᵀ g, transposed back where the
// operand was transposed. A 2-D rhs shared by a batched lhs gets the sum over
// the batch: the batch is folded into the rows of one 2-D product.
LogicalResult matmulRule(GradBuilder &gb, Operation *op, Cots cots, Out &out) {
  auto mm = cast<MatmulOp>(op);
  Value a = mm.getLhs(), bm = mm.getRhs(), g = cots[0];
  bool ta = mm.getTransposeLhs(), tb = mm.getTransposeRhs();
  bool shared = tensorType(a).getRank() > 2 && tensorType(bm).getRank() == 2;

  Value da;
  if (!ta)
    da = matmul(gb, g, bm, false, !tb);
  else if (!shared)
    da = matmul(gb, bm, g, tb, true);
  else
    da = swapLastTwo(gb, matmul(gb, g, bm, false, !tb));

  Value db;
  if (!shared) {
    db = tb ? matmul(gb, g, a, true, ta) : matmul(gb, a, g, !ta, false);
  } else {
    Value rowsA = flattenRows(gb, ta ? swapLastTwo(gb, a) : a);
    Value rowsG = flattenRows(gb, g);
    db = tb ? matmul(gb, rowsG, rowsA, true, false)
            : matmul(gb, rowsA, rowsG, true, false);
  }
  out.push_back(da);
  out.push_back(db);
  return success();
}

// dx = y (dy - sum(dy y)).
LogicalResult softmaxRule(GradBuilder &gb, Operation *op, Cots cots, Out &out) {
  auto sm = cast<SoftmaxOp>(op);
  Value y = sm.getResult(), g = cots[0];
  int64_t axis = sm.getAxis();
  Value dot = gb.reduceSum(gb.mul(g, y), {axis}, /*keepdims=*/true);
  out.push_back(gb.mul(y, gb.sub(g, dot)));
  return success();
}

// dx = dy - exp(y) sum(dy).
LogicalResult logSoftmaxRule(GradBuilder &gb, Operation *op, Cots cots,
                             Out &out) {
  auto lsm = cast<LogSoftmaxOp>(op);
  Value g = cots[0];
  Value total =
      gb.reduceSum(g, {static_cast<int64_t>(lsm.getAxis())}, /*keepdims=*/true);
  Value probs = ExpOp::create(gb.b, gb.loc, lsm.getResult());
  out.push_back(gb.sub(g, gb.mul(probs, total)));
  return success();
}

/// The axes before the last one, over which weight and bias gradients sum.
SmallVector<int64_t> leadingAxes(Value x) {
  return llvm::to_vector(llvm::seq<int64_t>(0, tensorType(x).getRank() - 1));
}

// Recomputes x̂ = (x - mean) r with r = rsqrt(var + eps); then
// dbias = Σ dy, dweight = Σ dy x̂ (over the leading axes),
// dx = r (dx̂ - mean(dx̂) - x̂ mean(dx̂ x̂)) with dx̂ = dy weight.
LogicalResult layerNormRule(GradBuilder &gb, Operation *op, Cots cots,
                            Out &out) {
  auto ln = cast<LayerNormOp>(op);
  Value x = ln.getInput(), w = ln.getWeight(), g = cots[0];
  int64_t last = tensorType(x).getRank() - 1;
  if (gb.fusedNorms) {
    auto grad =
        LayerNormGradOp::create(gb.b, gb.loc, x, w, g, ln.getEpsilonAttr());
    out.push_back(grad.getInputGrad());
    out.push_back(gb.reduceSum(grad.getWeightTerms(), leadingAxes(x), false));
    out.push_back(gb.reduceSum(g, leadingAxes(x), false));
    return success();
  }
  Value centered = gb.sub(x, gb.reduceMean(x, {last}, true));
  Value var = gb.reduceMean(gb.mul(centered, centered), {last}, true);
  Value r = RsqrtOp::create(
      gb.b, gb.loc,
      gb.add(var, gb.scalarLike(x, ln.getEpsilon().convertToDouble())));
  Value xhat = gb.mul(centered, r);
  Value dxhat = gb.mul(g, w);
  Value dx = gb.mul(r, gb.sub(gb.sub(dxhat, gb.reduceMean(dxhat, {last}, true)),
                              gb.mul(xhat, gb.reduceMean(gb.mul(dxhat, xhat),
                                                         {last}, true))));
  out.push_back(dx);
  out.push_back(gb.reduceSum(gb.mul(g, xhat), leadingAxes(x), false));
  out.push_back(gb.reduceSum(g, leadingAxes(x), false));
  return success();
}

// x̂ = x r with r = rsqrt(mean(x²) + eps); dweight = Σ dy x̂,
// dx = r (dx̂ - x̂ mean(dx̂ x̂)) with dx̂ = dy weight.
LogicalResult rmsNormRule(GradBuilder &gb, Operation *op, Cots cots, Out &out) {
  auto rms = cast<RMSNormOp>(op);
  Value x = rms.getInput(), w = rms.getWeight(), g = cots[0];
  int64_t last = tensorType(x).getRank() - 1;
  if (gb.fusedNorms) {
    auto grad =
        RMSNormGradOp::create(gb.b, gb.loc, x, w, g, rms.getEpsilonAttr());
    out.push_back(grad.getInputGrad());
    out.push_back(gb.reduceSum(grad.getWeightTerms(), leadingAxes(x), false));
    return success();
  }
  Value ms = gb.reduceMean(gb.mul(x, x), {last}, true);
  Value r = RsqrtOp::create(
      gb.b, gb.loc,
      gb.add(ms, gb.scalarLike(x, rms.getEpsilon().convertToDouble())));
  Value xhat = gb.mul(x, r);
  Value dxhat = gb.mul(g, w);
  Value dx =
      gb.mul(r, gb.sub(dxhat, gb.mul(xhat, gb.reduceMean(gb.mul(dxhat, xhat),
                                                         {last}, true))));
  out.push_back(dx);
  out.push_back(gb.reduceSum(gb.mul(g, xhat), leadingAxes(x), false));
  return success();
}

// Scatter-add of the cotangent rows into the table's shape.
LogicalResult embeddingRule(GradBuilder &gb, Operation *op, Cots cots,
                            Out &out) {
  auto emb = cast<EmbeddingOp>(op);
  out.push_back(EmbeddingGradOp::create(gb.b, gb.loc, emb.getTable().getType(),
                                        cots[0], emb.getIds(),
                                        emb.getRowsAttr()));
  out.push_back(Value());
  return success();
}

// The fused, stable form (softmax(logits) - onehot(targets)) dloss / N.
LogicalResult crossEntropyRule(GradBuilder &gb, Operation *op, Cots cots,
                               Out &out) {
  auto ce = cast<CrossEntropyOp>(op);
  out.push_back(CrossEntropyGradOp::create(gb.b, gb.loc, ce.getLogits(),
                                           ce.getTargets(), cots[0],
                                           ce.getClassesAttr()));
  out.push_back(Value());
  return success();
}

// embedding_grad is linear in its cotangent operand; its own cotangent is
// gathered back by the ids.
LogicalResult embeddingGradRule(GradBuilder &gb, Operation *op, Cots cots,
                                Out &out) {
  auto eg = cast<EmbeddingGradOp>(op);
  out.push_back(EmbeddingOp::create(gb.b, gb.loc, cots[0], eg.getIds(),
                                    eg.getRowsAttr()));
  out.push_back(Value());
  return success();
}

// One op for all three cotangents (nn.attention_grad recomputes the
// probabilities from the forward op's log-sum-exp, which nn-autodiff gave
// it), with the forward op's attributes.
LogicalResult attentionRule(GradBuilder &gb, Operation *op, Cots cots,
                            Out &out) {
  auto at = cast<AttentionOp>(op);
  if (!at.getLse())
    return op->emitError("nn-autodiff: internal error: fused attention "
                         "without its log-sum-exp result");
  auto grad = AttentionGradOp::create(
      gb.b, gb.loc, at.getQuery(), at.getKey(), at.getValue(), at.getResult(),
      at.getLse(), cots[0], at.getHeads(), at.getCausal(), at.getScaleAttr(),
      at.getKvHeadsAttr());
  out.append({grad.getDquery(), grad.getDkey(), grad.getDvalue()});
  return success();
}

} // namespace

void tandem::nn::autodiff::registerLayerGradients(GradRuleMap &rules) {
  rules[AttentionOp::getOperationName()] = attentionRule;
  rules[MatmulOp::getOperationName()] = matmulRule;
  rules[SoftmaxOp::getOperationName()] = softmaxRule;
  rules[LogSoftmaxOp::getOperationName()] = logSoftmaxRule;
  rules[LayerNormOp::getOperationName()] = layerNormRule;
  rules[RMSNormOp::getOperationName()] = rmsNormRule;
  rules[EmbeddingOp::getOperationName()] = embeddingRule;
  rules[CrossEntropyOp::getOperationName()] = crossEntropyRule;
  rules[EmbeddingGradOp::getOperationName()] = embeddingGradRule;
}
