//===- KernelUtils.cpp - helpers shared by the kernel files ---------------===//

#include "KernelUtils.h"

using namespace tandem::eval;

llvm::SmallVector<int64_t>
tandem::eval::broadcastOffsets(llvm::ArrayRef<int64_t> inShape,
                               llvm::ArrayRef<int64_t> outShape) {
  // Input strides aligned with the output's trailing dimensions; a size-1
  // (or missing) dimension repeats, so its stride is 0.
  int64_t rank = static_cast<int64_t>(outShape.size());
  int64_t lead = rank - static_cast<int64_t>(inShape.size());
  llvm::SmallVector<int64_t> inStrides = stridesOf(inShape);
  llvm::SmallVector<int64_t> strides(rank, 0);
  for (int64_t d = lead; d < rank; ++d)
    strides[d] = inShape[d - lead] == 1 ? 0 : inStrides[d - lead];

  int64_t count = numElementsOf(outShape);
  llvm::SmallVector<int64_t> offsets(count);
  llvm::SmallVector<int64_t> index(rank, 0);
  int64_t offset = 0;
  for (int64_t i = 0; i < count; ++i) {
    offsets[i] = offset;
    // Row-major increment of `index`, updating `offset` incrementally.
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < outShape[d]) {
        offset += strides[d];
        break;
      }
      offset -= strides[d] * (outShape[d] - 1);
      index[d] = 0;
    }
  }
  return offsets;
}

AxisSplit tandem::eval::splitAt(llvm::ArrayRef<int64_t> shape, int64_t axis) {
  AxisSplit split{1, shape[axis], 1};
  for (int64_t d = 0; d < axis; ++d)
    split.outer *= shape[d];
  for (int64_t d = axis + 1; d < static_cast<int64_t>(shape.size()); ++d)
    split.inner *= shape[d];
  return split;
}
