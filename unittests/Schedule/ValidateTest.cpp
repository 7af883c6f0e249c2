//===- ValidateTest.cpp - Every validation message
//-------------------------===//

#include "tandem/Schedule/Schedule.h"

#include "llvm/Support/Error.h"

#include "gtest/gtest.h"

using namespace tandem::schedule;

namespace {

std::string check(llvm::StringRef text, bool accumulationOrder = true) {
  auto s = parseSchedule(text);
  if (!s)
    return "parse: " + llvm::toString(s.takeError());
  ValidateOptions o;
  o.accumulationOrder = accumulationOrder;
  if (llvm::Error e = validateSchedule(*s, o))
    return llvm::toString(std::move(e));
  return "ok";
}

const char *shape22 = "shape ranks=2 microbatches=2\n";

TEST(ScheduleValidate, Accepts) {
  EXPECT_EQ(check("rank 0: F0.0 F0.1 B0.0 B0.1\n"
                  "rank 1: F1.0 B1.0 F1.1 B1.1\n"),
            "ok");
  EXPECT_EQ(check("rank 0: F0.0 BI0.0 BW0.0\n"), "ok");
}

TEST(ScheduleValidate, Messages) {
  EXPECT_EQ(check(std::string(shape22) + "rank 0: F0.0 F0.5\nrank 1:\n"),
            "rank 0: action 1 (F0.5): microbatch 5 is out of range: the "
            "schedule has 2 microbatches");
  EXPECT_EQ(check(std::string(shape22) + "rank 0: F4.0\nrank 1:\n"),
            "rank 0: action 0 (F4.0): stage 4 is out of range: the schedule "
            "has 2 stages (2 ranks x 1 chunks)");
  EXPECT_EQ(check("rank 0: F0.0 F1.0\nrank 1: F1.0\n"),
            "rank 0: action 1 (F1.0): stage 1 belongs to rank 1");
  EXPECT_EQ(check("rank 0: F0.0 F0.0 B0.0\n"),
            "rank 0: action 1 (F0.0): runs twice (first as action 0)");
  EXPECT_EQ(check("rank 0: F0.0 B0.0 F0.1\n"),
            "rank 0: B0.1 is missing: stage 0 microbatch 1 has no backward");
  EXPECT_EQ(check("rank 0: B0.0 B0.1 F0.1\n"),
            "rank 0: F0.0 is missing: stage 0 microbatch 0 has no forward");
  EXPECT_EQ(check("rank 0: F0.0 B0.0 BI0.0 BW0.0\n"),
            "rank 0: stage 0 microbatch 0 has both a full backward B0.0 and "
            "a split one (BI/BW)");
  EXPECT_EQ(check("rank 0: F0.0 BI0.0\n"),
            "rank 0: BW0.0 is missing: stage 0 microbatch 0 has BI but not "
            "BW");
  EXPECT_EQ(check("rank 0: F0.0 BW0.0\n"),
            "rank 0: BI0.0 is missing: stage 0 microbatch 0 has BW but not "
            "BI");
  EXPECT_EQ(check("rank 0: B0.0 F0.0\n"),
            "rank 0: action 0 (B0.0): runs before F0.0, which it depends on "
            "(action 1)");
  EXPECT_EQ(check("rank 0: F0.0 BW0.0 BI0.0\n"),
            "rank 0: action 1 (BW0.0): runs before BI0.0, which it depends "
            "on (action 2)");
  // Two chunks on one rank: stage 1 needs stage 0 first.
  EXPECT_EQ(check("shape ranks=1 chunks=2 microbatches=1\n"
                  "rank 0: F1.0 F0.0 B1.0 B0.0\n"),
            "rank 0: action 0 (F1.0): runs before F0.0, which it depends on "
            "(action 1)");
  EXPECT_EQ(check("shape ranks=1 chunks=2 microbatches=1\n"
                  "rank 0: F0.0 F1.0 B0.0 B1.0\n"),
            "rank 0: action 2 (B0.0): runs before B1.0, which it depends on "
            "(action 3)");
}

TEST(ScheduleValidate, AccumulationOrder) {
  const char *text = "rank 0: F0.0 F0.1 B0.1 B0.0\n";
  EXPECT_EQ(check(text),
            "rank 0: action 2 (B0.1): accumulates stage 0's weight gradient "
            "out of microbatch order: expected microbatch 0");
  EXPECT_EQ(check(text, /*accumulationOrder=*/false), "ok");
  // With a split backward the BW order is what counts.
  EXPECT_EQ(check("rank 0: F0.0 F0.1 BI0.1 BI0.0 BW0.0 BW0.1\n"), "ok");
  EXPECT_EQ(check("rank 0: F0.0 F0.1 BI0.0 BI0.1 BW0.1 BW0.0\n"),
            "rank 0: action 4 (BW0.1): accumulates stage 0's weight gradient "
            "out of microbatch order: expected microbatch 0");
}

TEST(ScheduleValidate, TransferMessages) {
  const char *r1 = "rank 1: RECV_F0.0@0 F1.0 B1.0 SEND_B1.0@0\n";
  EXPECT_EQ(
      check(std::string("rank 0: F0.0 SEND_F0.0@1 RECV_B1.0@1 B0.0\n") + r1),
      "ok");
  EXPECT_EQ(
      check(std::string("rank 0: SEND_F0.0@1 F0.0 RECV_B1.0@1 B0.0\n") + r1),
      "rank 0: action 0 (SEND_F0.0@1): sends before its payload is "
      "computed (action 1)");
  EXPECT_EQ(
      check(std::string("rank 0: F0.0 SEND_F0.0@0 RECV_B1.0@1 B0.0\n") + r1),
      "rank 0: action 1 (SEND_F0.0@0): peer must be rank 1, not 0");
  EXPECT_EQ(
      check(std::string("rank 0: F0.0 RECV_F0.0@1 RECV_B1.0@1 B0.0\n") + r1),
      "rank 0: action 1 (RECV_F0.0@1): must run on rank 1, which "
      "consumes this payload");
  EXPECT_EQ(
      check(std::string("rank 0: F0.0 SEND_F0.0@1 B0.0 RECV_B1.0@1\n") + r1),
      "rank 0: action 2 (B0.0): runs before RECV_B1.0@1 (action 3), "
      "which delivers its input");
  EXPECT_EQ(check(std::string("rank 0: F0.0 SEND_F0.0@1 B0.0\n") + r1),
            "rank 1: action 3 (SEND_B1.0@0): has no matching RECV on rank 0");
  EXPECT_EQ(check("rank 0: F0.0 SEND_F0.0@1 RECV_B1.0@1 B0.0\n"
                  "rank 1: F1.0 B1.0 SEND_B1.0@0\n"),
            "rank 0: action 1 (SEND_F0.0@1): has no matching RECV on rank 1");
  EXPECT_EQ(check("rank 0: F0.0 RECV_B1.0@1 B0.0\n"
                  "rank 1: RECV_F0.0@0 F1.0 B1.0 SEND_B1.0@0\n"),
            "rank 1: action 0 (RECV_F0.0@0): has no matching SEND on rank 0");
  EXPECT_EQ(check("rank 0: F0.0 SEND_B0.0@1 B0.0\n"),
            "rank 0: action 1 (SEND_B0.0@1): stage 0 has no previous "
            "neighbour to receive its output");
  EXPECT_EQ(check("shape ranks=1 chunks=2 microbatches=1\n"
                  "rank 0: F0.0 SEND_F0.0@0 F1.0 B1.0 B0.0\n"),
            "rank 0: action 1 (SEND_F0.0@0): stages 0 and 1 are both on rank "
            "0: no transfer is needed");
  EXPECT_EQ(check("rank 0: F0.0 SEND_F0.0@1 SEND_F0.0@1 RECV_B1.0@1 B0.0\n" +
                  std::string(r1)),
            "rank 0: action 2 (SEND_F0.0@1): duplicates action 1");
  EXPECT_EQ(check("rank 0: F0.0 SEND_F0.0@1 B0.0\n"
                  "rank 1: RECV_F0.0@0 F1.0 B1.0\n"),
            "rank 0: action 2 (B0.0): needs RECV_B1.0@1 earlier on this rank "
            "(the schedule has explicit transfers)");
}

TEST(ScheduleValidate, RankCount) {
  Schedule s;
  s.shape.ranks = 2;
  s.actions.resize(1);
  EXPECT_EQ(llvm::toString(validateSchedule(s)),
            "schedule has 1 rank lists for 2 ranks");
}

} // namespace
