//===- StepGraphsTest.cpp - where a step's CUDA graphs begin and end ------===//

#include "tandem/Runtime/StepGraphs.h"

#include <gtest/gtest.h>

using namespace tandem::runtime;

namespace {

ActionInfo action(ActionKind op) {
  ActionInfo a;
  a.op = op;
  return a;
}

// A segment is a run of runs that ends before any other action and at a run
// after which the step waits for a transfer.
TEST(StepGraphs, SegmentsEndAtTransfersAndWaits) {
  const ActionKind R = ActionKind::Run, S = ActionKind::Send,
                   V = ActionKind::Recv;
  std::vector<ActionInfo> actions;
  for (ActionKind op : {R, R, S, V, R, R, R, S, R})
    actions.push_back(action(op));
  // The send at 2 is waited for after 4, the receive at 3 after 5, the
  // send at 7 after 8 (the last action).
  std::vector<int64_t> waits = {-1, -1, 4, 5, -1, -1, -1, 8, -1};
  EXPECT_EQ(segmentEnds(actions, waits),
            (std::vector<int64_t>{1, 1, -1, -1, 4, 5, 6, -1, 8}));
  // No transfers (S = 1): one segment.
  std::vector<ActionInfo> runs(3, action(R));
  EXPECT_EQ(segmentEnds(runs, {-1, -1, -1}), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_TRUE(segmentEnds({}, {}).empty());
}

} // namespace
