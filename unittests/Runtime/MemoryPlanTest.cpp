//===- MemoryPlanTest.cpp - the per-rank memory planner -------------------===//
//
// The interval allocator (alignment, reuse when lifetimes are disjoint,
// best fit, and a randomized property: buffers live together never share a
// byte, by a brute-force checker independent of checkAssignment) and the
// liveness walk over synthetic action lists (GPipe keeps every
// microbatch's activation, 1F1B at most two on the first of two stages).
//
//===----------------------------------------------------------------------===//

#include "tandem/Runtime/MemoryPlan.h"
#include "tandem/Runtime/TransferWaits.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <random>

using namespace tandem::runtime;

namespace {

/// Brute force: every pair of buffers live together has disjoint bytes,
/// every offset is aligned and every buffer inside the arena.
void expectValid(const std::vector<BufferInterval> &buffers,
                 const ArenaAssignment &plan) {
  ASSERT_EQ(plan.offsets.size(), buffers.size());
  EXPECT_EQ(plan.arenaBytes % kArenaAlignment, 0u);
  for (size_t i = 0; i < buffers.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % kArenaAlignment, 0u) << "buffer " << i;
    EXPECT_LE(plan.offsets[i] + buffers[i].bytes, plan.arenaBytes)
        << "buffer " << i;
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      bool together = buffers[i].first <= buffers[j].last &&
                      buffers[j].first <= buffers[i].last;
      bool shareBytes = buffers[i].bytes && buffers[j].bytes &&
                        plan.offsets[i] < plan.offsets[j] + buffers[j].bytes &&
                        plan.offsets[j] < plan.offsets[i] + buffers[i].bytes;
      EXPECT_FALSE(together && shareBytes)
          << "buffers " << i << " and " << j << " are live together at "
          << plan.offsets[i] << " and " << plan.offsets[j];
    }
  }
}

/// assignOffsets, which must succeed.
ArenaAssignment assign(const std::vector<BufferInterval> &buffers) {
  std::string error;
  std::optional<ArenaAssignment> plan = assignOffsets(buffers, error);
  EXPECT_TRUE(plan) << error;
  return plan.value_or(ArenaAssignment{});
}

TEST(MemoryPlanAllocator, DisjointLifetimesReuseBytes) {
  std::vector<BufferInterval> buffers = {{100, 0, 1}, {100, 2, 3}};
  ArenaAssignment plan = assign(buffers);
  expectValid(buffers, plan);
  EXPECT_EQ(plan.offsets[0], 0u);
  EXPECT_EQ(plan.offsets[1], 0u);
  EXPECT_EQ(plan.arenaBytes, 128u);
  EXPECT_EQ(plan.naiveBytes, 256u);
}

TEST(MemoryPlanAllocator, TouchingIntervalsAreLiveTogether) {
  // A run's last argument read and its result are at the same action.
  std::vector<BufferInterval> buffers = {{64, 0, 2}, {64, 2, 4}};
  ArenaAssignment plan = assign(buffers);
  expectValid(buffers, plan);
  EXPECT_NE(plan.offsets[0], plan.offsets[1]);
  EXPECT_EQ(plan.arenaBytes, 128u);
}

TEST(MemoryPlanAllocator, OffsetsAreAligned) {
  std::vector<BufferInterval> buffers = {
      {1, 0, 5}, {65, 0, 5}, {3, 1, 2}, {129, 2, 3}, {0, 0, 5}};
  ArenaAssignment plan = assign(buffers);
  expectValid(buffers, plan);
  for (uint64_t offset : plan.offsets)
    EXPECT_EQ(offset % 64, 0u);
  EXPECT_EQ(plan.naiveBytes, 64u + 128 + 64 + 192 + 0);
}

