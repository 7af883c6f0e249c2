//===- TransferOrderTest.cpp - one order per rank pair --------------------===//

#include "tandem/Runtime/TransferOrder.h"

#include <gtest/gtest.h>

using namespace tandem::runtime;

namespace {

ActionInfo transfer(ActionKind op, int64_t peer, int64_t channel,
                    int64_t sequence, const std::string &fragment) {
  ActionInfo a;
  a.op = op;
  a.peer = peer;
  a.channel = channel;
  a.sequence = sequence;
  a.slot = SlotRef{fragment, 0, sequence};
  return a;
}

ActionInfo run(const std::string &fragment) {
  ActionInfo a;
  a.fragment = fragment;
  return a;
}

/// Rank 0 sends fwd on channel 1 and then bwd-input on channel 2 to rank
/// 1 (microbatches 0 and 1 each), and receives gradients on channel 3.
std::vector<Manifest> twoRanks() {
  std::vector<Manifest> ranks(2);
  ranks[0].actions = {run("s0.fwd"),
                      transfer(ActionKind::Send, 1, 1, 0, "s0.fwd"),
                      transfer(ActionKind::Send, 1, 2, 0, "s0.aux"),
                      transfer(ActionKind::Send, 1, 1, 1, "s0.fwd"),
                      transfer(ActionKind::Recv, 1, 3, 0, "s1.bwd")};
  ranks[1].actions = {transfer(ActionKind::Recv, 0, 1, 0, "s0.fwd"),
                      transfer(ActionKind::Recv, 0, 2, 0, "s0.aux"),
                      run("s1.fwd"),
                      transfer(ActionKind::Recv, 0, 1, 1, "s0.fwd"),
                      transfer(ActionKind::Send, 0, 3, 0, "s1.bwd")};
  return ranks;
}

} // namespace

TEST(TransferOrder, OneOrderPerPairAgrees) {
  std::string error;
  EXPECT_TRUE(transferOrdersAgree(twoRanks(), error)) << error;
  EXPECT_TRUE(transferOrdersAgree({}, error)) << error;
}

TEST(TransferOrder, AReorderedReceiveIsNamed) {
  std::vector<Manifest> ranks = twoRanks();
  // Valid with tags (each channel's messages still in order), not for NCCL.
  std::swap(ranks[1].actions[1], ranks[1].actions[3]);
  std::string error;
  EXPECT_FALSE(transferOrdersAgree(ranks, error));
  EXPECT_EQ(error,
            "rank 0's and rank 1's programs order their transfers "
            "differently: the 2nd message from rank 0 to rank 1 is "
            "s0.aux[0] microbatch 0 (channel 2, message 0) on rank 0 but "
            "s0.fwd[0] microbatch 1 (channel 1, message 1) on rank 1 (NCCL "
            "pairs the messages between two ranks in issue order, not by "
            "channel)");
}

TEST(TransferOrder, AMissingReceiveIsNamed) {
  std::vector<Manifest> ranks = twoRanks();
  ranks[0].actions.pop_back();
  std::string error;
  EXPECT_FALSE(transferOrdersAgree(ranks, error));
  EXPECT_NE(error.find("the 1st message from rank 1 to rank 0 is s1.bwd[0] "
                       "microbatch 0 (channel 3, message 0) on rank 1 but "
                       "nothing on rank 0"),
            std::string::npos)
      << error;
}

TEST(TransferOrder, CollectivesTakeTheirPlaceInEachPair) {
  std::vector<Manifest> ranks = twoRanks();
  ActionInfo reduce;
  reduce.op = ActionKind::AllReduce;
  reduce.group = {1, 0};
  reduce.slot = SlotRef{"g", 0, -1};
  ranks[0].actions.push_back(reduce);
  ranks[1].actions.push_back(reduce);
  std::string error;
  EXPECT_TRUE(transferOrdersAgree(ranks, error)) << error;
  // Rank 1 reduces before its last send to rank 0: rank 0 would take the
  // reduction's message for the gradient.
  std::swap(ranks[1].actions[4], ranks[1].actions[5]);
  EXPECT_FALSE(transferOrdersAgree(ranks, error));
  EXPECT_NE(error.find("the 1st message from rank 1 to rank 0 is the "
                       "all_reduce of g[0] (collective 0 over ranks {1, 0}) "
                       "on rank 1 but s1.bwd[0] microbatch 0 (channel 3, "
                       "message 0) on rank 0"),
            std::string::npos)
      << error;
}
