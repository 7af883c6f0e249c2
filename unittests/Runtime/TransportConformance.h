//===- TransportConformance.h - one test body for every transport -*- C++
//-*-===//
//
// What every Transport must do (Transport.h), written once as per-rank
// bodies over two ranks and run by a harness per transport, as IREE's HAL
// conformance tests are: ranks as threads over InProcessTransport
// (TransportConformanceTest.cpp), MPI processes over MPITransport
// (TransportConformanceMPI.cpp, under mpirun), and ranks as threads over
// NcclTransport with the fake NCCL (NcclTransportTest.cpp). A body runs on
// every rank with a fresh transport and checks with gtest's EXPECT macros.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_UNITTESTS_RUNTIME_TRANSPORTCONFORMANCE_H
#define TANDEM_UNITTESTS_RUNTIME_TRANSPORTCONFORMANCE_H

#include "tandem/Runtime/Transport.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace tandem::runtime::conformance {

/// A 4-byte message's send or receive, described as "send of WHAT" or
/// "recv of WHAT".
inline TransportOp opOf(bool send, int64_t peer, int64_t channel,
                        const std::string &what) {
  TransportOp op;
  op.send = send;
  op.peer = peer;
  op.channel = channel;
  op.dtype = op.wire = ElementType::I32;
  op.bytes = sizeof(int32_t);
  op.description = (send ? "send of " : "recv of ") + what;
  return op;
}

/// A send of `value` or a receive into `into`.
inline TransportOp sendOf(int64_t peer, int64_t channel, const int32_t &value,
                          const std::string &what) {
  TransportOp op = opOf(true, peer, channel, what);
  op.sendData = &value;
  return op;
}

inline TransportOp recvOf(int64_t peer, int64_t channel, int32_t &into,
                          const std::string &what) {
  TransportOp op = opOf(false, peer, channel, what);
  op.recvData = &into;
  return op;
}

/// Messages from one rank to another on one channel pair in posting order,
/// within a group and across groups.
inline void pairsInPostingOrder(Transport &transport, int64_t rank) {
  std::string error;
  const int32_t values[] = {1, 2, 3, 10, 20};
  int32_t got[5] = {};
  if (rank == 0) {
    std::vector<TransportOp> group = {sendOf(1, 7, values[0], "a"),
                                      sendOf(1, 7, values[1], "b"),
                                      sendOf(1, 7, values[2], "c")};
    ASSERT_TRUE(transport.exchange(0, group, error)) << error;
    // Two groups of one send, received by one group of two.
    for (int k = 3; k < 5; ++k) {
      std::vector<TransportOp> one = {sendOf(1, 7, values[k], "d")};
      ASSERT_TRUE(transport.exchange(0, one, error)) << error;
    }
  } else {
    std::vector<TransportOp> group = {recvOf(0, 7, got[0], "a"),
                                      recvOf(0, 7, got[1], "b"),
                                      recvOf(0, 7, got[2], "c")};
    ASSERT_TRUE(transport.exchange(1, group, error)) << error;
    std::vector<TransportOp> two = {recvOf(0, 7, got[3], "d"),
                                    recvOf(0, 7, got[4], "e")};
    ASSERT_TRUE(transport.exchange(1, two, error)) << error;
    for (int k = 0; k < 5; ++k)
      EXPECT_EQ(got[k], values[k]) << "message " << k;
    for (const TransportOp &op : two)
      EXPECT_TRUE(op.completed);
  }
  transport.finish(rank);
}

/// Channels are separate queues: received in the other order, each message
/// still reaches the receive of its channel.
inline void channelsAreSeparate(Transport &transport, int64_t rank) {
  std::string error;
  const int32_t eleven = 11, twentyTwo = 22;
  int32_t one = 0, two = 0;
  std::vector<TransportOp> group;
  if (rank == 0)
    group = {sendOf(1, 1, eleven, "x"), sendOf(1, 2, twentyTwo, "y")};
  else
    group = {recvOf(0, 2, two, "y"), recvOf(0, 1, one, "x")};
  ASSERT_TRUE(transport.exchange(rank, group, error)) << error;
  if (rank == 1) {
    EXPECT_EQ(one, 11);
    EXPECT_EQ(two, 22);
  }
  transport.finish(rank);
}

