//===- Config.cpp - model builder configurations --------------------------===//

#include "tandem/Models/Config.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace tandem::models;
using llvm::StringRef;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Checks that a size is positive; `what` names it as the user sees it.
static llvm::Error checkPositive(StringRef model, StringRef what,
                                 int64_t value) {
  if (value > 0)
    return llvm::Error::success();
  return makeError("invalid " + model + " config: " + what +
                   " must be positive, found " + llvm::Twine(value));
}

//===----------------------------------------------------------------------===//
// StageMarkers
//===----------------------------------------------------------------------===//

std::vector<int64_t> StageMarkers::layersWithMarker(int64_t layers) const {
  if (every > 0) {
    std::vector<int64_t> result;
    for (int64_t i = every - 1; i < layers - 1; i += every)
      result.push_back(i);
    return result;
  }
  return at;
}

llvm::Error StageMarkers::validate(int64_t layers) const {
  if (every != 0 && !at.empty())
    return makeError("invalid stage markers: give either markers every k "
                     "layers or markers at explicit layers, not both");
  if (every < 0)
    return makeError("invalid stage markers: the interval must be positive, "
                     "found " +
                     llvm::Twine(every));
  if (every > layers)
    return makeError("invalid stage markers: the interval " +
                     llvm::Twine(every) + " exceeds the number of layers (" +
                     llvm::Twine(layers) + ")");
  for (auto [i, layer] : llvm::enumerate(at)) {
    if (layer < 0 || layer >= layers)
      return makeError("invalid stage markers: a marker after layer " +
                       llvm::Twine(layer) + " is out of range; the model has " +
                       llvm::Twine(layers) + " layers, so markers go after " +
                       "layers 0.." + llvm::Twine(layers - 1));
    if (i > 0 && layer <= at[i - 1])
      return makeError("invalid stage markers: layer indices must be sorted "
                       "and unique, found " +
                       llvm::Twine(layer) + " after " + llvm::Twine(at[i - 1]));
  }
  return llvm::Error::success();
}

static std::string describeMarkers(const StageMarkers &stages) {
  if (stages.every > 0)
    return " stage-every=" + std::to_string(stages.every);
  if (!stages.at.empty())
    return " stage-at=" + llvm::join(llvm::map_range(stages.at,
                                                     [](int64_t i) {
                                                       return std::to_string(i);
                                                     }),
                                     ",");
  return "";
}

//===----------------------------------------------------------------------===//
// GPTConfig and MLPConfig
//===----------------------------------------------------------------------===//

llvm::Error GPTConfig::validate() const {
  for (auto [what, value] : {std::pair<StringRef, int64_t>{"layers", layers},
                             {"dim", dim},
                             {"heads", heads},
                             {"vocab", vocab},
                             {"seq", seq},
                             {"batch", batch}})
    if (llvm::Error err = checkPositive("GPT", what, value))
      return err;
  if (dim % heads != 0)
    return makeError("invalid GPT config: heads (" + llvm::Twine(heads) +
                     ") must divide dim (" + llvm::Twine(dim) + ")");
  return stages.validate(layers);
}

std::string GPTConfig::describe() const {
  std::string result;
  llvm::raw_string_ostream os(result);
  os << "layers=" << layers << " dim=" << dim << " heads=" << heads
     << " vocab=" << vocab << " seq=" << seq << " batch=" << batch
     << (tied ? " tied" : " untied") << describeMarkers(stages);
  return result;
}

llvm::Error MLPConfig::validate() const {
  for (auto [what, value] : {std::pair<StringRef, int64_t>{"layers", layers},
                             {"dim", dim},
                             {"inputs", inputs},
                             {"classes", classes},
                             {"batch", batch}})
    if (llvm::Error err = checkPositive("MLP", what, value))
      return err;
  return stages.validate(layers);
}

std::string MLPConfig::describe() const {
  std::string result;
  llvm::raw_string_ostream os(result);
  os << "layers=" << layers << " dim=" << dim << " inputs=" << inputs
     << " classes=" << classes << " batch=" << batch << describeMarkers(stages);
  return result;
}

//===----------------------------------------------------------------------===//
// Named configurations
//===----------------------------------------------------------------------===//

static GPTConfig makeGPT(StringRef name, int64_t layers, int64_t dim,
                         int64_t heads, int64_t vocab, int64_t seq,
                         int64_t batch) {
  GPTConfig config;
  config.name = name.str();
  config.layers = layers;
  config.dim = dim;
  config.heads = heads;
  config.vocab = vocab;
  config.seq = seq;
  config.batch = batch;
  config.tied = true;
  return config;
}

llvm::ArrayRef<StringRef> tandem::models::gptConfigNames() {
  static const StringRef names[] = {"tiny", "small", "gpt2-124m"};
  return names;
}

llvm::ArrayRef<StringRef> tandem::models::mlpConfigNames() {
  static const StringRef names[] = {"tiny"};
  return names;
}

static llvm::Error unknownConfig(StringRef model, StringRef name,
                                 llvm::ArrayRef<StringRef> known) {
  return makeError("unknown " + model + " config '" + name +
                   "'; known configs: " + llvm::join(known, ", "));
}

llvm::Expected<GPTConfig> tandem::models::getGPTConfig(StringRef name) {
  if (name == "tiny")
    return makeGPT(name, /*layers=*/8, /*dim=*/32, /*heads=*/2, /*vocab=*/256,
                   /*seq=*/16, /*batch=*/8);
  if (name == "small")
    return makeGPT(name, 4, 256, 4, 256, 64, 4);
  // GPT-2 small: 50257 tokens, 1024 positions, tied head.
  if (name == "gpt2-124m")
    return makeGPT(name, 12, 768, 12, 50257, 1024, 1);
  return unknownConfig("GPT", name, gptConfigNames());
}

llvm::Expected<MLPConfig> tandem::models::getMLPConfig(StringRef name) {
  if (name == "tiny") {
    MLPConfig config;
    config.name = name.str();
    config.layers = 4;
    config.dim = 64;
    config.inputs = 32;
    config.classes = 10;
    config.batch = 16;
    return config;
  }
  return unknownConfig("MLP", name, mlpConfigNames());
}
