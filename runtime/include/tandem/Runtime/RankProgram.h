//===- RankProgram.h - one rank's library and action list -------*- C++ -*-===//
//
// Loads a rank's manifest and library (docs/cpu-backend.md), owns its
// parameters and runs one training step by walking its action list with the
// reference semantics of docs/pipeline-eval.md: slots keyed by (fragment,
// result, microbatch), step inputs cut into microbatches along dim 0,
// accumulation in increasing microbatch order rounding after every add,
// send/recv groups through a `Transport`, and the `update` results replacing
// parameters only once the whole step has succeeded. Every slot,
// accumulator, receive buffer and scratch lives at its offset in one arena
// that the manifest's memory plan lays out, allocated once at load and
// reused by every step. No MLIR dependency.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_RANKPROGRAM_H
#define TANDEM_RUNTIME_RANKPROGRAM_H

#include "tandem/Runtime/Manifest.h"
#include "tandem/Runtime/Transport.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace tandem::runtime {

/// A 64-byte aligned, zero-initialized byte buffer.
class Buffer {
public:
  Buffer() = default;
  explicit Buffer(uint64_t bytes);
  void *data() { return storage.get(); }
  const void *data() const { return storage.get(); }
  uint64_t size() const { return bytes; }

private:
  struct Free {
    void operator()(void *p) const;
  };
  std::unique_ptr<void, Free> storage;
  uint64_t bytes = 0;
};

/// What one step produced on a rank.
struct StepResult {
  /// New parameter values by name (results carrying `update`).
  std::map<std::string, std::shared_ptr<Buffer>> updates;
  /// Step outputs by index.
  std::map<int64_t, std::shared_ptr<Buffer>> outputs;
};

struct RankProgramOptions {
  /// Allocates every planned buffer on its own instead of at its offset in
  /// the arena: the debug mode for comparing against the plan. Results are
  /// the same either way.
  bool separateBuffers = false;

  /// separateBuffers from TANDEM_SEPARATE_BUFFERS=1.
  static RankProgramOptions fromEnvironment();
};

class RankProgram {
public:
  ~RankProgram();
  RankProgram(const RankProgram &) = delete;
  RankProgram &operator=(const RankProgram &) = delete;

  /// Reads the manifest, opens its library and resolves every fragment and
  /// scratch symbol.
  static std::unique_ptr<RankProgram> load(const std::string &manifestPath,
                                           std::string &error);
  static std::unique_ptr<RankProgram> load(const std::string &manifestPath,
                                           const RankProgramOptions &options,
                                           std::string &error);

  const Manifest &manifest() const { return info; }
  /// Bytes allocated for the step's buffers: the arena, or the sum of the
  /// separate buffers.
  uint64_t stepBufferBytes() const { return allocatedBytes; }
  bool usesSeparateBuffers() const { return separateBuffers; }

  /// Initializes every parameter from its init spec, exactly as tandem-eval
  /// does (rng::initFill keyed by the parameter name).
  bool initParameters(uint64_t seed, std::string &error);
  /// Replaces a parameter's value (`bytes` must be its size).
  bool setParameter(const std::string &name, const void *data, uint64_t bytes,
                    std::string &error);
  const Buffer *parameter(const std::string &name) const;

  /// Runs the action list once. `inputs[index]` holds full step input
  /// `index` (its step_shape). Parameters are not changed; on success
  /// `result` holds the updates and outputs.
  bool runStep(const std::map<int64_t, const Buffer *> &inputs,
               Transport &transport, StepResult &result, std::string &error);
  /// Replaces parameters by a step's updates.
  void applyUpdates(const StepResult &result);

private:
  RankProgram() = default;
  using Fn = int (*)(const void *const *, void *const *, void *);
  using ScratchFn = uint64_t (*)();

  bool bindBuffers(const RankProgramOptions &options, std::string &error);

  Manifest info;
  void *handle = nullptr;
  std::vector<Fn> functions;
  /// Per fragment: the scratch bytes its library function asks for.
  std::vector<uint64_t> scratchBytes;
  std::map<std::string, Buffer> parameters;

  bool separateBuffers = false;
  uint64_t allocatedBytes = 0;
  Buffer arena;
  std::vector<Buffer> separate;
  /// Per buffer of the plan: where it lives.
  std::vector<uint8_t *> bufferData;
  /// The copies of update and output results handed to the caller, by
  /// buffer index, reused from step to step.
  std::map<int64_t, std::shared_ptr<Buffer>> resultBuffers;
  std::map<std::tuple<std::string, int64_t, int64_t>, size_t> slotBuffers;
  std::map<std::pair<int64_t, int64_t>, size_t> accumulatorBuffers;
  /// Per action: the scratch pointer of a run.
  std::vector<void *> scratchData;
  /// The scratch of runs that need none (a valid, aligned pointer).
  Buffer noScratch{0};
};

/// The loss, step output 0, from `outputs` when `manifest`'s rank produces
/// it and it is a rank-0 f32 or f64 tensor; else nothing.
std::optional<double>
lossOutput(const Manifest &manifest,
           const std::map<int64_t, std::shared_ptr<Buffer>> &outputs);

/// Loads rank0.json ... rank<N-1>.json from `directory` (N = stages x
/// replicas of rank 0's grid).
bool loadRanks(
    const std::string &directory,
    std::vector<std::unique_ptr<RankProgram>> &ranks, std::string &error,
    const RankProgramOptions &options = RankProgramOptions::fromEnvironment());

/// Runs one step of every rank on its own thread over an
/// InProcessTransport. On success applies every rank's updates and returns
/// the outputs of all ranks by index; on any error changes nothing and
/// returns the first error (prefixed "rank N: ").
bool runStepInProcess(std::vector<std::unique_ptr<RankProgram>> &ranks,
                      const std::map<int64_t, const Buffer *> &inputs,
                      std::map<int64_t, std::shared_ptr<Buffer>> &outputs,
                      std::string &error);

} // namespace tandem::runtime

#endif // TANDEM_RUNTIME_RANKPROGRAM_H
