//===- Config.h - model builder configurations ------------------*- C++ -*-===//
//
// The sizes of the models Tandem builds (GPT-2-style decoders and MLPs),
// where their pipeline-stage markers go, and the named configurations the
// tools accept. Validation reports bad user input as llvm::Error: Debian's
// MLIR has assertions off, so a size we do not check becomes a crash later.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_MODELS_CONFIG_H
#define TANDEM_MODELS_CONFIG_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tandem::models {

/// Where `nn.stage_end` markers go on the residual stream. A marker "after
/// layer i" (0-based) ends a pipeline stage with layer i. Give `every` or
/// `at`, not both; neither means a single stage.
struct StageMarkers {
  /// A marker after every `every` layers: after layers every-1, 2*every-1,
  /// ... but never after the last layer, so L layers with every = k make
  /// ceil(L/k) stages and the last stage keeps the head and the loss.
  /// 0 means no periodic markers.
  int64_t every = 0;
  /// Markers after these layers (sorted, unique, each in [0, layers)). A
  /// marker after the last layer puts the head and the loss in a stage of
  /// their own.
  std::vector<int64_t> at;

  bool empty() const { return every == 0 && at.empty(); }

  /// The layers after which a marker goes, in increasing order, for a model
  /// of `layers` layers. Expects markers that validate().
  std::vector<int64_t> layersWithMarker(int64_t layers) const;

  /// Checks the markers against a model of `layers` layers.
  llvm::Error validate(int64_t layers) const;
};

/// A GPT-2-style decoder (pre-LN blocks, learned position embeddings).
struct GPTConfig {
  /// Transformer blocks.
  int64_t layers = 0;
  /// Model width (n_embd).
  int64_t dim = 0;
  /// Attention heads; must divide `dim`.
  int64_t heads = 0;
  /// Vocabulary size.
  int64_t vocab = 0;
  /// Sequence length. The position embedding `wpe` has exactly `seq` rows,
  /// so the parameter count grows with it (GPT-2 itself has 1024).
  int64_t seq = 0;
  /// Sequences per step.
  int64_t batch = 0;
  /// Whether the LM head reuses the token embedding `wte` (GPT-2 does);
  /// otherwise it has its own `lm_head.weight` (dim x vocab, no bias).
  bool tied = true;
  StageMarkers stages;
  /// The named configuration this came from (for locations and summaries);
  /// empty for a hand-made one.
  std::string name;

  llvm::Error validate() const;
  /// One line describing the sizes, e.g. "layers=8 dim=32 heads=2 ...".
  std::string describe() const;
};

/// A multi-layer perceptron classifier: `layers` hidden layers of width
/// `dim` (matmul + bias + gelu), then an output layer to `classes` logits
/// and a cross-entropy loss.
struct MLPConfig {
  /// Hidden layers.
  int64_t layers = 0;
  /// Hidden width.
  int64_t dim = 0;
  /// Input features.
  int64_t inputs = 0;
  /// Output classes.
  int64_t classes = 0;
  /// Examples per step.
  int64_t batch = 0;
  /// Markers after hidden layers.
  StageMarkers stages;
  std::string name;

  llvm::Error validate() const;
  std::string describe() const;
};

/// Named GPT configurations, in the order `--help` lists them: tiny, small,
/// gpt2-124m.
llvm::ArrayRef<llvm::StringRef> gptConfigNames();
/// Named MLP configurations: tiny.
llvm::ArrayRef<llvm::StringRef> mlpConfigNames();

/// The named GPT configuration, or an error listing the known names.
llvm::Expected<GPTConfig> getGPTConfig(llvm::StringRef name);
/// The named MLP configuration, or an error listing the known names.
llvm::Expected<MLPConfig> getMLPConfig(llvm::StringRef name);

} // namespace tandem::models

#endif // TANDEM_MODELS_CONFIG_H