/// A group is posted at once: both ranks sending to and receiving from
/// each other in one group complete (rendezvous sends would deadlock if
/// the group's ops were issued one by one).
inline void bothWaysInOneGroup(Transport &transport, int64_t rank) {
  std::string error;
  int64_t other = 1 - rank;
  const int32_t mine = static_cast<int32_t>(100 + rank);
  int32_t theirs = 0;
  std::vector<TransportOp> group = {sendOf(other, 3, mine, "mine"),
                                    recvOf(other, 3, theirs, "theirs")};
  ASSERT_TRUE(transport.exchange(rank, group, error)) << error;
  EXPECT_EQ(theirs, 100 + other);
  transport.finish(rank);
}

/// Every completed op is counted against its rank and peer.
inline void bytesAreCountedPerPeer(Transport &transport, int64_t rank) {
  std::string error;
  int64_t other = 1 - rank;
  const int32_t values[3] = {1, 2, 3};
  int32_t got[3] = {};
  std::vector<TransportOp> group;
  if (rank == 0) {
    TransportOp pair = sendOf(1, 6, values[0], "pair");
    pair.bytes = 2 * sizeof(int32_t);
    group = {pair, recvOf(1, 6, got[2], "one")};
  } else {
    TransportOp pair = recvOf(0, 6, got[0], "pair");
    pair.bytes = 2 * sizeof(int32_t);
    group = {pair, sendOf(0, 6, values[2], "one")};
  }
  ASSERT_TRUE(transport.exchange(rank, group, error)) << error;
  PeerBytes counted = transport.bytesWith(rank, other);
  EXPECT_EQ(counted.sent, rank == 0 ? 8u : 4u);
  EXPECT_EQ(counted.received, rank == 0 ? 4u : 8u);
  EXPECT_EQ(transport.bytesWith(rank, rank).sent, 0u);
  if (rank == 1) {
    EXPECT_EQ(got[0], 1);
    EXPECT_EQ(got[1], 2);
  } else {
    EXPECT_EQ(got[2], 3);
  }
  transport.finish(rank);
}

/// Posting returns at once and waiting is separate: rank 0 posts two groups
/// before waiting for either, rank 1 waits for its second receive before
/// its first; every op completes, counted once, with its value.
inline void postedGroupsAreWaitedLater(Transport &transport, int64_t rank) {
  std::string error;
  const int32_t values[2] = {41, 42};
  int32_t got[2] = {};
  std::vector<TransportOp> first, second;
  if (rank == 0) {
    first = {sendOf(1, 8, values[0], "first")};
    second = {sendOf(1, 8, values[1], "second")};
  } else {
    first = {recvOf(0, 8, got[0], "first")};
    second = {recvOf(0, 8, got[1], "second")};
  }
  ASSERT_TRUE(transport.post(rank, first, error)) << error;
  ASSERT_TRUE(transport.post(rank, second, error)) << error;
  std::vector<TransportOp *> later = {&first[0]}, sooner = {&second[0]};
  if (rank == 0)
    std::swap(later, sooner);
  ASSERT_TRUE(transport.wait(rank, sooner, error)) << error;
  EXPECT_TRUE(sooner[0]->completed);
  ASSERT_TRUE(transport.wait(rank, later, error)) << error;
  EXPECT_TRUE(first[0].completed && second[0].completed);
  PeerBytes counted = transport.bytesWith(rank, 1 - rank);
  EXPECT_EQ(rank == 0 ? counted.sent : counted.received, 8u);
  if (rank == 1) {
    EXPECT_EQ(got[0], 41);
    EXPECT_EQ(got[1], 42);
  }
  transport.finish(rank);
}

/// A posted send does not hold its rank: rank 0 posts a send on channel 1,
/// then exchanges a send on channel 2 that rank 1 receives first. Had the
/// first post waited, both ranks would wait for each other. (Transports
/// with tags: without them the two sends would match in issue order.)
inline void aPostedSendDoesNotBlock(Transport &transport, int64_t rank) {
  std::string error;
  const int32_t early = 1, late = 2;
  int32_t got[2] = {};
  if (rank == 0) {
    std::vector<TransportOp> posted = {sendOf(1, 1, early, "early")};
    ASSERT_TRUE(transport.post(0, posted, error)) << error;
    std::vector<TransportOp> then = {sendOf(1, 2, late, "late")};
    ASSERT_TRUE(transport.exchange(0, then, error)) << error;
    ASSERT_TRUE(transport.wait(0, {&posted[0]}, error)) << error;
  } else {
    std::vector<TransportOp> lateFirst = {recvOf(0, 2, got[1], "late")};
    ASSERT_TRUE(transport.exchange(1, lateFirst, error)) << error;
    std::vector<TransportOp> earlyLast = {recvOf(0, 1, got[0], "early")};
    ASSERT_TRUE(transport.exchange(1, earlyLast, error)) << error;
    EXPECT_EQ(got[0], 1);
    EXPECT_EQ(got[1], 2);
  }
  transport.finish(rank);
}

