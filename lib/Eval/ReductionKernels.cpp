//===- ReductionKernels.cpp - reduce_sum / reduce_mean / reduce_max -------===//
//
// Order: the input is visited in row-major order and each element is added
// into its output element, so every output sums its inputs in the row-major
// order of the reduced indices, in double. Means divide that sum by the count.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "tandem/Dialect/NN/IR/NNOps.h"

#include <cmath>
#include <limits>

using namespace tandem::eval;
namespace nn = tandem::nn;

namespace {

enum class ReduceKind { Sum, Mean, Max };

template <ReduceKind Kind> KernelResult reduceKernel(const KernelCall &call) {
  auto axes = call.op->getAttrOfType<mlir::DenseI64ArrayAttr>("axes");
  const Tensor &input = *call.operands[0];
  Tensor result = resultTensor(call.op);
  // Output strides over the input's dimensions; reduced dimensions have 0.
  int64_t rank = input.rank();
  llvm::SmallVector<int64_t> keptShape;
  llvm::SmallVector<bool> reduced(rank, false);
  for (int64_t axis : axes.asArrayRef()) {
    if (axis < 0 || axis >= rank)
      return opError(call.op, "axis out of range");
    reduced[axis] = true;
  }
  for (int64_t d = 0; d < rank; ++d)
    keptShape.push_back(reduced[d] ? 1 : input.shape[d]);
  llvm::SmallVector<int64_t> keptStrides = stridesOf(keptShape), strides;
  for (int64_t d = 0; d < rank; ++d)
    strides.push_back(reduced[d] ? 0 : keptStrides[d]);
  if (result.numElements() != numElementsOf(keptShape))
    return opError(call.op, "result type does not match the reduction");

  if (Kind == ReduceKind::Max)
    std::fill(result.data.begin(), result.data.end(),
              -std::numeric_limits<double>::infinity());
  llvm::SmallVector<int64_t> index(rank, 0);
  int64_t out = 0;
  for (int64_t i = 0; i < input.numElements(); ++i) {
    double x = input.data[i];
    double &acc = result.data[out];
    if (Kind == ReduceKind::Max)
      acc = (std::isnan(x) || std::isnan(acc)) ? NAN : std::fmax(acc, x);
    else
      acc += x;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < input.shape[d]) {
        out += strides[d];
        break;
      }
      out -= strides[d] * (input.shape[d] - 1);
      index[d] = 0;
    }
  }
  if (Kind == ReduceKind::Mean) {
    double count = 1.0;
    for (int64_t axis : axes.asArrayRef())
      count *= static_cast<double>(input.shape[axis]);
    for (double &x : result.data)
      x /= count;
  }
  return single(std::move(result));
}

} // namespace

void tandem::eval::registerReductionKernels(KernelRegistry &registry) {
  registry.add(nn::ReduceSumOp::getOperationName(),
               reduceKernel<ReduceKind::Sum>);
  registry.add(nn::ReduceMeanOp::getOperationName(),
               reduceKernel<ReduceKind::Mean>);
  registry.add(nn::ReduceMaxOp::getOperationName(),
               reduceKernel<ReduceKind::Max>);
}
