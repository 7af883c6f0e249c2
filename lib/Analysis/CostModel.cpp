//===- CostModel.cpp - FLOPs, bytes and time of nn ops --------------------===//
//
// One rule per nn op, looked up by name so that the list of ops with a rule
// (what the op-coverage test checks) is the table itself. Rules count what
// an unfused kernel does: every operand read once, every result written
// once. Per-element FLOP constants (docs/cost-model.md) are rough on purpose:
// these ops are bound by memory bandwidth on every shipped device, so the
// constants only matter for the roofline's choice, not its value.
//
//===----------------------------------------------------------------------===//

#include "tandem/Analysis/CostModel.h"

#include "tandem/Dialect/NN/IR/NNOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <functional>

using namespace mlir;
using namespace llvm;
using namespace tandem::analysis;
namespace nn = tandem::nn;

double tandem::analysis::bytesOf(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return 0.0;
  unsigned bits = shaped.getElementType().getIntOrFloatBitWidth();
  return static_cast<double>(shaped.getNumElements()) *
         std::max(1u, (bits + 7) / 8);
}

std::string tandem::analysis::peakKey(Type elementType) {
  if (auto f = dyn_cast<FloatType>(elementType)) {
    if (f.isF64())
      return "f64";
    if (f.isBF16())
      return "bf16";
    if (f.isF16())
      return "f16";
    if (f.getWidth() == 8)
      return "f8";
  }
  return "f32";
}

