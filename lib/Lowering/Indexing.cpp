//===- Indexing.cpp - index expressions every emitter writes --------------===//

#include "tandem/Lowering/Indexing.h"

#include "llvm/ADT/STLExtras.h"

namespace tandem::lowering {

llvm::SmallVector<int64_t> rowMajorStrides(llvm::ArrayRef<int64_t> shape) {
  llvm::SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// Strides of a tensor of `inShape` read at the indices of `outShape` under
/// NumPy broadcasting: aligned from the right, 0 for a size-1 dimension.
llvm::SmallVector<int64_t> broadcastStrides(llvm::ArrayRef<int64_t> inShape,
                                            llvm::ArrayRef<int64_t> outShape) {
  int64_t rank = outShape.size(), lead = rank - inShape.size();
  llvm::SmallVector<int64_t> in = rowMajorStrides(inShape);
  llvm::SmallVector<int64_t> strides(rank, 0);
  for (int64_t d = lead; d < rank; ++d)
    strides[d] = inShape[d - lead] == 1 ? 0 : in[d - lead];
  return strides;
}

/// "d0 * 64 + d1" for loop variables d0.. (or `names`, one per stride) and
/// `strides` (terms with stride 0 dropped), plus `base`; "0" when nothing
/// remains.
std::string offsetExpr(llvm::ArrayRef<int64_t> strides, int64_t base,
                       llvm::ArrayRef<std::string> names) {
  std::string text;
  for (auto [d, stride] : llvm::enumerate(strides)) {
    if (stride == 0)
      continue;
    if (!text.empty())
      text += " + ";
    text += names.empty() ? "d" + std::to_string(d) : names[d];
    if (stride != 1)
      text += " * " + std::to_string(stride);
  }
  if (base != 0 || text.empty())
    text += (text.empty() ? "" : " + ") + std::to_string(base);
  return text;
}

} // namespace tandem::lowering