TEST(MemoryPlanAllocator, BestFitTakesTheSmallestGap) {
  // At actions 1..9 only B1 [128, 192) and B2 [256, 320) are live: gaps of
  // 128 bytes at 0 and of 64 at 192. The last buffer (64 bytes) takes the
  // smaller one, leaving the large gap to larger buffers; first fit would
  // take offset 0.
  std::vector<BufferInterval> buffers = {
      {128, 0, 0}, {64, 0, 9}, {64, 0, 0}, {64, 0, 9}, {64, 1, 9}};
  ArenaAssignment plan = assign(buffers);
  expectValid(buffers, plan);
  EXPECT_EQ(plan.offsets[0], 0u);
  EXPECT_EQ(plan.offsets[1], 128u);
  EXPECT_EQ(plan.offsets[2], 192u);
  EXPECT_EQ(plan.offsets[3], 256u);
  EXPECT_EQ(plan.offsets[4], 192u);
  EXPECT_EQ(plan.arenaBytes, 320u);
}

TEST(MemoryPlanAllocator, RandomPlansNeverShareLiveBytes) {
  std::mt19937_64 rng(1234);
  for (int trial = 0; trial < 300; ++trial) {
    size_t count = 1 + rng() % 60;
    int64_t horizon = 1 + static_cast<int64_t>(rng() % 40);
    std::vector<BufferInterval> buffers;
    for (size_t i = 0; i < count; ++i) {
      int64_t a = static_cast<int64_t>(rng() % horizon);
      int64_t b = static_cast<int64_t>(rng() % horizon);
      // Mostly small sizes, a few zero and a few large, so that sizes tie.
      uint64_t bytes =
          rng() % 8 == 0 ? 0 : (rng() % 4 == 0 ? 4096 : 0) + rng() % 300;
      buffers.push_back({bytes, std::min(a, b), std::max(a, b)});
    }
    ArenaAssignment plan = assign(buffers);
    SCOPED_TRACE("trial " + std::to_string(trial));
    expectValid(buffers, plan);
    EXPECT_EQ(checkAssignment(buffers, plan), "");
    EXPECT_LE(plan.arenaBytes, plan.naiveBytes);
    // No plan beats the largest set of rounded sizes live at one action.
    uint64_t peak = 0;
    for (int64_t t = 0; t < horizon; ++t) {
      uint64_t live = 0;
      for (const BufferInterval &b : buffers)
        if (b.first <= t && t <= b.last)
          live += (b.bytes + 63) / 64 * 64;
      peak = std::max(peak, live);
    }
    EXPECT_GE(plan.arenaBytes, peak);
    // Deterministic.
    EXPECT_EQ(assign(buffers).offsets, plan.offsets);
  }
}

TEST(MemoryPlanAllocator, CheckerFindsCorruptPlans) {
  std::vector<BufferInterval> buffers = {{100, 0, 3}, {100, 2, 5}};
  ArenaAssignment plan = assign(buffers);
  ASSERT_EQ(checkAssignment(buffers, plan), "");
  ArenaAssignment shared = plan;
  shared.offsets[1] = shared.offsets[0];
  EXPECT_EQ(checkAssignment(buffers, shared),
            "buffer 0 and buffer 1 are live together but share bytes");
  ArenaAssignment unaligned = plan;
  unaligned.offsets[1] = 8;
  EXPECT_NE(checkAssignment(buffers, unaligned).find("is not 64-byte aligned"),
            std::string::npos);
  ArenaAssignment small = plan;
  small.arenaBytes = 150;
  EXPECT_EQ(checkAssignment(buffers, small),
            "buffer 1: bytes [128, 128 + 100) do not fit the arena of 150 "
            "bytes");
  EXPECT_EQ(checkAssignment(buffers, small, kArenaAlignment,
                            [](size_t i) { return "B" + std::to_string(i); }),
            "B1: bytes [128, 128 + 100) do not fit the arena of 150 bytes");
}

