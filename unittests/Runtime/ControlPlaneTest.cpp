//===- ControlPlaneTest.cpp - ranks as threads: ThreadControlPlane --------===//

#include "ControlPlaneConformance.h"

#include <atomic>
#include <thread>

using namespace tandem::runtime;

namespace {

/// Runs `body` on `size` threads, each with its own plane of one group.
template <typename Body> void onThreads(int64_t size, Body body) {
  ThreadControlPlane::Group group(size);
  std::vector<std::thread> threads;
  for (int64_t r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      ThreadControlPlane plane(group, r);
      body(plane);
    });
  for (std::thread &t : threads)
    t.join();
}

TEST(ThreadControlPlane, Conformance) {
  for (int64_t size : {2, 3, 5})
    onThreads(size, [](ControlPlane &c) {
      EXPECT_FALSE(c.ranksAreProcesses());
      tandem::runtime::testing::checkControlPlane(c);
    });
}

TEST(ThreadControlPlane, BarrierHoldsEveryRankUntilAllArrive) {
  // Each rank bumps the count before the barrier; after it, every rank
  // must see all bumps. Repeated, so the barrier's reuse is covered.
  const int64_t size = 4;
  std::atomic<int64_t> arrived{0};
  std::atomic<int64_t> early{0};
  onThreads(size, [&](ControlPlane &c) {
    for (int64_t round = 1; round <= 100; ++round) {
      arrived.fetch_add(1);
      c.barrier();
      if (arrived.load() < round * size)
        early.fetch_add(1);
      c.barrier();
    }
  });
  EXPECT_EQ(early.load(), 0);
}

TEST(ThreadControlPlaneDeathTest, AbortEndsTheProcessWithTheFirstMessage) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(onThreads(2,
                        [](ControlPlane &c) {
                          if (c.rank() == 1)
                            c.abortJob("rank 1: it broke");
                          c.barrier(); // Rank 0 waits for rank 1 forever.
                        }),
              ::testing::ExitedWithCode(1),
              "tandem-run: error: rank 1: it broke");
}

} // namespace
