//===- DecomposeAttention.cpp - nn.attention into primitive ops -----------===//

#include "tandem/Dialect/NN/IR/NNOps.h"
#include "tandem/Dialect/NN/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace tandem::nn {
#define GEN_PASS_DEF_NNDECOMPOSEATTENTION
#include "tandem/Dialect/NN/Transforms/Passes.h.inc"
} // namespace tandem::nn

using namespace mlir;
using namespace tandem::nn;

namespace {

/// A rank-0 constant of `elementType` holding `value`, which broadcasts
/// against any tensor.
Value scalarConstant(PatternRewriter &rewriter, Location loc, Type elementType,
                     double value) {
  auto type = RankedTensorType::get({}, elementType);
  llvm::APFloat apValue(value);
  bool losesInfo = false;
  apValue.convert(cast<FloatType>(elementType).getFloatSemantics(),
                  llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return ConstantOp::create(rewriter, loc, type,
                            DenseElementsAttr::get(type, apValue));
}

/// The additive causal mask: 0 where key <= query, −∞ elsewhere (the
/// scores are f32 or f64: narrow operands are widened first).
Value causalMask(PatternRewriter &rewriter, Location loc, Type elementType,
                 int64_t length) {
  const llvm::fltSemantics &sem =
      cast<FloatType>(elementType).getFloatSemantics();
  llvm::APFloat zero = llvm::APFloat::getZero(sem);
  llvm::APFloat hidden = llvm::APFloat::getInf(sem, /*Negative=*/true);
  SmallVector<llvm::APFloat> values;
  values.reserve(length * length);
  for (int64_t q = 0; q < length; ++q)
    for (int64_t k = 0; k < length; ++k)
      values.push_back(k <= q ? zero : hidden);
  auto type = RankedTensorType::get({length, length}, elementType);
  return ConstantOp::create(rewriter, loc, type,
                            DenseElementsAttr::get(type, values));
}

struct DecomposeAttention : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto qType = op.getQuery().getType();
    // Narrow operands (bf16, f16, 8-bit) are widened to f32 and only the
    // output is rounded back, so the scores, the softmax and both products
    // keep f32 as the fused kernels do: the narrow scores of a bf16 product
    // would move each probability by about 2^-9 of the score's magnitude.
    auto f32 = rewriter.getF32Type();
    Type elementType = qType.getElementType();
    bool widen = cast<FloatType>(elementType).getWidth() < 32;
    // Self-attention reads one value three times: cast it once.
    llvm::SmallDenseMap<Value, Value, 4> wide;
    auto widened = [&](Value x) -> Value {
      if (!widen)
        return x;
      Value &cast = wide[x];
      if (!cast)
        cast = CastOp::create(
            rewriter, loc, mlir::cast<RankedTensorType>(x.getType()).clone(f32),
            x, BoolAttr());
      return cast;
    };
    if (widen)
      elementType = f32;
    int64_t batch = qType.getShape()[0], queries = qType.getShape()[1];
    int64_t dim = qType.getShape()[2], heads = op.getHeads();
    int64_t headDim = dim / heads, kvHeads = op.getKeyValueHeads();
    int64_t group = heads / kvHeads;

    // B×T×D → B×T×H×Dh → B×H×T×Dh.
    auto splitHeads = [&](Value x) -> Value {
      int64_t length = cast<RankedTensorType>(x.getType()).getShape()[1];
      auto split =
          RankedTensorType::get({batch, length, heads, headDim}, elementType);
      Value reshaped = ReshapeOp::create(rewriter, loc, split, x);
      return TransposeOp::create(rewriter, loc, reshaped,
                                 ArrayRef<int64_t>{0, 2, 1, 3});
    };
    // Grouped-query attention: B×T×(KV·Dh) → B×T×KV×1×Dh, broadcast over
    // the group to B×T×KV×G×Dh, which is B×T×(H·Dh) with query head h
    // reading key and value head h / G; its gradient sums over the group.
    auto repeatHeads = [&](Value x) -> Value {
      if (group == 1)
        return x;
      int64_t length = cast<RankedTensorType>(x.getType()).getShape()[1];
      auto single = RankedTensorType::get({batch, length, kvHeads, 1, headDim},
                                          elementType);
      auto repeated = RankedTensorType::get(
          {batch, length, kvHeads, group, headDim}, elementType);
      Value grouped = ReshapeOp::create(rewriter, loc, single, x);
      grouped = BroadcastToOp::create(rewriter, loc, repeated, grouped);
      return ReshapeOp::create(
          rewriter, loc,
          RankedTensorType::get({batch, length, dim}, elementType), grouped);
    };
    Value q = splitHeads(widened(op.getQuery()));
    Value k = splitHeads(repeatHeads(widened(op.getKey())));
    Value v = splitHeads(repeatHeads(widened(op.getValue())));

    Value scores = MatmulOp::create(rewriter, loc, q, k,
                                    /*transpose_lhs=*/false,
                                    /*transpose_rhs=*/true);
    scores = MulOp::create(
        rewriter, loc, scores,
        scalarConstant(rewriter, loc, elementType, op.getEffectiveScale()));
    if (op.getCausal())
      scores = AddOp::create(rewriter, loc, scores,
                             causalMask(rewriter, loc, elementType, queries));
    Value probs = SoftmaxOp::create(rewriter, loc, scores, /*axis=*/3);
    Value context = MatmulOp::create(rewriter, loc, probs, v,
                                     /*transpose_lhs=*/false,
                                     /*transpose_rhs=*/false);
    // B×H×T×Dh → B×T×H×Dh → B×T×D.
    Value merged = TransposeOp::create(rewriter, loc, context,
                                       ArrayRef<int64_t>{0, 2, 1, 3});
    Value result =
        ReshapeOp::create(rewriter, loc, qType.clone(elementType), merged);
    if (widen)
      result = CastOp::create(rewriter, loc, qType, result,
                              isFloat8(qType.getElementType())
                                  ? rewriter.getBoolAttr(true)
                                  : BoolAttr());
    if (!op.getLse()) {
      rewriter.replaceOp(op, result);
      return success();
    }
    // The log-sum-exp of each row of scores, in f32 whatever their type:
    // max + log Σ exp(score − max), the hidden scores (−∞) adding 0. A
    // row's own key is visible, so the maximum is finite. (The scores are
    // f32, or f64 for f64 operands: narrow operands were widened.)
    Value rowScores = scores;
    if (elementType != f32)
      rowScores = CastOp::create(
          rewriter, loc,
          RankedTensorType::get(
              cast<RankedTensorType>(scores.getType()).getShape(), f32),
          scores, BoolAttr());
    Value rowMax = ReduceMaxOp::create(rewriter, loc, rowScores,
                                       ArrayRef<int64_t>{3}, /*keepdims=*/true);
    Value shifted = SubOp::create(rewriter, loc, rowScores, rowMax);
    Value sum = ReduceSumOp::create(rewriter, loc,
                                    ExpOp::create(rewriter, loc, shifted),
                                    ArrayRef<int64_t>{3}, /*keepdims=*/false);
    Value flatMax = ReshapeOp::create(
        rewriter, loc, cast<RankedTensorType>(op.getLse().getType()), rowMax);
    Value logSum = LogOp::create(rewriter, loc, sum);
    Value lse = AddOp::create(rewriter, loc, flatMax, logSum);
    rewriter.replaceOp(op, {result, lse});
    return success();
  }
};

struct NNDecomposeAttentionPass
    : tandem::nn::impl::NNDecomposeAttentionBase<NNDecomposeAttentionPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateDecomposeAttentionPatterns(patterns);
    // A walk, not the greedy driver: this pass rewrites attention and
    // leaves folding and canonicalization of everything else to the user.
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

void tandem::nn::populateDecomposeAttentionPatterns(
    RewritePatternSet &patterns) {
  patterns.add<DecomposeAttention>(patterns.getContext());
}