TEST(MemoryPlanAllocator, SizesBeyond64BitsAreRefused) {
  std::string error;
  EXPECT_FALSE(assignOffsets({{UINT64_MAX - 10, 0, 0}}, error));
  EXPECT_EQ(error, "buffer 0 of 18446744073709551605 bytes makes the plan "
                   "exceed 2^64 bytes");
  EXPECT_FALSE(assignOffsets(
      {{uint64_t(1) << 63, 0, 1}, {uint64_t(1) << 63, 1, 2}}, error));
  EXPECT_NE(error.find("exceed 2^64 bytes"), std::string::npos);
}

//===----------------------------------------------------------------------===//
// Liveness
//===----------------------------------------------------------------------===//

/// Stage 0 of a two-stage pipeline: fwd stashes a 4096-byte activation
/// (result 0) and sends a 256-byte one (result 1); bwd reads the stash and
/// the received gradient and makes a 512-byte weight gradient; opt sums the
/// gradients over the microbatches and writes the new weight.
RankDescription stageZero(int64_t m) {
  RankDescription rank;
  rank.microbatches = m;
  PlanFragment fwd{"fwd", true, 128, {{}}, {{4096, false}, {256, false}}};
  PlanArgument stash{true, "fwd", 0, SlotRule::SameMicrobatch, 4096};
  PlanArgument grad{true, "s1.bwd", 0, SlotRule::SameMicrobatch, 256};
  PlanFragment bwd{"bwd", true, 0, {stash, grad, {}}, {{512, false}}};
  PlanArgument sum{true, "bwd", 0, SlotRule::SumMicrobatches, 512};
  PlanFragment opt{"opt", false, 64, {{}, sum}, {{512, true}}};
  rank.fragments = {fwd, bwd, opt};
  return rank;
}

void forward(RankDescription &rank, int64_t k) {
  rank.actions.push_back({PlanActionKind::Run, "fwd", 0, k, 0});
  rank.actions.push_back({PlanActionKind::Send, "fwd", 1, k, 256});
}

void backward(RankDescription &rank, int64_t k) {
  rank.actions.push_back({PlanActionKind::Recv, "s1.bwd", 0, k, 256});
  rank.actions.push_back({PlanActionKind::Run, "bwd", 0, k, 0});
}

RankDescription gpipe(int64_t m) {
  RankDescription rank = stageZero(m);
  for (int64_t k = 0; k < m; ++k)
    forward(rank, k);
  for (int64_t k = 0; k < m; ++k)
    backward(rank, k);
  rank.actions.push_back({PlanActionKind::Run, "opt", 0, -1, 0});
  return rank;
}

/// 1F1B on stage 0 of 2: two warm-up forwards, then one backward and one
/// forward in turn.
RankDescription oneFOneB(int64_t m) {
  RankDescription rank = stageZero(m);
  int64_t f = 0, b = 0;
  for (; f < std::min<int64_t>(2, m); ++f)
    forward(rank, f);
  while (b < m) {
    backward(rank, b++);
    if (f < m)
      forward(rank, f++);
  }
  rank.actions.push_back({PlanActionKind::Run, "opt", 0, -1, 0});
  return rank;
}

const PlanBufferInfo *findSlot(const MemoryPlanInfo &plan, const std::string &f,
                               int64_t result, int64_t mb) {
  for (const PlanBufferInfo &b : plan.buffers)
    if (b.kind == PlanBufferKind::Slot && b.slot.fragment == f &&
        b.slot.result == result && b.slot.microbatch == mb)
      return &b;
  return nullptr;
}

std::optional<MemoryPlanInfo> plan(const RankDescription &rank,
                                   std::string *error = nullptr) {
  std::string message;
  std::optional<MemoryPlanInfo> result = planRankMemory(rank, message);
  if (error)
    *error = message;
  return result;
}

/// The error planRankMemory gives for `rank`.
std::string planError(const RankDescription &rank) {
  std::string error;
  EXPECT_FALSE(plan(rank, &error));
  return error;
}

