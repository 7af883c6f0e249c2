//===- NNCodecOps.cpp - nn.quantize and nn.dequantize ---------------------===//
//
// The verifiers of the blockwise codecs (NNCodecOps.td): the payload has
// the value's shape, the scales are f32 with one per block of the last
// dimension.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/NN/IR/NNOps.h"
#include "tandem/Support/Codec.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace tandem::nn;

int tandem::nn::payloadCode(Type elementType) {
  if (elementType.isInteger(8))
    return tandem_codec::kInt8;
  if (isa<Float8E4M3FNType>(elementType))
    return tandem_codec::kF8E4M3FN;
  if (isa<Float8E5M2Type>(elementType))
    return tandem_codec::kF8E5M2;
  return -1;
}

bool tandem::nn::handlesPayloads(Operation *op) {
  return op->hasTrait<OpTrait::IsTerminator>() ||
         isa<QuantizeOp, DequantizeOp, ReshapeOp, TransposeOp, ConcatOp,
             SliceOp, SplitOp, StageEndOp>(op);
}

SmallVector<int64_t> tandem::nn::blockScalesShape(ArrayRef<int64_t> shape,
                                                  int64_t block) {
  SmallVector<int64_t> scales(shape);
  if (!scales.empty() && block > 0)
    scales.back() = tandem_codec::blockCount(scales.back(), block);
  return scales;
}

/// The checks both codecs share: `block` at least 1, a value of rank at
/// least 1 with the payload's shape, and f32 scales of the block shape.
static LogicalResult verifyCodec(Operation *op, int64_t block,
                                 RankedTensorType value,
                                 RankedTensorType payload,
                                 RankedTensorType scales, StringRef valueName) {
  if (block < 1)
    return op->emitOpError() << "'block' must be at least 1, found " << block;
  if (value.getRank() < 1)
    return op->emitOpError()
           << "expects the " << valueName
           << " to have rank at least 1 (blocks run along its last "
              "dimension)";
  if (value.getShape() != payload.getShape())
    return op->emitOpError()
           << "expects the payload to have the " << valueName << "'s shape "
           << RankedTensorType::get(value.getShape(), payload.getElementType())
           << ", found " << payload;
  SmallVector<int64_t> expected = blockScalesShape(value.getShape(), block);
  auto expectedType =
      RankedTensorType::get(expected, Float32Type::get(op->getContext()));
  if (scales != expectedType)
    return op->emitOpError()
           << "expects scales of type " << expectedType << " (one f32 per "
           << block << " elements of the last dimension), found " << scales;
  return success();
}

static RankedTensorType ranked(Value value) {
  return cast<RankedTensorType>(value.getType());
}

LogicalResult QuantizeOp::verify() {
  return verifyCodec(*this, getBlock(), ranked(getInput()),
                     ranked(getPayload()), ranked(getScales()), "input");
}

LogicalResult DequantizeOp::verify() {
  return verifyCodec(*this, getBlock(), ranked(getResult()),
                     ranked(getPayload()), ranked(getScales()), "result");
}
