//===- CodecKernels.cpp - nn.quantize and nn.dequantize -------------------===//
//
// The evaluator's blockwise codecs: the arithmetic is Codec.h's, which the
// generated code pastes in, so both encode and decode to the same bits. A
// payload tensor holds its codes as the doubles they represent (integers
// for i8, f8 values for the f8 types), like every evaluator tensor.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "tandem/Dialect/NN/IR/NNOps.h"
#include "tandem/Eval/Rounding.h"
#include "tandem/Support/Codec.h"

#include <algorithm>
#include <cmath>

using namespace tandem::eval;
namespace nn = tandem::nn;

namespace {

/// Rows of the last dimension and the blocks along it.
struct BlockGrid {
  int64_t rows, width, block, blocksPerRow;
};

BlockGrid gridOf(const Tensor &value, int64_t block) {
  int64_t width = value.shape.back();
  int64_t rows = width ? value.numElements() / width : 0;
  return {rows, width, block, tandem_codec::blockCount(width, block)};
}

KernelResult quantizeKernel(const KernelCall &call) {
  auto op = llvm::cast<nn::QuantizeOp>(call.op);
  const Tensor &input = *call.operands[0];
  auto code = static_cast<tandem_codec::Code>(
      nn::payloadCode(resultType(op, 0).getElementType()));
  Tensor payload = resultTensor(op, 0), scales = resultTensor(op, 1);
  BlockGrid grid = gridOf(input, op.getBlock());
  for (int64_t r = 0; r < grid.rows; ++r)
    for (int64_t b = 0; b < grid.blocksPerRow; ++b) {
      int64_t begin = r * grid.width + b * grid.block;
      int64_t end = r * grid.width + std::min(grid.width, (b + 1) * grid.block);
      double amax = 0.0;
      for (int64_t i = begin; i < end; ++i)
        amax = tandem_codec::foldMagnitude(amax, input.data[i]);
      float s = tandem_codec::blockScale(amax, code);
      scales.data[r * grid.blocksPerRow + b] = s;
      for (int64_t i = begin; i < end; ++i)
        payload.data[i] = tandem_codec::encode(input.data[i], s, code);
    }
  std::vector<Tensor> results;
  results.push_back(std::move(payload));
  results.push_back(std::move(scales));
  return results;
}

KernelResult dequantizeKernel(const KernelCall &call) {
  auto op = llvm::cast<nn::DequantizeOp>(call.op);
  const Tensor &payload = *call.operands[0], &scales = *call.operands[1];
  Tensor result = resultTensor(op);
  BlockGrid grid = gridOf(payload, op.getBlock());
  RoundingOptions options;
  options.keepF32AsF64 = call.interpreter.getOptions().f64;
  for (int64_t r = 0; r < grid.rows; ++r)
    for (int64_t j = 0; j < grid.width; ++j) {
      int64_t i = r * grid.width + j;
      float s = static_cast<float>(
          scales.data[r * grid.blocksPerRow + j / grid.block]);
      result.data[i] = roundToType(tandem_codec::decode(payload.data[i], s),
                                   result.elementType, options);
    }
  return single(std::move(result));
}

} // namespace

void tandem::eval::registerCodecKernels(KernelRegistry &registry) {
  registry.add(nn::QuantizeOp::getOperationName(), quantizeKernel);
  registry.add(nn::DequantizeOp::getOperationName(), dequantizeKernel);
}
