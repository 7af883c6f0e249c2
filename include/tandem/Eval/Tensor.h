//===- Tensor.h - values of the reference evaluator -------------*- C++ -*-===//
//
// The evaluator's value: a shape, an element type and row-major elements
// held as doubles. Every element type Tandem uses (f64 ... f8, i32, i64) is
// exactly representable in double, so one storage type serves all of them;
// an op's result is rounded to its element type after the op computes in
// double (see Rounding.h).
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_EVAL_TENSOR_H
#define TANDEM_EVAL_TENSOR_H

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <string>
#include <vector>

namespace tandem::eval {

struct Tensor {
  /// The element type (an mlir builtin float or integer type).
  mlir::Type elementType;
  llvm::SmallVector<int64_t> shape;
  /// Row-major elements.
  std::vector<double> data;

  Tensor() = default;
  /// A zero-filled tensor of `shape`.
  Tensor(mlir::Type elementType, llvm::ArrayRef<int64_t> shape);
  /// A tensor of `type`'s shape and element type, zero-filled.
  explicit Tensor(mlir::RankedTensorType type);

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numElements() const { return static_cast<int64_t>(data.size()); }
  /// Row-major strides of `shape` (in elements).
  llvm::SmallVector<int64_t> strides() const;
  /// The builtin tensor type with this shape and element type.
  mlir::RankedTensorType getType() const;
  /// "tensor<2x3xf32>", for messages.
  std::string typeString() const;
};

/// Number of elements of `shape` (1 for rank 0).
int64_t numElementsOf(llvm::ArrayRef<int64_t> shape);
/// Row-major strides of `shape`.
llvm::SmallVector<int64_t> stridesOf(llvm::ArrayRef<int64_t> shape);

} // namespace tandem::eval

#endif // TANDEM_EVAL_TENSOR_H
