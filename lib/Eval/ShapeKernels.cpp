//===- ShapeKernels.cpp - reshape, transpose, slices and friends ----------===//

#include "KernelUtils.h"

#include "tandem/Dialect/NN/IR/NNOps.h"

using namespace tandem::eval;
namespace nn = tandem::nn;

namespace {

/// Calls `f(outIndex, inOffset)` for every element of a tensor of `outShape`
/// in row-major order, where the input offset advances by `inStrides[d]`
/// along output dimension d, starting at `inBase`.
template <typename F>
void forEachStrided(llvm::ArrayRef<int64_t> outShape,
                    llvm::ArrayRef<int64_t> inStrides, int64_t inBase, F f) {
  int64_t rank = static_cast<int64_t>(outShape.size());
  int64_t count = numElementsOf(outShape);
  llvm::SmallVector<int64_t> index(rank, 0);
  int64_t offset = inBase;
  for (int64_t i = 0; i < count; ++i) {
    f(i, offset);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < outShape[d]) {
        offset += inStrides[d];
        break;
      }
      offset -= inStrides[d] * (outShape[d] - 1);
      index[d] = 0;
    }
  }
}

KernelResult reshapeKernel(const KernelCall &call) {
  Tensor result = resultTensor(call.op);
  if (result.numElements() != call.operands[0]->numElements())
    return opError(call.op, "element counts differ");
  result.data = call.operands[0]->data;
  return single(std::move(result));
}

KernelResult transposeKernel(const KernelCall &call) {
  auto perm = llvm::cast<nn::TransposeOp>(call.op).getPermutation();
  const Tensor &input = *call.operands[0];
  Tensor result = resultTensor(call.op);
  llvm::SmallVector<int64_t> inStrides = input.strides(), strides;
  for (int64_t p : perm)
    strides.push_back(inStrides[p]);
  forEachStrided(result.shape, strides, 0, [&](int64_t i, int64_t offset) {
    result.data[i] = input.data[offset];
  });
  return single(std::move(result));
}

KernelResult broadcastToKernel(const KernelCall &call) {
  const Tensor &input = *call.operands[0];
  Tensor result = resultTensor(call.op);
  llvm::SmallVector<int64_t> at = broadcastOffsets(input.shape, result.shape);
  for (int64_t i = 0; i < result.numElements(); ++i)
    result.data[i] = input.data[at[i]];
  return single(std::move(result));
}

KernelResult concatKernel(const KernelCall &call) {
  int64_t axis = llvm::cast<nn::ConcatOp>(call.op).getAxis();
  Tensor result = resultTensor(call.op);
  AxisSplit out = splitAt(result.shape, axis);
  int64_t start = 0;
  for (const Tensor *input : call.operands) {
    AxisSplit in = splitAt(input->shape, axis);
    for (int64_t o = 0; o < in.outer; ++o)
      for (int64_t j = 0; j < in.size * in.inner; ++j)
        result.data[o * out.size * out.inner + start * out.inner + j] =
            input->data[o * in.size * in.inner + j];
    start += in.size;
  }
  return single(std::move(result));
}

KernelResult sliceKernel(const KernelCall &call) {
  auto op = llvm::cast<nn::SliceOp>(call.op);
  const Tensor &input = *call.operands[0];
  Tensor result = resultTensor(call.op);
  llvm::SmallVector<int64_t> inStrides = input.strides(), strides;
  int64_t base = 0;
  for (auto [d, start, step] :
       llvm::enumerate(op.getStarts(), op.getStrides())) {
    base += start * inStrides[d];
    strides.push_back(step * inStrides[d]);
  }
  forEachStrided(result.shape, strides, base, [&](int64_t i, int64_t offset) {
    result.data[i] = input.data[offset];
  });
  return single(std::move(result));
}

KernelResult splitKernel(const KernelCall &call) {
  auto op = llvm::cast<nn::SplitOp>(call.op);
  const Tensor &input = *call.operands[0];
  AxisSplit in = splitAt(input.shape, op.getAxis());
  std::vector<Tensor> results;
  int64_t start = 0;
  for (unsigned r = 0; r < call.op->getNumResults(); ++r) {
    Tensor piece = resultTensor(call.op, r);
    int64_t size = piece.shape[op.getAxis()];
    for (int64_t o = 0; o < in.outer; ++o)
      for (int64_t j = 0; j < size * in.inner; ++j)
        piece.data[o * size * in.inner + j] =
            input.data[o * in.size * in.inner + start * in.inner + j];
    start += size;
    results.push_back(std::move(piece));
  }
  return results;
}

} // namespace

void tandem::eval::registerShapeKernels(KernelRegistry &registry) {
  registry.add(nn::ReshapeOp::getOperationName(), reshapeKernel);
  registry.add(nn::TransposeOp::getOperationName(), transposeKernel);
  registry.add(nn::BroadcastToOp::getOperationName(), broadcastToKernel);
  registry.add(nn::ConcatOp::getOperationName(), concatKernel);
  registry.add(nn::SliceOp::getOperationName(), sliceKernel);
  registry.add(nn::SplitOp::getOperationName(), splitKernel);
}
