//===- StepInputs.h - a training run's step inputs ---------------*- C++
//-*-===//
//
// The inputs of step k of a run, as the reference evaluator's trainer makes
// them (tandem-eval --train --program): the tokens and targets inputs are
// batch k of the training part of a token stream (the last tenth held out,
// windows shuffled per epoch by the seed), every other input is the
// deterministic value the evaluator generates for it. So step k's inputs are
// known without replaying steps 0..k-1, on any rank: each rank builds only
// the inputs its manifest lists, from the same stream and seed. No MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_STEPINPUTS_H
#define TANDEM_RUNTIME_STEPINPUTS_H

#include "tandem/Runtime/ArrayData.h"
#include "tandem/Runtime/Manifest.h"
#include "tandem/Runtime/RankProgram.h"
#include "tandem/Runtime/TokenData.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tandem::runtime {

struct StepInputOptions {
  uint64_t seed = 0;
  /// Fraction of the stream, at its end, held out from training.
  double heldOutFraction = 0.1;
  /// What errors call the token stream (usually its file name).
  std::string dataName = "token data";
  /// Draw from the held-out tail instead, in order (no shuffling), as
  /// tandem-eval's held-out loss does: batch k is windows k·B .. k·B+B-1.
  bool heldOut = false;
  /// Arrays only (a token stream always keeps its tail apart): whether the
  /// run measures a held-out loss, which holds out the file's last batches
  /// (data::splitArrays).
  bool holdOut = false;
};

/// What an arrays file must hold for `inputs` (their step shapes and
/// vocabularies; an index listed twice once, with the smaller vocabulary).
std::vector<data::ArrayInput>
arrayInputsOf(const std::vector<InputInfo> &inputs);

/// Step inputs saved in a safetensors file (`input.<i>` tensors, as
/// tandem-eval --save-inputs writes): the ones `inputs` lists (an index
/// listed twice is read once) into `buffers` by index; a missing tensor or
/// one of another type or step shape is an error naming the file.
bool readSavedInputs(const std::string &path,
                     const std::vector<InputInfo> &inputs,
                     std::map<int64_t, Buffer> &buffers, std::string &error);

class StepInputs {
public:
  /// `inputs` are the step inputs to fill (one rank's, or the union of all
  /// ranks' in one process; an index listed twice must agree). Fails when a
  /// token of the stream is outside an input's vocabulary, when tokens and
  /// targets disagree in shape or are not integer B x T tensors, when an
  /// input's role is ambiguous, or when the training part holds no batch.
  static std::optional<StepInputs> create(const std::vector<InputInfo> &inputs,
                                          data::TokenStream tokens,
                                          const StepInputOptions &options,
                                          std::string &error);
  /// The same over a copy of `tokens`.
  static std::optional<StepInputs> create(const std::vector<InputInfo> &inputs,
                                          const std::vector<int32_t> &tokens,
                                          const StepInputOptions &options,
                                          std::string &error);

  /// Every input from an arrays file (ArrayData.h), in file order: step k
  /// reads batch k mod c of the c training batches (options.heldOut: of the
  /// held-out ones). Fails when the file does not hold the inputs or the
  /// split leaves no batch.
  static std::optional<StepInputs> create(const std::vector<InputInfo> &inputs,
                                          const data::ArrayData &arrays,
                                          const StepInputOptions &options,
                                          std::string &error);

  /// The inputs of step `step` by index (valid until the next call).
  const std::map<int64_t, const Buffer *> &get(uint64_t step);

  /// Tokens one step trains on (B x T of the tokens input; 0 without one).
  int64_t tokensPerStep() const { return tokensPerStep_; }

private:
  StepInputs() = default;

  std::vector<InputInfo> inputs;
  std::map<int64_t, Buffer> buffers;
  std::map<int64_t, const Buffer *> views;
  std::optional<data::BatchSampler> sampler;
  std::optional<data::ArrayBatches> arrays;
  std::vector<int32_t> tokenScratch, targetScratch;
  int64_t tokensPerStep_ = 0;
};

/// Fills `out` (of `input`'s step shape) with the value tandem-eval
/// generates for step input `input.index` under `seed`: integers uniform in
/// [0, vocabulary or 256), floats standard normal rounded to the type.
bool generateInput(const InputInfo &input, uint64_t seed, Buffer &out,
                   std::string &error);

} // namespace tandem::runtime

#endif // TANDEM_RUNTIME_STEPINPUTS_H
