//===- SimulatorTest.cpp - Closed forms, peaks and deadlocks --------------===//

#include "tandem/Schedule/Simulator.h"
#include "tandem/Schedule/Generators.h"

#include "llvm/Support/Error.h"

#include "gtest/gtest.h"

using namespace tandem::schedule;

namespace {

SimulationReport run(ScheduleKind kind, int p, int m, int v, const Costs &c) {
  GenerateOptions o;
  o.ranks = p;
  o.microbatches = m;
  o.chunks = v;
  auto s = generateSchedule(kind, o);
  EXPECT_TRUE(static_cast<bool>(s)) << llvm::toString(s.takeError());
  EXPECT_FALSE(static_cast<bool>(validateSchedule(*s)));
  auto report = simulate(*s, c);
  EXPECT_TRUE(static_cast<bool>(report)) << llvm::toString(report.takeError());
  return *report;
}

/// Every rank's bubble equals num/den within 1e-12 (integer durations make
/// the simulated times exact).
void expectBubble(const SimulationReport &r, double num, double den) {
  for (size_t rank = 0; rank < r.ranks.size(); ++rank)
    EXPECT_NEAR(r.ranks[rank].bubble, num / den, 1e-12) << "rank " << rank;
}

struct PM {
  int p, m;
};
const PM shapes[] = {{1, 1}, {2, 2}, {2, 5},  {3, 3}, {3, 7},
                     {4, 4}, {4, 8}, {4, 16}, {8, 8}, {8, 24}};

TEST(ScheduleSimulator, GPipeClosedForm) {
  for (double f : {1.0, 2.0})
    for (PM s : shapes) {
      Costs c;
      c.forward = {f};
      c.inputGrad = {1};
      c.weightGrad = {1};
      SimulationReport r = run(ScheduleKind::GPipe, s.p, s.m, 1, c);
      EXPECT_EQ(r.stepTime, (s.m + s.p - 1) * (f + 2));
      expectBubble(r, s.p - 1, s.m + s.p - 1);
      // GPipe stashes every microbatch on rank 0.
      EXPECT_EQ(r.ranks[0].peakInFlight, s.m);
    }
}

TEST(ScheduleSimulator, OneFOneBClosedForm) {
  for (PM s : shapes) {
    Costs c; // F = 1, B = BI + BW = 2
    SimulationReport r = run(ScheduleKind::OneFOneB, s.p, s.m, 1, c);
    EXPECT_EQ(r.stepTime, 3.0 * (s.m + s.p - 1));
    expectBubble(r, s.p - 1, s.m + s.p - 1);
    // 1F1B stashes p microbatches on rank 0 (m >= p here).
    EXPECT_EQ(r.ranks[0].peakInFlight, s.p);
    for (int rank = 0; rank < s.p; ++rank)
      EXPECT_EQ(r.ranks[rank].peakInFlight, s.p - rank);
  }
}

TEST(ScheduleSimulator, OneFOneBFewMicrobatchesFallsBackToGPipeOrder) {
  Costs c;
  SimulationReport r = run(ScheduleKind::OneFOneB, 4, 2, 1, c);
  expectBubble(r, 3, 5);
  EXPECT_EQ(r.ranks[0].peakInFlight, 2);
}

TEST(ScheduleSimulator, InterleavedClosedForm) {
  struct PMV {
    int p, m, v;
  };
  for (PMV s : {PMV{2, 2, 2}, PMV{2, 4, 3}, PMV{3, 6, 2}, PMV{4, 4, 2},
                PMV{4, 8, 2}, PMV{4, 8, 4}, PMV{4, 12, 3}, PMV{8, 16, 2}}) {
    Costs c;
    c.forward = {1};
    c.inputGrad = {1};
    c.weightGrad = {1};
    SimulationReport r = run(ScheduleKind::Interleaved1F1B, s.p, s.m, s.v, c);
    EXPECT_EQ(r.stepTime, 3.0 * (s.v * s.m + s.p - 1));
    expectBubble(r, s.p - 1, s.v * s.m + s.p - 1);
    // In chunk activations (A / v): v * (p + (p - 1) / v) when m > p.
    if (s.m > s.p)
      EXPECT_EQ(r.ranks[0].peakInFlight, s.v * s.p + s.p - 1);
  }
}

TEST(ScheduleSimulator, ZBH1ClosedForm) {
  for (PM s : shapes) {
    if (s.m < s.p)
      continue;
    Costs c; // F = BI = BW = 1
    SimulationReport r = run(ScheduleKind::ZBH1, s.p, s.m, 1, c);
    EXPECT_EQ(r.stepTime, 3.0 * s.m + s.p - 1);
    expectBubble(r, s.p - 1, 3 * s.m + s.p - 1);
    EXPECT_EQ(r.ranks[0].peakInFlight, s.p);
  }
}

TEST(ScheduleSimulator, ZBH1BeatsOneFOneB) {
  Costs c;
  SimulationReport zb = run(ScheduleKind::ZBH1, 4, 8, 1, c);
  SimulationReport ofob = run(ScheduleKind::OneFOneB, 4, 8, 1, c);
  EXPECT_LT(zb.stepTime, ofob.stepTime);
  // A third of 1F1B's idle time.
  EXPECT_EQ(3 * zb.ranks[0].idle, ofob.ranks[0].idle);
}

TEST(ScheduleSimulator, LinksCostTimeAndCountBytes) {
  Costs c;
  c.latency = 0.5;
  c.bandwidth = 100;
  c.bytesPerMicrobatch = 50; // 0.5 per transfer on top of the latency
  SimulationReport r = run(ScheduleKind::GPipe, 2, 3, 1, c);
  // Free links: 12 units; one hop forward and one back, 1 unit each.
  EXPECT_EQ(r.stepTime, 14.0);
  ASSERT_EQ(r.links.size(), 2u);
  EXPECT_EQ(r.links[0].from, 0);
  EXPECT_EQ(r.links[0].to, 1);
  EXPECT_EQ(r.links[0].transfers, 3);
  EXPECT_EQ(r.links[0].bytes, 150.0);
  EXPECT_EQ(r.links[1].from, 1);
  EXPECT_EQ(r.links[1].to, 0);
}

TEST(ScheduleSimulator, PerStageDurations) {
  Costs c;
  c.forward = {1, 3}; // the second stage is the slow one
  c.inputGrad = {1, 1};
  c.weightGrad = {1, 1};
  SimulationReport r = run(ScheduleKind::OneFOneB, 2, 4, 1, c);
  EXPECT_EQ(r.ranks[1].busy, 4 * 5.0);
  EXPECT_EQ(r.ranks[0].busy, 4 * 3.0);
  c.forward = {1, 2, 3};
  GenerateOptions o;
  o.ranks = 2;
  o.microbatches = 2;
  auto s = generate1F1B(o);
  ASSERT_TRUE(static_cast<bool>(s));
  auto bad = simulate(*s, c);
  ASSERT_FALSE(static_cast<bool>(bad));
  EXPECT_EQ(llvm::toString(bad.takeError()),
            "costs need 1 or 2 per-stage durations, got 3");
}

TEST(ScheduleSimulator, UserTableDeadlocks) {
  // Valid per rank (and in accumulation order), but rank 1 wants microbatch
  // 1 first while rank 0 wants microbatch 0's gradient before sending it.
  auto s = parseSchedule("rank 0: F0.0 B0.0 F0.1 B0.1\n"
                         "rank 1: F1.1 F1.0 B1.0 B1.1\n");
  ASSERT_TRUE(static_cast<bool>(s));
  EXPECT_FALSE(static_cast<bool>(validateSchedule(*s)));
  auto r = simulate(*s, Costs());
  ASSERT_FALSE(static_cast<bool>(r));
  EXPECT_EQ(llvm::toString(r.takeError()),
            "deadlock: no rank can make progress\n"
            "  rank 0 (<input>:1) waits at action 1 (B0.0) for B/BI1.0 on "
            "rank 1\n"
            "  rank 1 (<input>:2) waits at action 0 (F1.1) for F0.1 on rank 0");
}

TEST(ScheduleSimulator, RendezvousTransfers) {
  // Explicit SEND/RECV: both sides block until the transfer is done.
  const char *ok = "rank 0: F0.0 SEND_F0.0@1 RECV_B1.0@1 B0.0\n"
                   "rank 1: RECV_F0.0@0 F1.0 B1.0 SEND_B1.0@0\n";
  auto s = parseSchedule(ok);
  ASSERT_TRUE(static_cast<bool>(s));
  ASSERT_FALSE(static_cast<bool>(validateSchedule(*s)));
  Costs c;
  c.latency = 1;
  auto r = simulate(*s, c);
  ASSERT_TRUE(static_cast<bool>(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(r->stepTime, 1 + 1 + 3 + 1 + 2.0);
  EXPECT_EQ(r->ranks[0].communicating, 2.0);
  // Both ranks send first: fine with buffered sends, a deadlock under
  // rendezvous semantics.
  auto bad = parseSchedule("rank 0: F0.0 F0.1 SEND_F0.1@1 RECV_B1.0@1 "
                           "SEND_F0.0@1 RECV_B1.1@1 B0.0 B0.1\n"
                           "rank 1: RECV_F0.0@0 F1.0 B1.0 SEND_B1.0@0 "
                           "RECV_F0.1@0 F1.1 B1.1 SEND_B1.1@0\n");
  ASSERT_TRUE(static_cast<bool>(bad));
  ASSERT_FALSE(static_cast<bool>(validateSchedule(*bad)));
  auto dead = simulate(*bad, Costs());
  ASSERT_FALSE(static_cast<bool>(dead));
  EXPECT_EQ(llvm::toString(dead.takeError()),
            "deadlock: no rank can make progress\n"
            "  rank 0 (<input>:1) waits at action 2 (SEND_F0.1@1) for rank 1 "
            "to reach "
            "RECV_F0.1@0 (it is at RECV_F0.0@0)\n"
            "  rank 1 (<input>:2) waits at action 0 (RECV_F0.0@0) for rank 0 "
            "to reach "
            "SEND_F0.0@1 (it is at SEND_F0.1@1)");
}

} // namespace
