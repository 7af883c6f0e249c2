//===- Tensor.cpp - values of the reference evaluator ---------------------===//

#include "tandem/Eval/Tensor.h"

#include "llvm/Support/raw_ostream.h"

using namespace tandem::eval;

int64_t tandem::eval::numElementsOf(llvm::ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  return count;
}

llvm::SmallVector<int64_t>
tandem::eval::stridesOf(llvm::ArrayRef<int64_t> shape) {
  llvm::SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

Tensor::Tensor(mlir::Type elementType, llvm::ArrayRef<int64_t> shape)
    : elementType(elementType), shape(shape.begin(), shape.end()),
      data(numElementsOf(shape), 0.0) {}

Tensor::Tensor(mlir::RankedTensorType type)
    : Tensor(type.getElementType(), type.getShape()) {}

llvm::SmallVector<int64_t> Tensor::strides() const { return stridesOf(shape); }

mlir::RankedTensorType Tensor::getType() const {
  return mlir::RankedTensorType::get(shape, elementType);
}

std::string Tensor::typeString() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << getType();
  return text;
}
