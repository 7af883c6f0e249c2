//===- Checkpoint.h - per-rank training checkpoints -------------*- C++ -*-===//
//
// A training run's checkpoints (docs/runtime.md, "Checkpoints"): every rank
// writes its parameters and optimizer state (all of its manifest's
// parameters; optimizer moments are the `opt.*` ones) as
// DIR/step-<K>/rank<r>.safetensors plus an index DIR/step-<K>/rank<r>.json
// holding the step, the data position, the seed, the loss scale, a checksum
// of the safetensors bytes and what the rank was compiled as (grid, program,
// parameters, step inputs, action list). Rank 0 commits a step once every
// rank has written: it checks every rank's files, writes
// DIR/step-<K>/checkpoint.json and then DIR/latest. Every file is written to
// a temporary name, fsynced and renamed, so a crash leaves either the
// previous checkpoint current or the new one, never a half-written file.
// Loading refuses a checkpoint of another model, partition or schedule with
// a message saying what differs, and falls back to the previous complete
// checkpoint when the latest one is truncated or corrupted.
//
// The core works on a manifest and a tensor map (unit-testable without a
// compiled library); the RankProgram overloads are thin adapters. No MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_CHECKPOINT_H
#define TANDEM_RUNTIME_CHECKPOINT_H

#include "tandem/Runtime/Manifest.h"
#include "tandem/Runtime/Safetensors.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tandem::runtime {

class RankProgram;

/// The index format written and read.
inline constexpr const char *kCheckpointFormat = "tandem-checkpoint-v1";

/// The parameter dynamic loss scaling (nn-mixed-precision) keeps its scale
/// in, relative to the initial scale; its value is recorded in the index.
inline constexpr const char *kLossScaleParameter = "opt.loss_scale";

/// What a checkpoint records besides the tensors.
struct CheckpointInfo {
  /// The next step to run.
  uint64_t step = 0;
  /// The index of the next batch (equal to `step`: batch k is a pure
  /// function of (seed, k), TokenData.h).
  uint64_t dataPosition = 0;
  /// The run's seed: parameter initialization, the batch order and the
  /// generated inputs all derive from it, so (seed, dataPosition) are the
  /// RNG counters of a run.
  uint64_t seed = 0;
  /// The value of `opt.loss_scale` when the rank holds it, else none. Filled
  /// from the parameters on write (the caller's value is ignored).
  std::optional<double> lossScale;
  /// Set by loading only: non-empty when a newer checkpoint was unusable
  /// and an older one was loaded instead (says which and why).
  std::string warning;
};

struct CheckpointLoadOptions {
  /// The runtime's results do not depend on the schedule (microbatches
  /// accumulate in increasing order whatever the action order), so a
  /// checkpoint stays bitwise valid under another schedule of the same
  /// partition; still refused by default, since a changed action list
  /// usually means a different compile than the user meant.
  bool allowScheduleChange = false;
  /// Check the checksum of every rank's file of a step before using it, so
  /// that all ranks, each deciding alone, fall back to the same step. Off,
  /// only this rank's file is checked and the caller must make the ranks
  /// agree on the step.
  bool verifyAllRanks = true;
};

/// 64-bit FNV-1a of `size` bytes (the index's checksum: detects truncation
/// and corruption, not tampering).
uint64_t fnv1a64(const void *data, size_t size,
                 uint64_t hash = 0xcbf29ce484222325ull);

/// "step-<K>".
std::string checkpointName(uint64_t step);

/// The steps of DIR's committed checkpoints (those with a
/// step-<K>/checkpoint.json), ascending. Files are not verified.
std::vector<uint64_t> listCheckpoints(const std::string &dir);

/// Writes DIR/step-<step>/rank<r>.{safetensors,json} for the rank `manifest`
/// describes; `tensors` must hold every parameter of the manifest, of its
/// type and shape. Creates the directories. `info.step` is ignored for
/// `step`.
bool writeRankCheckpoint(const std::string &dir, uint64_t step,
                         const Manifest &manifest,
                         const std::map<std::string, st::Tensor> &tensors,
                         const CheckpointInfo &info, std::string &error);
/// The same from tensors the caller keeps (views: no copies).
bool writeRankCheckpoint(const std::string &dir, uint64_t step,
                         const Manifest &manifest,
                         const std::map<std::string, st::TensorRef> &tensors,
                         const CheckpointInfo &info, std::string &error);
/// The same from the rank's own parameters (CheckpointProgram.cpp).
bool writeRankCheckpoint(const std::string &dir, uint64_t step,
                         const RankProgram &rank, const CheckpointInfo &info,
                         std::string &error);

/// Run by one process after every rank has written step `step` (the caller
/// barriers first): checks that ranks 0..ranks-1 each have an index for this
/// step and rank and a safetensors file of the recorded size and checksum,
/// writes step-<step>/checkpoint.json and then makes DIR/latest name the
/// step. With `keep` > 0, then removes all but the newest `keep` committed
/// checkpoints and any uncommitted step directory older than `step`.
bool commitCheckpoint(const std::string &dir, uint64_t step, int64_t ranks,
                      std::string &error, int64_t keep = 0);

/// A rank's loaded checkpoint: the info and its tensors by parameter name.
struct LoadedRankCheckpoint {
  CheckpointInfo info;
  std::map<std::string, st::Tensor> tensors;
};

/// Loads the rank `manifest` describes from the checkpoint DIR/latest
/// names. A checkpoint of another model, partition or schedule is refused
/// (an error saying what differs, no fallback); a step whose files are
/// missing, truncated or fail their checksum is skipped for the newest
/// older committed step, with `info.warning` saying so.
std::optional<LoadedRankCheckpoint>
loadRankCheckpoint(const std::string &dir, const Manifest &manifest,
                   std::string &error,
                   const CheckpointLoadOptions &options = {});
/// Loads step `step` only (no fallback), e.g. once the ranks agreed on it.
std::optional<LoadedRankCheckpoint>
loadRankCheckpointAt(const std::string &dir, uint64_t step,
                     const Manifest &manifest, std::string &error,
                     const CheckpointLoadOptions &options = {});

/// The RankProgram adapter: loads as above and sets every parameter.
std::optional<CheckpointInfo>
loadRankCheckpoint(const std::string &dir, RankProgram &rank,
                   std::string &error,
                   const CheckpointLoadOptions &options = {});

} // namespace tandem::runtime

#endif // TANDEM_RUNTIME_CHECKPOINT_H