/// The largest number of stashed activations live at one action.
int64_t maxStash(const MemoryPlanInfo &plan, int64_t actions) {
  int64_t most = 0;
  for (int64_t t = 0; t < actions; ++t) {
    int64_t live = 0;
    for (const PlanBufferInfo &b : plan.buffers)
      if (b.kind == PlanBufferKind::Slot && b.slot.fragment == "fwd" &&
          b.slot.result == 0 && b.first <= t && t <= b.last)
        ++live;
    most = std::max(most, live);
  }
  return most;
}

TEST(MemoryPlanLiveness, IntervalsFollowTheList) {
  RankDescription rank = gpipe(2);
  // 0 fwd0, 1 send, 2 fwd1, 3 send, 4 recv, 5 bwd0, 6 recv, 7 bwd1, 8 opt
  std::string error;
  std::optional<MemoryPlanInfo> plan = planRankMemory(rank, error);
  ASSERT_TRUE(plan) << error;
  const PlanBufferInfo *stash0 = findSlot(*plan, "fwd", 0, 0);
  ASSERT_NE(stash0, nullptr);
  EXPECT_EQ(stash0->first, 0);
  EXPECT_EQ(stash0->last, 5);
  const PlanBufferInfo *sent1 = findSlot(*plan, "fwd", 1, 1);
  ASSERT_NE(sent1, nullptr);
  EXPECT_EQ(sent1->first, 2);
  // The send at 3 and the receive at 4 are one group; the send is waited
  // for before the next post (the receive at 6): in flight until 5.
  EXPECT_EQ(sent1->last, 5);
  const PlanBufferInfo *received0 = findSlot(*plan, "s1.bwd", 0, 0);
  ASSERT_NE(received0, nullptr);
  EXPECT_EQ(received0->first, 3);
  EXPECT_EQ(received0->last, 5);
  // Each microbatch's gradient is added to the sum as it appears.
  const PlanBufferInfo *grad0 = findSlot(*plan, "bwd", 0, 0);
  ASSERT_NE(grad0, nullptr);
  EXPECT_EQ(grad0->first, 5);
  EXPECT_EQ(grad0->last, 5);
  const PlanBufferInfo *grad1 = findSlot(*plan, "bwd", 0, 1);
  ASSERT_NE(grad1, nullptr);
  EXPECT_EQ(grad1->last, 7);
  const PlanBufferInfo *update = findSlot(*plan, "opt", 0, -1);
  ASSERT_NE(update, nullptr);
  EXPECT_EQ(update->first, 8);
  EXPECT_EQ(update->last, 9); // The end of the step.
  int accumulators = 0, scratches = 0;
  for (const PlanBufferInfo &b : plan->buffers) {
    if (b.kind == PlanBufferKind::Accumulator) {
      ++accumulators;
      EXPECT_EQ(b.action, 8);
      EXPECT_EQ(b.argument, 1);
      EXPECT_EQ(b.bytes, 512u);
      EXPECT_EQ(b.first, 5); // From microbatch 0's gradient to opt.
      EXPECT_EQ(b.last, 8);
    }
    if (b.kind == PlanBufferKind::Scratch) {
      ++scratches;
      EXPECT_EQ(b.first, b.action);
      EXPECT_EQ(b.last, b.action);
    }
  }
  EXPECT_EQ(accumulators, 1);
  EXPECT_EQ(scratches, 3); // fwd twice and opt; bwd needs none.
  // The first stash is dead when the optimizer runs: its bytes are reused.
  EXPECT_LT(plan->arenaBytes, plan->naiveBytes);
}

/// `rank` with opt's sum accumulated by bwd itself.
RankDescription accumulatedByFragment(RankDescription rank) {
  rank.fragments[2].arguments[1].accumulatedBy = Accumulation::Fragment;
  return rank;
}