/// A message larger than its receive fails the receiving rank, naming its
/// op; nothing is written past the receive's bytes.
inline void aLargerMessageFails(Transport &transport, int64_t rank) {
  std::string error;
  const int32_t pair[2] = {5, 6};
  int32_t into[2] = {0, -1};
  if (rank == 0) {
    TransportOp op = sendOf(1, 4, pair[0], "pair");
    op.bytes = sizeof pair;
    std::vector<TransportOp> group = {op};
    // The sender's outcome is the transport's (MPI completes it).
    transport.exchange(0, group, error);
  } else {
    std::vector<TransportOp> group = {recvOf(0, 4, into[0], "one")};
    EXPECT_FALSE(transport.exchange(1, group, error));
    EXPECT_NE(error.find("recv of one"), std::string::npos) << error;
    EXPECT_EQ(into[1], -1);
  }
  transport.finish(rank);
}

/// A peer that never posts the other side: the waiting rank fails, naming
/// the op it waits in (a deadlock report in process, a timeout over MPI),
/// instead of hanging. Run with a short timeout.
inline void aSilentPeerIsNamed(Transport &transport, int64_t rank) {
  std::string error;
  const int32_t value = 9;
  if (rank == 0) {
    std::vector<TransportOp> group = {sendOf(1, 5, value, "probe")};
    EXPECT_FALSE(transport.exchange(0, group, error));
    EXPECT_NE(error.find("send of probe"), std::string::npos) << error;
  }
  transport.finish(rank);
}

/// A collective over both ranks of `count` values of `dtype` at `data`.
inline CollectiveOp collectiveOf(CollectiveOp::Kind kind, ElementType dtype,
                                 void *data, uint64_t bytes,
                                 const std::string &what) {
  CollectiveOp op;
  op.kind = kind;
  op.group = {1, 0};
  op.dtype = dtype;
  op.bytes = bytes;
  op.data = data;
  op.description = what;
  return op;
}

/// All-reduce sum and max (a NaN wins), then a broadcast from rank 1: every
/// member ends with the same values.
inline void collectivesAgree(Transport &transport, int64_t rank) {
  std::string error;
  float values[3] = {rank == 0 ? 1.5f : 2.25f, rank == 0 ? -1.0f : 4.0f,
                     rank == 0 ? 0.0f : std::nanf("")};
  CollectiveOp sum = collectiveOf(CollectiveOp::Kind::AllReduce,
                                  ElementType::F32, values, 8, "sum");
  ASSERT_TRUE(transport.collective(rank, sum, error)) << error;
  EXPECT_EQ(values[0], 3.75f);
  EXPECT_EQ(values[1], 3.0f);
  CollectiveOp max = collectiveOf(CollectiveOp::Kind::AllReduce,
                                  ElementType::F32, values + 1, 8, "max");
  max.reduction = CollectiveOp::Reduction::Max;
  ASSERT_TRUE(transport.collective(rank, max, error)) << error;
  EXPECT_EQ(values[1], 3.0f);
  EXPECT_TRUE(std::isnan(values[2]));
  int64_t mine[2] = {10 * rank, 10 * rank + 1};
  CollectiveOp broadcast = collectiveOf(CollectiveOp::Kind::Broadcast,
                                        ElementType::I64, mine, 16, "bcast");
  broadcast.root = 1;
  ASSERT_TRUE(transport.collective(rank, broadcast, error)) << error;
  EXPECT_EQ(mine[0], 10);
  EXPECT_EQ(mine[1], 11);
  // bf16 sums round to nearest even: 1 + 2^-8 is a tie that stays 1, and
  // 1 + 3 * 2^-8 one that goes up to 1 + 2^-6.
  uint16_t halves[2] = {static_cast<uint16_t>(rank == 0 ? 0x3F80 : 0x3B80),
                        static_cast<uint16_t>(rank == 0 ? 0x3F80 : 0x3C40)};
  CollectiveOp bf16 = collectiveOf(CollectiveOp::Kind::AllReduce,
                                   ElementType::BF16, halves, 4, "bf16");
  ASSERT_TRUE(transport.collective(rank, bf16, error)) << error;
  EXPECT_EQ(halves[0], 0x3F80);
  EXPECT_EQ(halves[1], 0x3F82);
  transport.finish(rank);
}

