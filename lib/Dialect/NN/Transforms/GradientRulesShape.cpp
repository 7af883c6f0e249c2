//===- GradientRulesShape.cpp - data movement and reductions --------------===//

#include "GradientRules.h"

using namespace mlir;
using namespace tandem::nn;
using namespace tandem::nn::autodiff;

namespace {

using Cots = ArrayRef<Value>;
using Out = SmallVectorImpl<Value>;

/// Pushes `d` for a float operand, null otherwise.
void pushIfFloat(Value operand, Value d, Out &out) {
  out.push_back(isFloatTensor(operand) ? d : Value());
}

LogicalResult reshapeRule(GradBuilder &gb, Operation *op, Cots cots, Out &out) {
  Value input = op->getOperand(0);
  pushIfFloat(input, gb.reshape(cots[0], input.getType()), out);
  return success();
}

LogicalResult transposeRule(GradBuilder &gb, Operation *op, Cots cots,
                            Out &out) {
  auto tr = cast<TransposeOp>(op);
  ArrayRef<int64_t> perm = tr.getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  pushIfFloat(tr.getInput(),
              TransposeOp::create(gb.b, gb.loc, cots[0], inverse), out);
  return success();
}

LogicalResult broadcastToRule(GradBuilder &gb, Operation *op, Cots cots,
                              Out &out) {
  Value input = op->getOperand(0);
  pushIfFloat(input, gb.unbroadcast(cots[0], input.getType()), out);
  return success();
}

/// The piece [start, start + size) of `x` along `axis`.
Value sliceAxis(GradBuilder &gb, Value x, int64_t axis, int64_t start,
                int64_t size) {
  auto type = tensorType(x);
  SmallVector<int64_t> starts(type.getRank(), 0);
  SmallVector<int64_t> limits(type.getShape());
  SmallVector<int64_t> strides(type.getRank(), 1);
  starts[axis] = start;
  limits[axis] = start + size;
  return SliceOp::create(gb.b, gb.loc, x, starts, limits, strides);
}

LogicalResult concatRule(GradBuilder &gb, Operation *op, Cots cots, Out &out) {
  auto concat = cast<ConcatOp>(op);
  int64_t axis = concat.getAxis(), offset = 0;
  for (Value input : concat.getInputs()) {
    int64_t size = tensorType(input).getShape()[axis];
    pushIfFloat(input, sliceAxis(gb, cots[0], axis, offset, size), out);
    offset += size;
  }
  return success();
}

/// `x` with zeros of `count` elements along `axis` on one side.
Value padAxis(GradBuilder &gb, Value x, int64_t axis, int64_t count,
              bool before) {
  if (count == 0)
    return x;
  auto type = tensorType(x);
  SmallVector<int64_t> shape(type.getShape());
  shape[axis] = count;
  Value zeros = gb.zeros(RankedTensorType::get(shape, type.getElementType()));
  SmallVector<Value> pieces =
      before ? SmallVector<Value>{zeros, x} : SmallVector<Value>{x, zeros};
  return ConcatOp::create(gb.b, gb.loc, pieces, axis);
}

// Pads the cotangent back to the input's shape one axis at a time: a stride
// s > 1 interleaves s - 1 zeros after every element (reshape to n×1, concat
// zeros to n×s, reshape to n·s, cut to what the input holds), then zeros
// before `start` and after the last element.
LogicalResult sliceRule(GradBuilder &gb, Operation *op, Cots cots, Out &out) {
  auto slice = cast<SliceOp>(op);
  Value input = slice.getInput();
  if (!isFloatTensor(input)) {
    out.push_back(Value());
    return success();
  }
  ArrayRef<int64_t> inShape = tensorType(input).getShape();
  Value d = cots[0];
  for (int64_t axis = 0, rank = inShape.size(); axis < rank; ++axis) {
    int64_t start = slice.getStarts()[axis], stride = slice.getStrides()[axis];
    auto type = tensorType(d);
    int64_t n = type.getShape()[axis];
    Type elementType = type.getElementType();
    int64_t covered = n;
    if (stride > 1 && n > 0) {
      SmallVector<int64_t> split(type.getShape());
      split.insert(split.begin() + axis + 1, 1);
      Value e = gb.reshape(d, RankedTensorType::get(split, elementType));
      e = padAxis(gb, e, axis + 1, stride - 1, /*before=*/false);
      SmallVector<int64_t> merged(type.getShape());
      merged[axis] = n * stride;
      e = gb.reshape(e, RankedTensorType::get(merged, elementType));
      covered = std::min(n * stride, inShape[axis] - start);
      d = covered == n * stride ? e : sliceAxis(gb, e, axis, 0, covered);
    }
    d = padAxis(gb, d, axis, start, /*before=*/true);
    d = padAxis(gb, d, axis, inShape[axis] - start - covered,
                /*before=*/false);
  }
  out.push_back(d);
  return success();
}

LogicalResult splitRule(GradBuilder &gb, Operation *op, Cots cots, Out &out) {
  auto split = cast<SplitOp>(op);
  if (!isFloatTensor(split.getInput())) {
    out.push_back(Value());
    return success();
  }
  SmallVector<Value> pieces(cots.begin(), cots.end());
  out.push_back(pieces.size() == 1
                    ? pieces.front()
                    : ConcatOp::create(gb.b, gb.loc, pieces, split.getAxis())
                          .getResult());
  return success();
}

/// The cotangent of a reduction reshaped to keep the reduced axes (size 1).
Value keepReducedAxes(GradBuilder &gb, Value cot, Value input,
                      ArrayRef<int64_t> axes) {
  auto type = tensorType(input);
  SmallVector<int64_t> shape(type.getShape());
  for (int64_t axis : axes)
    shape[axis] = 1;
  return gb.reshape(cot, RankedTensorType::get(shape, type.getElementType()));
}

Value broadcastTo(GradBuilder &gb, Value x, Type type) {
  if (x.getType() == type)
    return x;
  return BroadcastToOp::create(gb.b, gb.loc, type, x);
}

LogicalResult reduceSumRule(GradBuilder &gb, Operation *op, Cots cots,
                            Out &out) {
  auto reduce = cast<ReduceSumOp>(op);
  Value input = reduce.getInput();
  Value kept = keepReducedAxes(gb, cots[0], input, reduce.getAxes());
  out.push_back(broadcastTo(gb, kept, input.getType()));
  return success();
}

LogicalResult reduceMeanRule(GradBuilder &gb, Operation *op, Cots cots,
                             Out &out) {
  auto reduce = cast<ReduceMeanOp>(op);
  Value input = reduce.getInput();
  int64_t count = 1;
  for (int64_t axis : reduce.getAxes())
    count *= tensorType(input).getShape()[axis];
  Value kept = keepReducedAxes(gb, cots[0], input, reduce.getAxes());
  kept = gb.mul(kept, gb.scalarLike(input, 1.0 / static_cast<double>(count)));
  out.push_back(broadcastTo(gb, kept, input.getType()));
  return success();
}

// The cotangent is shared equally by the elements equal to the maximum
// (mask / count), a deterministic subgradient at ties.
LogicalResult reduceMaxRule(GradBuilder &gb, Operation *op, Cots cots,
                            Out &out) {
  auto reduce = cast<ReduceMaxOp>(op);
  Value input = reduce.getInput();
  ArrayRef<int64_t> axes = reduce.getAxes();
  Value max = keepReducedAxes(gb, reduce.getResult(), input, axes);
  Value mask = GreaterEqualOp::create(gb.b, gb.loc, input, max);
  Value count = gb.reduceSum(mask, axes, /*keepdims=*/true);
  Value kept = keepReducedAxes(gb, cots[0], input, axes);
  out.push_back(gb.mul(mask, gb.div(kept, count)));
  return success();
}

} // namespace

void tandem::nn::autodiff::registerShapeGradients(GradRuleMap &rules) {
  rules[ReshapeOp::getOperationName()] = reshapeRule;
  rules[TransposeOp::getOperationName()] = transposeRule;
  rules[BroadcastToOp::getOperationName()] = broadcastToRule;
  rules[ConcatOp::getOperationName()] = concatRule;
  rules[SliceOp::getOperationName()] = sliceRule;
  rules[SplitOp::getOperationName()] = splitRule;
  rules[ReduceSumOp::getOperationName()] = reduceSumRule;
  rules[ReduceMeanOp::getOperationName()] = reduceMeanRule;
  rules[ReduceMaxOp::getOperationName()] = reduceMaxRule;
}
