//===- EmitterSupport.cpp - types, literals and loops for the CPU emitter -===//
//
// Small pieces every part of the emitter uses: C++ storage types, exact
// literals, strides and index expressions, loop nests, op classes.
//
//===----------------------------------------------------------------------===//

#include "FunctionEmitter.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"

#include <cmath>

using namespace mlir;
namespace nn = tandem::nn;

namespace tandem::cpu::detail {

//===----------------------------------------------------------------------===//
// Types and literals
//===----------------------------------------------------------------------===//

/// The C++ storage type of `type`'s elements, or nullopt when the emitter
/// does not support it yet.
std::optional<StringRef> cType(Type type) {
  if (type.isF32())
    return StringRef("float");
  if (type.isF64())
    return StringRef("double");
  // 16-bit floats: the bits in a uint16_t inside a wrapper (the prelude)
  // that converts exactly to double and rounds once from double.
  if (type.isBF16())
    return StringRef("tk_bf16");
  if (type.isF16())
    return StringRef("tk_f16");
  if (type.isInteger(32))
    return StringRef("int32_t");
  if (type.isInteger(64))
    return StringRef("int64_t");
  // Codec payloads (nn.quantize): a byte per code, Codec.h's codeByte.
  // Only the codecs and data movement touch them (nn::handlesPayloads).
  if (nn::payloadCode(type) >= 0)
    return StringRef("uint8_t");
  return std::nullopt;
}

RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

StringRef cTypeOf(Value value) {
  return *cType(tensorType(value).getElementType());
}

int64_t numElements(Value value) { return tensorType(value).getNumElements(); }

/// Elements of a tensor of `shape` (1 for rank 0).
int64_t numElementsOf(llvm::ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  return count;
}

/// Bytes of `value`'s elements.
int64_t byteSize(Value value) {
  Type element = tensorType(value).getElementType();
  return numElements(value) * ((element.getIntOrFloatBitWidth() + 7) / 8);
}

/// A C++ expression of type double with exactly `value`.
std::string doubleLiteral(double value) {
  if (std::isnan(value))
    return "(double)NAN";
  if (std::isinf(value))
    return value > 0 ? "(double)INFINITY" : "(-(double)INFINITY)";
  // Hexadecimal floating-point literals are exact.
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("%a", value);
  return "(" + text + ")";
}

/// A C++ expression of the element's storage type with exactly the
/// constant's `index`th element.
std::string elementLiteral(DenseElementsAttr value, int64_t index,
                           StringRef type) {
  if (isa<FloatType>(value.getElementType())) {
    llvm::APFloat x = value.getValues<llvm::APFloat>()[index];
    bool losesInfo = false;
    x.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
              &losesInfo);
    return "(" + type.str() + ")" + doubleLiteral(x.convertToDouble());
  }
  int64_t x = value.getValues<llvm::APInt>()[index].getSExtValue();
  return "(" + type.str() + ")INT64_C(" + std::to_string(x) + ")";
}

bool emitDenseConstant(std::string &out, StringRef name,
                       DenseElementsAttr value, StringRef type) {
  int64_t count = value.getNumElements();
  // Run starts, found by comparing the stored bits (no formatting).
  std::vector<int64_t> starts;
  if (isa<FloatType>(value.getElementType())) {
    auto values = value.getValues<llvm::APFloat>();
    for (int64_t i = 0; i < count; ++i)
      if (i == 0 || !values[i].bitwiseIsEqual(values[i - 1]))
        starts.push_back(i);
  } else {
    auto values = value.getValues<llvm::APInt>();
    for (int64_t i = 0; i < count; ++i)
      if (i == 0 || values[i] != values[i - 1])
        starts.push_back(i);
  }
  llvm::raw_string_ostream os(out);
  if (static_cast<int64_t>(starts.size()) * 8 > count) {
    os << "alignas(64) const " << type << " " << name << "[" << count
       << "] = {";
    for (int64_t i = 0; i < count; ++i)
      os << (i % 4 ? " " : "\n    ") << elementLiteral(value, i, type) << ",";
    os << "\n};\n";
    return false;
  }
  // Written once, on the first call of an entry point (Unit::expanders),
  // and only read afterwards: the generated functions stay reentrant, and
  // loading the library runs none of its code.
  os << "alignas(64) " << type << " " << name << "[" << count << "];\n";
  os << "const struct { int64_t count; " << type << " value; } " << name
     << "_runs[" << starts.size() << "] = {";
  for (size_t r = 0; r < starts.size(); ++r) {
    int64_t end = r + 1 < starts.size() ? starts[r + 1] : count;
    os << (r % 4 ? " " : "\n    ") << "{" << end - starts[r] << ", "
       << elementLiteral(value, starts[r], type) << "},";
  }
  os << "\n};\n";
  os << "void " << name << "_expand() {\n"
     << "  int64_t i = 0;\n"
     << "  for (const auto &run : " << name << "_runs)\n"
     << "    for (int64_t k = 0; k < run.count; ++k)\n"
     << "      " << name << "[i++] = run.value;\n"
     << "}\n";
  return true;
}

/// Writes `for` loops over every dimension of `shape` (variables d0, d1..)
/// and returns the number of braces to close. Rank 0 opens one block.
int openLoops(llvm::raw_ostream &os, llvm::ArrayRef<int64_t> shape,
              StringRef indent, bool parallel, bool simd) {
  if (shape.empty()) {
    os << indent << "{\n";
    return 1;
  }
  std::string pad = indent.str();
  for (auto [d, size] : llvm::enumerate(shape)) {
    bool innermost = d + 1 == shape.size();
    if (d == 0 && parallel)
      os << pad << "#pragma omp parallel for"
         << (simd && innermost ? " simd" : "") << " if ("
         << numElementsOf(shape) << " >= 32768)\n";
    else if (simd && innermost)
      os << pad << "#pragma omp simd\n";
    os << pad << "for (int64_t d" << d << " = 0; d" << d << " < " << size
       << "; ++d" << d << ") {\n";
    pad += "  ";
  }
  return shape.size();
}

void closeLoops(llvm::raw_ostream &os, int count, StringRef indent) {
  for (int i = count - 1; i >= 0; --i)
    os << indent << std::string(2 * i, ' ') << "}\n";
}

//===----------------------------------------------------------------------===//
// Op classes
//===----------------------------------------------------------------------===//

/// The op traits kernel formation reads (NNOps.h).
bool isElementwise(Operation *op) {
  return op->hasTrait<nn::ElementwiseKernel>();
}

bool isReduction(Operation *op) { return op->hasTrait<nn::ReductionKernel>(); }

/// Elementwise ops whose results may hold integers (pure data movement).
bool allowsIntegerResult(Operation *op) {
  return isa<nn::BroadcastToOp, nn::ReshapeOp, nn::TransposeOp, nn::ConcatOp,
             nn::SliceOp, nn::SplitOp, nn::StageEndOp, nn::ConstantOp>(op);
}

} // namespace tandem::cpu::detail
