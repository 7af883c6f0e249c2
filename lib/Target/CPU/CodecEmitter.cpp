//===- CodecEmitter.cpp - nn.quantize and nn.dequantize as C++ ------------===//
//
// The generated loops call the codec the evaluator uses (tandem/Support/
// Codec.h, pasted into the prelude), so both give the same bits. Payloads
// are stored one byte per code (Codec.h's codeByte), scales as float.
//
//===----------------------------------------------------------------------===//

#include "FunctionEmitter.h"

#include "tandem/Support/Codec.h"

using namespace mlir;
namespace nn = tandem::nn;

namespace tandem::cpu::detail {

namespace {
/// The loop bounds of a codec over `value` in blocks of `block`.
struct CodecLoops {
  int64_t rows, width, block, blocksPerRow, lastBlock;
  std::string code;
};

CodecLoops loopsOf(Value value, int64_t block, Type payloadElement) {
  int64_t width = tensorType(value).getShape().back();
  int64_t rows = width ? numElements(value) / width : 0;
  int64_t blocks = tandem_codec::blockCount(width, block);
  int64_t last = width - (blocks - 1) * block;
  return {rows,
          width,
          block,
          blocks,
          last,
          "(tandem_codec::Code)" +
              std::to_string(nn::payloadCode(payloadElement))};
}
} // namespace

void FunctionEmitter::emitQuantize(llvm::raw_ostream &os, nn::QuantizeOp op) {
  CodecLoops l = loopsOf(op.getInput(), op.getBlock(),
                         tensorType(op.getPayload()).getElementType());
  if (!l.rows || !l.width)
    return;
  std::string x = ptr(op.getInput()), q = ptr(op.getPayload()),
              s = ptr(op.getScales());
  os << "  for (int64_t r = 0; r < " << l.rows << "; ++r)\n";
  os << "    for (int64_t b = 0; b < " << l.blocksPerRow << "; ++b) {\n";
  os << "      const int64_t begin = r * " << l.width << " + b * " << l.block
     << ";\n";
  os << "      const int64_t end = begin + (b == " << l.blocksPerRow - 1
     << " ? " << l.lastBlock << " : " << l.block << ");\n";
  os << "      double amax = 0.0;\n";
  os << "      for (int64_t i = begin; i < end; ++i)\n";
  os << "        amax = tandem_codec::foldMagnitude(amax, (double)" << x
     << "[i]);\n";
  os << "      const float s = tandem_codec::blockScale(amax, " << l.code
     << ");\n";
  os << "      " << s << "[r * " << l.blocksPerRow << " + b] = s;\n";
  os << "      for (int64_t i = begin; i < end; ++i)\n";
  os << "        " << q << "[i] = tandem_codec::codeByte("
     << "tandem_codec::encode((double)" << x << "[i], s, " << l.code << "), "
     << l.code << ");\n";
  os << "    }\n";
}

void FunctionEmitter::emitDequantize(llvm::raw_ostream &os,
                                     nn::DequantizeOp op) {
  CodecLoops l = loopsOf(op.getPayload(), op.getBlock(),
                         tensorType(op.getPayload()).getElementType());
  if (!l.rows || !l.width)
    return;
  Value result = op.getResult();
  os << "  for (int64_t r = 0; r < " << l.rows << "; ++r)\n";
  os << "    for (int64_t j = 0; j < " << l.width << "; ++j) {\n";
  os << "      const int64_t i = r * " << l.width << " + j;\n";
  os << "      " << ptr(result) << "[i] = (" << cTypeOf(result)
     << ")tandem_codec::decode(tandem_codec::codeOfByte("
     << ptr(op.getPayload()) << "[i], " << l.code << "), "
     << ptr(op.getScales()) << "[r * " << l.blocksPerRow << " + j / " << l.block
     << "]);\n";
  os << "    }\n";
}

} // namespace tandem::cpu::detail
