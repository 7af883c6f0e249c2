//===- StepGraphsTest.cpp - where a step's CUDA graphs begin and end ------===//

#include "tandem/Runtime/StepGraphs.h"

#include "tandem/Runtime/CudaDriver.h"
#include "tandem/Runtime/Device.h"

#include <gtest/gtest.h>

#include <cstdint>

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

// A segment is captured once and replayed; its graph is dropped when the
// segments change (another transport's waits), since a graph is known by
// its first action alone, and when an address the launches take moves.
TEST(StepGraphs, GraphsReplayUntilTheSegmentsOrAddressesChange) {
  std::string error;
  auto driver = CudaDriver::load(TANDEM_FAKE_CUDA_DRIVER, error);
  ASSERT_TRUE(driver) << error;
  auto device = openCudaDevice(*driver, 0, error);
  ASSERT_TRUE(device) << error;
  void *stream = nullptr;
  auto *counter = static_cast<int32_t *>(device->allocate(4, 4, error));
  ASSERT_TRUE(counter && device->createRankStream(stream, error)) << error;
  int32_t zero = 0;
  ASSERT_TRUE(device->copyToDevice(counter, &zero, 4, error)) << error;
  // The segment's one "run" adds one to the counter (a host function on
  // the fake's stream, as host code runs under --cuda-graphs).
  auto increment = [](void *data) { ++*static_cast<int32_t *>(data); };
  StepGraphs graphs(*device, stream);
  const std::vector<int64_t> ends = {0}, otherEnds = {1, 1};
  const std::vector<const void *> addresses = {counter};
  auto step = [&](const std::vector<int64_t> &segments,
                  StepGraphs::Mode expected) {
    graphs.startStep(addresses, segments, /*capture=*/true);
    EXPECT_EQ(graphs.mode(0), expected);
    ASSERT_TRUE(graphs.enter(0, error)) << error;
    if (graphs.mode(0) != StepGraphs::Mode::Replay)
      ASSERT_TRUE(
          device->launchHostFunction(stream, +increment, counter, error))
          << error;
    ASSERT_TRUE(graphs.leave(0, nullptr, "segment", error)) << error;
    ASSERT_TRUE(device->synchronize(error)) << error;
  };
  step(ends, StepGraphs::Mode::Capture);
  EXPECT_EQ(graphs.size(), 1u);
  step(ends, StepGraphs::Mode::Replay);
  step(otherEnds, StepGraphs::Mode::Capture);
  step(otherEnds, StepGraphs::Mode::Replay);
  EXPECT_EQ(graphs.size(), 1u);
  int32_t count = 0;
  ASSERT_TRUE(device->copyToHost(&count, counter, 4, error)) << error;
  EXPECT_EQ(count, 4);
  graphs.startStep({nullptr}, otherEnds, /*capture=*/false);
  EXPECT_EQ(graphs.size(), 0u);
  EXPECT_EQ(graphs.mode(0), StepGraphs::Mode::Call);
  device->destroyStream(stream);
  device->release(counter);
}

} // namespace