TEST(MemoryPlanLiveness, AFragmentSumHasNoSlots) {
  // 0 fwd0, 1 send, 2 fwd1, 3 send, 4 recv, 5 bwd0, 6 recv, 7 bwd1, 8 opt:
  // each bwd run writes the sum's buffer, which lives from the first to opt.
  RankDescription rank = accumulatedByFragment(gpipe(2));
  std::string error;
  std::optional<MemoryPlanInfo> plan = planRankMemory(rank, error);
  ASSERT_TRUE(plan) << error;
  EXPECT_EQ(findSlot(*plan, "bwd", 0, 0), nullptr);
  EXPECT_EQ(findSlot(*plan, "bwd", 0, 1), nullptr);
  int accumulators = 0;
  for (const PlanBufferInfo &b : plan->buffers)
    if (b.kind == PlanBufferKind::Accumulator) {
      ++accumulators;
      EXPECT_EQ(b.action, 8);
      EXPECT_EQ(b.argument, 1);
      EXPECT_EQ(b.bytes, 512u);
      EXPECT_EQ(b.first, 5);
      EXPECT_EQ(b.last, 8);
    }
  EXPECT_EQ(accumulators, 1);
  // Two fewer buffers of 512 bytes than the runtime's sum needs.
  std::optional<MemoryPlanInfo> slots = planRankMemory(gpipe(2), error);
  ASSERT_TRUE(slots) << error;
  EXPECT_EQ(slots->naiveBytes - plan->naiveBytes, 2u * 512u);
}

TEST(MemoryPlanLiveness, AFragmentSumIsWrittenBeforeItIsRead) {
  // opt before any bwd run: nothing has accumulated the sum yet.
  RankDescription early = accumulatedByFragment(stageZero(1));
  early.actions.push_back({PlanActionKind::Run, "opt", 0, -1, 0});
  EXPECT_EQ(planError(early), "action 0 reads the sum of bwd[0], which no "
                              "earlier action accumulates");
  // A second sum of the same result.
  RankDescription twice = accumulatedByFragment(gpipe(1));
  twice.actions.push_back({PlanActionKind::Run, "opt", 0, -1, 0});
  EXPECT_EQ(planError(twice), "action 5 sums bwd[0], which another sum "
                              "accumulates already");
}

TEST(MemoryPlanLiveness, GroupsKeepSendAndRecvBuffersApart) {
  // A send whose slot is read for the last time and a receive posted in the
  // same group are in flight together: they must not share bytes, even
  // though the receive comes after the send in the list.
  RankDescription rank;
  rank.fragments = {
      {"a", false, 0, {}, {{256, false}}},
      {"b", false, 0, {{true, "x", 0, SlotRule::StepValue, 256}}, {{4, true}}}};
  rank.actions = {{PlanActionKind::Run, "a", 0, -1, 0},
                  {PlanActionKind::Send, "a", 0, -1, 256},
                  {PlanActionKind::Recv, "x", 0, -1, 256},
                  {PlanActionKind::Run, "b", 0, -1, 0}};
  std::string error;
  std::optional<MemoryPlanInfo> plan = planRankMemory(rank, error);
  ASSERT_TRUE(plan) << error;
  const PlanBufferInfo *sent = findSlot(*plan, "a", 0, -1);
  const PlanBufferInfo *received = findSlot(*plan, "x", 0, -1);
  ASSERT_TRUE(sent && received);
  // No later post: the send is waited for at the end of the list.
  EXPECT_EQ(sent->last, 3);
  EXPECT_EQ(received->first, 1);
  EXPECT_EQ(received->last, 3);
  EXPECT_NE(sent->offset, received->offset);
}

TEST(TransferWaits, SendsUntilTheNextPostReceivesUntilTheirReader) {
  // 0 fwd0, 1 send, 2 fwd1, 3 send, 4 recv, 5 bwd0, 6 recv, 7 bwd1, 8 opt
  EXPECT_EQ(transferWaits(gpipe(2)),
            (std::vector<int64_t>{-1, 2, -1, 5, 4, -1, 6, -1, -1}));
  // 0 fwd0, 1 send, 2 fwd1, 3 send, 4 recv, 5 bwd0, 6 fwd2, 7 send,
  // 8 recv, 9 bwd1, 10 recv, 11 bwd2, 12 opt
  EXPECT_EQ(
      transferWaits(oneFOneB(3)),
      (std::vector<int64_t>{-1, 2, -1, 6, 4, -1, -1, 9, 8, -1, 10, -1, -1}));
}