namespace {

using Rule = std::function<Expected<OpCost>(Operation *)>;

double elements(Value value) {
  auto shaped = cast<ShapedType>(value.getType());
  return static_cast<double>(shaped.getNumElements());
}

Type elementType(Value value) {
  return cast<ShapedType>(value.getType()).getElementType();
}

/// Bytes of every operand and result: the unfused kernel's traffic.
double ioBytes(Operation *op) {
  double bytes = 0.0;
  for (Type t : op->getOperandTypes())
    bytes += bytesOf(t);
  for (Type t : op->getResultTypes())
    bytes += bytesOf(t);
  return bytes;
}

/// `flopsPerElement` for every element of the first result, io bytes.
OpCost perResultElement(Operation *op, double flopsPerElement) {
  OpCost cost;
  cost.flops = flopsPerElement * elements(op->getResult(0));
  cost.bytes = ioBytes(op);
  cost.dtype = peakKey(elementType(op->getResult(0)));
  return cost;
}

/// Elementwise ops: `flops` per result element.
Rule elementwise(double flops) {
  return [flops](Operation *op) -> Expected<OpCost> {
    return perResultElement(op, flops);
  };
}

Expected<OpCost> nothing(Operation *) { return OpCost(); }

/// Copies (transpose, broadcast, concat, slice, split): bytes only.
Expected<OpCost> copy(Operation *op) {
  OpCost cost;
  cost.bytes = ioBytes(op);
  return cost;
}

Expected<OpCost> matmul(Operation *op) {
  auto mm = cast<nn::MatmulOp>(op);
  auto lhs = cast<ShapedType>(mm.getLhs().getType());
  int64_t rank = lhs.getRank();
  int64_t k = lhs.getDimSize(mm.getTransposeLhs() ? rank - 2 : rank - 1);
  OpCost cost;
  // The result has every batch, M and N once; each entry is K multiply-adds.
  cost.flops = 2.0 * elements(mm.getResult()) * static_cast<double>(k);
  cost.bytes = ioBytes(op);
  cost.dtype = peakKey(lhs.getElementType());
  cost.matrix = true;
  return cost;
}

/// Fused attention and its gradient: `products` matmuls of q·kᵀ's size over
/// all heads, and `perScore` flops plus an exp on every score; the scores
/// stay on chip, so only the operands and results are moved. Causal
/// masking is not discounted.
template <typename OpT>
OpCost attentionCost(OpT at, double products, double perScore) {
  auto q = cast<ShapedType>(at.getQuery().getType());
  auto k = cast<ShapedType>(at.getKey().getType());
  double b = q.getDimSize(0), tq = q.getDimSize(1), d = q.getDimSize(2);
  double tk = k.getDimSize(1), heads = at.getHeads();
  double scores = b * heads * tq * tk;
  OpCost cost;
  cost.flops = products * (2.0 * b * tq * tk * d) +
               scores * (perScore + kTranscendentalFlops);
  cost.bytes = ioBytes(at);
  cost.dtype = peakKey(q.getElementType());
  cost.matrix = true;
  return cost;
}

/// QKᵀ and PV, then the scale and the softmax on every score.
Expected<OpCost> attention(Operation *op) {
  return attentionCost(cast<nn::AttentionOp>(op), 2, 5);
}

/// The probabilities recomputed (QKᵀ, then e^(s − lse) from the forward's
/// log-sum-exp), dP = dy·Vᵀ, dV = Pᵀ·dy, dQ = dS·K and dK = dSᵀ·Q, and per
/// score its scale, the subtraction of lse, dS = P(dP − D) and its scale.
Expected<OpCost> attentionGrad(Operation *op) {
  return attentionCost(cast<nn::AttentionGradOp>(op), 5, 5);
}

/// Per input element (reductions and the per-axis ops read each element of
/// the input; the result may be smaller).
Rule perInputElement(double flops) {
  return [flops](Operation *op) -> Expected<OpCost> {
    OpCost cost;
    cost.flops = flops * elements(op->getOperand(0));
    cost.bytes = ioBytes(op);
    cost.dtype = peakKey(elementType(op->getOperand(0)));
    return cost;
  };
}

Expected<OpCost> reduceMean(Operation *op) {
  OpCost cost;
  // A sum over the input, then one division per result element.
  cost.flops = elements(op->getOperand(0)) + elements(op->getResult(0));
  cost.bytes = ioBytes(op);
  cost.dtype = peakKey(elementType(op->getOperand(0)));
  return cost;
}

/// A gather: the ids and the selected rows are read, the result written.
Expected<OpCost> embedding(Operation *op) {
  auto emb = cast<nn::EmbeddingOp>(op);
  OpCost cost;
  cost.bytes =
      bytesOf(emb.getIds().getType()) + 2 * bytesOf(emb.getResult().getType());
  return cost;
}

constexpr double kT = kTranscendentalFlops;

const StringMap<Rule> &rules() {
  static const StringMap<Rule> table = [] {
    StringMap<Rule> t;
    // Nothing at run time: symbols, reads of parameters and constants
    // (resident), a view, a marker.
    for (StringRef name : {"nn.parameter", "nn.param", "nn.constant",
                           "nn.reshape", "nn.stage_end"})
      t[name] = nothing;
    for (StringRef name : {"nn.neg", "nn.relu", "nn.cast", "nn.add", "nn.sub",
                           "nn.mul", "nn.div", "nn.maximum", "nn.minimum",
                           "nn.greater_equal", "nn.select"})
      t[name] = elementwise(1.0);
    for (StringRef name : {"nn.exp", "nn.log", "nn.tanh", "nn.sqrt", "nn.rsqrt",
                           "nn.sin", "nn.cos", "nn.pow"})
      t[name] = elementwise(kT);
    // 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))): 8 arithmetic ops + tanh.
    t["nn.gelu"] = elementwise(8.0 + kT);
    // The tanh's argument (4), the two terms (9) and the cotangent's product.
    t["nn.gelu_grad"] = elementwise(14.0 + kT);
    // x / (1 + exp(-x)): negate, add, divide + exp.
    t["nn.silu"] = elementwise(3.0 + kT);
    // A series or continued fraction and an exp: one transcendental each.
    t["nn.erf"] = elementwise(kT);
    t["nn.erfc"] = elementwise(kT);
    // The identity: moves bytes (when not fused away), computes nothing.
    t["nn.stop_gradient"] = elementwise(0.0);
    t["nn.matmul"] = matmul;
    t["nn.attention"] = attention;
    t["nn.attention_grad"] = attentionGrad;
    // Max, subtract, exp, sum, normalize.
    t["nn.softmax"] = perInputElement(4.0 + kT);
    t["nn.log_softmax"] = perInputElement(4.0 + kT);
    // Mean, subtract, square-and-sum, normalize, scale, shift.
    t["nn.layer_norm"] = perInputElement(7.0);
    // The statistics again (mean, square-and-sum), x̂, ĝ = dy·w, the sums
    // of ĝ and ĝ·x̂, then dx's four ops.
    t["nn.layer_norm_grad"] = perInputElement(14.0);
    // Square-and-sum, x̂, ĝ, the sum of ĝ·x̂, then dx's three ops.
    t["nn.rms_norm_grad"] = perInputElement(10.0);
    // Square-and-sum, normalize, scale.
    t["nn.rms_norm"] = perInputElement(4.0);
    // A log-softmax over the logits.
    t["nn.cross_entropy"] = perInputElement(4.0 + kT);
    // A softmax, minus the one-hot, times the scaled cotangent.
    t["nn.cross_entropy_grad"] = perInputElement(6.0 + kT);
    t["nn.reduce_sum"] = perInputElement(1.0);
    t["nn.reduce_max"] = perInputElement(1.0);
    t["nn.reduce_mean"] = reduceMean;
    // A block's largest magnitude, then per element a division, a rounding
    // and a clamp (the input's type keys the peak: codes are not math).
    t["nn.quantize"] = perInputElement(4.0);
    // One product per code, in the result's type.
    t["nn.dequantize"] = elementwise(1.0);
    t["nn.embedding"] = embedding;
    // Reads the ids and writes the rows of zeros and ones: bytes only.
    t["nn.one_hot"] = copy;
    // One add per cotangent element into the table.
    t["nn.embedding_grad"] = perInputElement(1.0);
    for (StringRef name : {"nn.transpose", "nn.broadcast_to", "nn.concat",
                           "nn.slice", "nn.split"})
      t[name] = copy;
    return t;
  }();
  return table;
}

} // namespace

