//===- MLP.cpp - multi-layer perceptron builder ---------------------------===//

#include "tandem/Models/MLP.h"

#include "ModelBuilder.h"

#include <cmath>

using namespace mlir;
using namespace tandem;
using namespace tandem::models;
using tandem::models::detail::ModelBuilder;

/// `x · weight + bias`, weights uniform in ±1/sqrt(fan_in) like PyTorch's
/// nn.Linear, biases zero.
static Value linear(ModelBuilder &mb, Value x, const std::string &name,
                    int64_t in, int64_t out) {
  OpBuilder &b = mb.builder();
  double bound = 1.0 / std::sqrt(static_cast<double>(in));
  Value w = mb.param(name + ".weight", {in, out}, mb.uniform(-bound, bound));
  Value y = nn::MatmulOp::create(b, mb.loc(name), x, w);
  Value bias = mb.param(name + ".bias", {out}, mb.zeros());
  return nn::AddOp::create(b, mb.loc(name), y, bias);
}

llvm::Expected<OwningOpRef<ModuleOp>>
tandem::models::buildMLP(MLIRContext &context, const MLPConfig &config) {
  if (llvm::Error err = config.validate())
    return std::move(err);
  auto features = RankedTensorType::get({config.batch, config.inputs},
                                        Float32Type::get(&context));
  auto labels =
      RankedTensorType::get({config.batch}, IntegerType::get(&context, 32));
  std::string text = "mlp";
  if (!config.name.empty())
    text += " " + config.name;
  ModelBuilder mb(context, text + ": " + config.describe(), {features, labels});
  OpBuilder &b = mb.builder();

  std::vector<int64_t> markers = config.stages.layersWithMarker(config.layers);
  auto nextMarker = markers.begin();
  Value x = mb.argument(0);
  int64_t width = config.inputs;
  for (int64_t layer = 0; layer < config.layers; ++layer) {
    std::string name = "fc." + std::to_string(layer);
    x = linear(mb, x, name, width, config.dim);
    x = nn::GeluOp::create(b, mb.loc(name + ".gelu"), x);
    width = config.dim;
    if (nextMarker != markers.end() && *nextMarker == layer) {
      auto end = nn::StageEndOp::create(
          b, mb.loc("stage_end.after.fc." + std::to_string(layer)), x);
      x = end.getResult(0);
      ++nextMarker;
    }
  }
  Value logits = linear(mb, x, "head", width, config.classes);
  Value loss =
      nn::CrossEntropyOp::create(b, mb.loc("loss"), logits, mb.argument(1),
                                 /*classes=*/nullptr);
  return mb.finish(loss);
}

int64_t tandem::models::mlpParameterCount(const MLPConfig &config) {
  int64_t d = config.dim;
  int64_t count = config.inputs * d + d;
  count += (config.layers - 1) * (d * d + d);
  count += d * config.classes + config.classes;
  return count;
}
