//===- GradientRulesCodec.cpp - straight-through codec gradients ----------===//
//
// nn.quantize and nn.dequantize are differentiated straight through: the
// pair is the identity for the gradient, as in quantization-aware training.
// The payload's cotangent is the cotangent of the value it encodes
// (cotangentType), so it passes from the decoder back to the encoder's
// input unchanged, over nn.stage_end markers in between. The scales get
// none: their dependence on the block's largest magnitude is ignored.
//
//===----------------------------------------------------------------------===//

#include "GradientRules.h"

using namespace mlir;
using namespace tandem::nn;
using namespace tandem::nn::autodiff;

/// The nn.quantize whose payload `v` is, directly or through nn.stage_end
/// markers, or null.
static QuantizeOp encoderOf(Value v) {
  while (auto marker = v.getDefiningOp<StageEndOp>())
    v = marker.getOperand(cast<OpResult>(v).getResultNumber());
  auto quantize = v.getDefiningOp<QuantizeOp>();
  return quantize && quantize.getPayload() == v ? quantize : QuantizeOp();
}

Type tandem::nn::autodiff::cotangentType(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type)
    return Type();
  if (QuantizeOp encoder = encoderOf(v))
    return type.clone(tensorType(encoder.getInput()).getElementType());
  return isa<FloatType>(type.getElementType()) ? type : Type();
}

namespace {

using Cots = ArrayRef<Value>;
using Out = SmallVectorImpl<Value>;

LogicalResult quantizeRule(GradBuilder &, Operation *, Cots cots, Out &out) {
  out.push_back(cots[0]);
  return success();
}

LogicalResult dequantizeRule(GradBuilder &gb, Operation *op, Cots cots,
                             Out &out) {
  Value payload = op->getOperand(0);
  Type type = cotangentType(payload);
  if (!cots[0] || !encoderOf(payload)) {
    out.append({Value(), Value()});
    return success();
  }
  Value cot = cots[0];
  if (cot.getType() != type) {
    BoolAttr saturate;
    if (isFloat8(cast<RankedTensorType>(type).getElementType()))
      saturate = gb.b.getBoolAttr(true);
    cot = CastOp::create(gb.b, gb.loc, type, cot, saturate);
  }
  out.append({cot, Value()});
  return success();
}

} // namespace

void tandem::nn::autodiff::registerCodecGradients(GradRuleMap &rules) {
  rules[QuantizeOp::getOperationName()] = quantizeRule;
  rules[DequantizeOp::getOperationName()] = dequantizeRule;
}