Expected<OpCost> tandem::analysis::estimateOp(Operation *op) {
  StringRef name = op->getName().getStringRef();
  // nn's types are statically shaped (its verifier checks), so the rules
  // read every shape without checking.
  auto it = rules().find(name);
  if (it == rules().end())
    return createStringError(inconvertibleErrorCode(),
                             "no cost rule for op '" + name + "'");
  return it->second(op);
}

Expected<double> tandem::analysis::timeOn(const OpCost &cost,
                                          const Device &device,
                                          const CostOptions &options) {
  if (cost.isFree())
    return 0.0;
  double compute = 0.0;
  if (cost.flops > 0) {
    std::string key = cost.matrix ? cost.dtype : "f32";
    if (cost.matrix && key == "f32" && options.tf32)
      key = "tf32";
    std::optional<double> peak = device.peak(key);
    if (!peak)
      return createStringError(
          inconvertibleErrorCode(),
          formatv("device '{0}' has no peak_flops for {1}", device.name, key)
              .str());
    compute = cost.flops / *peak;
  }
  double memory = cost.bytes / device.memoryBandwidth;
  return std::max(compute, memory) + device.launchOverhead;
}

Expected<double> tandem::analysis::estimateTime(Operation *op,
                                                const Device &device,
                                                const CostOptions &options) {
  Expected<OpCost> cost = estimateOp(op);
  if (!cost)
    return cost.takeError();
  return timeOn(*cost, device, options);
}

std::vector<std::string> tandem::analysis::opsWithCostRules() {
  std::vector<std::string> names;
  for (const auto &entry : rules())
    names.push_back(entry.getKey().str());
  llvm::sort(names);
  return names;
}
