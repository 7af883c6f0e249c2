//===- MemoryPlan.h - one arena per rank, reuse by liveness -----*- C++ -*-===//
//
// The static memory plan of a rank (docs/cpu-backend.md, "Memory plan"):
// every buffer the rank's action list needs during a step (fragment result
// slots per microbatch, received slots, sum_microbatches accumulators, run
// scratch) gets a live interval over the list and a 64-byte aligned offset
// in one arena, so that buffers live at the same time never share bytes.
// Free of MLIR so that it can be unit-tested on synthetic action lists.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_TARGET_CPU_MEMORYPLAN_H
#define TANDEM_TARGET_CPU_MEMORYPLAN_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tandem::cpu {

/// The alignment of every offset (and of the arena): the ABI's scratch
/// alignment, and a cache line.
constexpr uint64_t kArenaAlignment = 64;

/// One buffer to place: `bytes` live over the actions [first, last]
/// (inclusive, so a buffer ending at action i and one starting there are
/// live together, as a run's arguments and results are).
struct BufferInterval {
  uint64_t bytes = 0;
  int64_t first = 0, last = 0;
};

struct ArenaAssignment {
  /// Per buffer, in the order given: its offset in the arena.
  std::vector<uint64_t> offsets;
  /// Bytes of the arena (a multiple of the alignment).
  uint64_t arenaBytes = 0;
  /// Bytes without reuse: the sum of the sizes rounded up to the alignment.
  uint64_t naiveBytes = 0;
};

/// Assigns offsets: buffers in order of decreasing size (ties: earlier
/// start, then the order given), each at the best-fitting gap between the
/// buffers already placed whose intervals overlap its own (the smallest gap
/// that holds it, lowest offset among equals), else above the highest one.
/// Deterministic; `alignment` must be a power of two.
ArenaAssignment assignOffsets(const std::vector<BufferInterval> &buffers,
                              uint64_t alignment = kArenaAlignment);

/// Returns an empty string when `assignment` places every buffer aligned,
/// inside the arena, and no two buffers with overlapping intervals share a
/// byte; else a message naming the first violation.
std::string checkAssignment(const std::vector<BufferInterval> &buffers,
                            const ArenaAssignment &assignment,
                            uint64_t alignment = kArenaAlignment);

//===----------------------------------------------------------------------===//
// Liveness over a rank's action list
//===----------------------------------------------------------------------===//

enum class SlotRule { SameMicrobatch, StepValue, SumMicrobatches };

/// A fragment argument; only slot bindings matter to the plan (parameters
/// and step inputs live outside the arena).
struct PlanArgument {
  bool isSlot = false;
  std::string fragment;
  int64_t result = 0;
  SlotRule rule = SlotRule::SameMicrobatch;
  uint64_t bytes = 0;
};

struct PlanResult {
  uint64_t bytes = 0;
  /// Bound to `update` or `output`: read when the step ends.
  bool livesToEnd = false;
  /// Written over the parameter it updates (nothing reads the slot): no
  /// buffer.
  bool inPlace = false;
};

struct PlanFragment {
  std::string name;
  bool perMicrobatch = false;
  uint64_t scratchBytes = 0;
  std::vector<PlanArgument> arguments;
  std::vector<PlanResult> results;
};

enum class PlanActionKind { Run, Send, Recv, Collective };

/// One action of the list. Run: `fragment`, `microbatch` (-1 once per
/// step). Send/Recv/Collective: the slot (`fragment`, `result`,
/// `microbatch`) and its `bytes`.
struct PlanAction {
  PlanActionKind kind = PlanActionKind::Run;
  std::string fragment;
  int64_t result = 0;
  int64_t microbatch = -1;
  uint64_t bytes = 0;
};

struct RankDescription {
  int64_t microbatches = 1;
  std::vector<PlanFragment> fragments;
  std::vector<PlanAction> actions;
};

enum class BufferKind { Slot, Accumulator, Scratch };

/// A placed buffer. Slot: `fragment`, `result`, `microbatch` (-1 once per
/// step). Accumulator: the `action` (a run) and the `argument` it sums.
/// Scratch: the `action` (a run).
struct PlannedBuffer {
  BufferKind kind = BufferKind::Slot;
  std::string fragment;
  int64_t result = -1, microbatch = -1;
  int64_t action = -1, argument = -1;
  uint64_t bytes = 0, offset = 0;
  int64_t first = 0, last = 0;
};

struct MemoryPlan {
  /// In order of first definition along the list.
  std::vector<PlannedBuffer> buffers;
  uint64_t arenaBytes = 0, naiveBytes = 0;
};

/// The live intervals of every buffer of `rank` (offsets left 0). Action
/// indices are positions in `rank.actions`; actions.size() stands for the
/// end of the step, where `update`/`output` results are read. A maximal run
/// of consecutive sends and receives is posted as one group, so its
/// receive buffers are live from the group's first action and its send
/// buffers until its last. Errors: an unknown fragment, a slot read before
/// it is defined, a slot defined twice.
llvm::Expected<MemoryPlan> computeLiveness(const RankDescription &rank);

/// computeLiveness, then assignOffsets.
llvm::Expected<MemoryPlan> planRankMemory(const RankDescription &rank);

} // namespace tandem::cpu

#endif // TANDEM_TARGET_CPU_MEMORYPLAN_H