/// Members that disagree (here on the reduction) fail, saying so.
inline void aCollectiveMismatchFails(Transport &transport, int64_t rank) {
  std::string error;
  float value = 1;
  CollectiveOp op = collectiveOf(CollectiveOp::Kind::AllReduce,
                                 ElementType::F32, &value, 4, "odd one");
  if (rank == 1)
    op.reduction = CollectiveOp::Reduction::Max;
  EXPECT_FALSE(transport.collective(rank, op, error));
  EXPECT_NE(error.find("collective mismatch"), std::string::npos) << error;
  EXPECT_NE(error.find("reduction"), std::string::npos) << error;
  transport.finish(rank);
}

} // namespace tandem::runtime::conformance

/// Registers every body above but channelsAreSeparate and
/// aPostedSendDoesNotBlock as a test of
/// `SUITE`, each run by `RUN(body)` (RUN may take extra arguments after the
/// body: `EXTRA`, given to the silent peer's run only, which needs a short
/// timeout and, over MPI, a drain). For transports without tags (NCCL),
/// where messages between two ranks match in issue order across channels.
#define TANDEM_TRANSPORT_CONFORMANCE_TESTS_UNTAGGED(SUITE, RUN, ...)           \
  TEST(SUITE, PairsInPostingOrder) {                                           \
    RUN(::tandem::runtime::conformance::pairsInPostingOrder);                  \
  }                                                                            \
  TEST(SUITE, BytesAreCountedPerPeer) {                                        \
    RUN(::tandem::runtime::conformance::bytesAreCountedPerPeer);               \
  }                                                                            \
  TEST(SUITE, BothWaysInOneGroup) {                                            \
    RUN(::tandem::runtime::conformance::bothWaysInOneGroup);                   \
  }                                                                            \
  TEST(SUITE, PostedGroupsAreWaitedLater) {                                    \
    RUN(::tandem::runtime::conformance::postedGroupsAreWaitedLater);           \
  }                                                                            \
  TEST(SUITE, ALargerMessageFails) {                                           \
    RUN(::tandem::runtime::conformance::aLargerMessageFails);                  \
  }                                                                            \
  TEST(SUITE, ASilentPeerIsNamed) {                                            \
    RUN(::tandem::runtime::conformance::aSilentPeerIsNamed, ##__VA_ARGS__);    \
  }

/// Every body, for transports whose channels are separate queues (tags).
/// The collectives' payloads here are host memory, which the NCCL
/// transport cannot take: its collectives are tested on the fake GPU's
/// memory (test/Runtime/collectives.test).
#define TANDEM_TRANSPORT_CONFORMANCE_TESTS(SUITE, RUN, ...)                    \
  TANDEM_TRANSPORT_CONFORMANCE_TESTS_UNTAGGED(SUITE, RUN, ##__VA_ARGS__)       \
  TEST(SUITE, ChannelsAreSeparate) {                                           \
    RUN(::tandem::runtime::conformance::channelsAreSeparate);                  \
  }                                                                            \
  TEST(SUITE, APostedSendDoesNotBlock) {                                       \
    RUN(::tandem::runtime::conformance::aPostedSendDoesNotBlock);              \
  }                                                                            \
  TEST(SUITE, CollectivesAgree) {                                              \
    RUN(::tandem::runtime::conformance::collectivesAgree);                     \
  }                                                                            \
  TEST(SUITE, ACollectiveMismatchFails) {                                      \
    RUN(::tandem::runtime::conformance::aCollectiveMismatchFails);             \
  }

#endif // TANDEM_UNITTESTS_RUNTIME_TRANSPORTCONFORMANCE_H
