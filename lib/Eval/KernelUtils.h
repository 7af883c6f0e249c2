//===- KernelUtils.h - helpers shared by the kernel files -------*- C++ -*-===//

#ifndef TANDEM_LIB_EVAL_KERNELUTILS_H
#define TANDEM_LIB_EVAL_KERNELUTILS_H

#include "tandem/Eval/Interpreter.h"
#include "tandem/Eval/Kernels.h"

#include "mlir/IR/BuiltinTypes.h"

namespace tandem::eval {

/// The type of `op`'s result `index`.
inline mlir::RankedTensorType resultType(mlir::Operation *op,
                                         unsigned index = 0) {
  return llvm::cast<mlir::RankedTensorType>(op->getResult(index).getType());
}

/// A zero tensor shaped like `op`'s result `index`.
inline Tensor resultTensor(mlir::Operation *op, unsigned index = 0) {
  return Tensor(resultType(op, index));
}

/// One result.
inline KernelResult single(Tensor tensor) {
  std::vector<Tensor> results;
  results.push_back(std::move(tensor));
  return results;
}

/// For each element of `outShape` (row-major), the offset of the element of
/// a tensor of `inShape` that NumPy broadcasting maps to it.
llvm::SmallVector<int64_t> broadcastOffsets(llvm::ArrayRef<int64_t> inShape,
                                            llvm::ArrayRef<int64_t> outShape);

/// Splits `shape` around `axis` into (outer, size, inner) for loops over
/// one axis.
struct AxisSplit {
  int64_t outer, size, inner;
};
AxisSplit splitAt(llvm::ArrayRef<int64_t> shape, int64_t axis);

} // namespace tandem::eval

#endif // TANDEM_LIB_EVAL_KERNELUTILS_H
