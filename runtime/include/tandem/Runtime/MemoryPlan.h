//===- MemoryPlan.h - one arena per rank: plan and check --------*- C++ -*-===//
//
// The static memory plan of a rank (docs/memory-plan.md): every buffer the
// rank's action list needs during a step (fragment result slots per
// microbatch, received slots, sum_microbatches accumulators, run scratch)
// gets a live interval over the list and an aligned offset in one arena, so
// that buffers live at the same time never share bytes.
//
// The compiler plans with planRankMemory (over describeRank of the manifest
// it is filling); the manifest reader validates a plan with
// checkMemoryPlan, which walks the action list by itself and checks the
// placement with the same checkAssignment the planner checks its own
// result with. No MLIR dependency.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_MEMORYPLAN_H
#define TANDEM_RUNTIME_MEMORYPLAN_H

#include "tandem/Runtime/Manifest.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tandem::runtime {

/// The smallest alignment of every offset (and of the arena): the ABI's
/// scratch alignment, and a cache line. A target may ask for more.
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
/// Deterministic; `alignment` must be a power of two. Nullopt with `error`
/// set when a size or the arena does not fit in 64 bits.
std::optional<ArenaAssignment>
assignOffsets(const std::vector<BufferInterval> &buffers, std::string &error,
              uint64_t alignment = kArenaAlignment);

/// Returns an empty string when `assignment` places every buffer aligned,
/// inside the arena, and no two buffers with overlapping intervals share a
/// byte; else a message naming the first violation, each buffer as
/// `name(index)` ("buffer <index>" by default).
std::string
checkAssignment(const std::vector<BufferInterval> &buffers,
                const ArenaAssignment &assignment,
                uint64_t alignment = kArenaAlignment,
                const std::function<std::string(size_t)> &name = nullptr);

//===----------------------------------------------------------------------===//
// Planning over a rank's action list
//===----------------------------------------------------------------------===//

/// A fragment argument; only slot bindings matter to the plan (parameters
/// and step inputs live outside the arena).
struct PlanArgument {
  bool isSlot = false;
  std::string fragment;
  int64_t result = 0;
  SlotRule rule = SlotRule::SameMicrobatch;
  uint64_t bytes = 0;
  /// SumMicrobatches: Fragment when the producing fragment adds each
  /// microbatch into the sum's buffer itself, so the result has no slots
  /// and the sum lives from the producer's first run to this one.
  Accumulation accumulatedBy = Accumulation::Runtime;
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
  uint64_t alignment = kArenaAlignment;
  std::vector<PlanFragment> fragments;
  std::vector<PlanAction> actions;
};

/// What the plan needs of a manifest's fragments and actions.
RankDescription describeRank(const Manifest &manifest);

/// The live intervals of every buffer of `rank` (offsets left 0), in order
/// of first definition along the list. Action indices are positions in
/// `rank.actions`; actions.size() stands for the end of the step, where
/// `update`/`output` results are read. A maximal run of consecutive sends
/// and receives is posted as one group, so its receive buffers are live
/// from the group's first action and its send buffers until its last.
/// Errors: an unknown fragment, a slot read before it is defined, a slot
/// defined twice, a result accumulated into two sums.
std::optional<MemoryPlanInfo> computeLiveness(const RankDescription &rank,
                                              std::string &error);

/// computeLiveness, then assignOffsets, checked with checkAssignment.
std::optional<MemoryPlanInfo> planRankMemory(const RankDescription &rank,
                                             std::string &error);

/// Checks `manifest.memory` against the manifest's action list: every
/// buffer the list defines or reads is planned, of the right size, and live
/// whenever it is touched (by this function's own walk of the list); every
/// buffer aligned, inside the arena, and never sharing bytes with one live
/// at the same time. Sets each buffer's usedFirst/usedLast. Returns an
/// empty string, or "memory: <where>: <what>".
std::string checkMemoryPlan(Manifest &manifest);

/// "slot f[r] microbatch k", "accumulator of argument a of actions[i]",
/// "scratch of actions[i]".
std::string bufferText(const PlanBufferInfo &buffer);

} // namespace tandem::runtime

#endif // TANDEM_RUNTIME_MEMORYPLAN_H