TEST(TransferWaits, ForwardedSummedUnreadAndCollectives) {
  RankDescription rank;
  rank.microbatches = 1;
  PlanArgument summed{true, "x", 0, SlotRule::SumMicrobatches, 4};
  rank.fragments = {{"use", false, 0, {summed}, {{4, true}}}};
  rank.actions = {
      {PlanActionKind::Recv, "y", 0, -1, 4}, // 0: forwarded by the send at 3
      {PlanActionKind::Recv, "x", 0, 0, 4},  // 1: summed: waited at once
      {PlanActionKind::Recv, "z", 0, -1, 4}, // 2: read by the collective
      {PlanActionKind::Run, "use", 0, -1, 0},
      {PlanActionKind::Recv, "w", 0, -1, 4}, // 4: inside the group
      {PlanActionKind::Send, "y", 0, -1, 4}, // 5: the group's reader
      {PlanActionKind::Recv, "v", 0, -1, 4}, // 6: never read
      {PlanActionKind::Run, "use", 0, -1, 0},
      {PlanActionKind::Collective, "z", 0, -1, 4},
      {PlanActionKind::Recv, "u", 0, -1, 4}, // 9: never read, the end
  };
  EXPECT_EQ(transferWaits(rank),
            (std::vector<int64_t>{3, 2, 7, -1, 7, 7, 7, -1, -1, 9}));
}

TEST(MemoryPlanLiveness, OneFOneBStashesLessThanGPipe) {
  const int64_t m = 8;
  RankDescription g = gpipe(m), o = oneFOneB(m);
  std::optional<MemoryPlanInfo> gp = plan(g);
  std::optional<MemoryPlanInfo> op = plan(o);
  ASSERT_TRUE(gp && op);
  EXPECT_EQ(maxStash(*gp, static_cast<int64_t>(g.actions.size())), m);
  EXPECT_EQ(maxStash(*op, static_cast<int64_t>(o.actions.size())), 2);
  EXPECT_LT(op->arenaBytes, gp->arenaBytes);
  // Same buffers, so the same total without reuse.
  EXPECT_EQ(op->naiveBytes, gp->naiveBytes);
  EXPECT_LT(gp->arenaBytes, gp->naiveBytes);
  // The weight gradients of every microbatch wait for opt in both.
  EXPECT_GE(op->arenaBytes, static_cast<uint64_t>(m) * 512 + 512 + 512);
}

TEST(MemoryPlanLiveness, Errors) {
  RankDescription unknown = gpipe(1);
  unknown.actions.push_back({PlanActionKind::Run, "nope", 0, -1, 0});
  EXPECT_EQ(planError(unknown), "action 5 runs unknown fragment 'nope'");

  RankDescription early = stageZero(1);
  early.actions.push_back({PlanActionKind::Run, "opt", 0, -1, 0});
  EXPECT_EQ(planError(early),
            "action 0 reads slot bwd[0] microbatch 0, which no earlier "
            "action defines");

  RankDescription twice = gpipe(1);
  twice.actions.insert(twice.actions.begin() + 1,
                       {PlanActionKind::Run, "fwd", 0, 0, 0});
  EXPECT_EQ(planError(twice),
            "action 1 defines slot fwd[0] microbatch 0 a second time");

  RankDescription noMicrobatch = stageZero(1);
  noMicrobatch.actions.push_back({PlanActionKind::Run, "fwd", 0, -1, 0});
  EXPECT_EQ(planError(noMicrobatch),
            "action 0 runs 'fwd' without a microbatch, but the fragment is "
            "per-microbatch");
}

} // namespace
