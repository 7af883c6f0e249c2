//===- FormatTest.cpp - The schedule text format --------------------------===//

#include "tandem/Schedule/Generators.h"
#include "tandem/Schedule/Schedule.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

using namespace tandem::schedule;

namespace {

std::string print(const Schedule &s) {
  std::string out;
  llvm::raw_string_ostream os(out);
  printSchedule(s, os);
  return out;
}

std::string parseError(llvm::StringRef text) {
  auto s = parseSchedule(text, "t.sched");
  if (s)
    return "no error";
  return llvm::toString(s.takeError());
}

TEST(ScheduleFormat, RoundTripsEveryBuiltIn) {
  for (auto k : {ScheduleKind::GPipe, ScheduleKind::OneFOneB,
                 ScheduleKind::Interleaved1F1B, ScheduleKind::ZBH1}) {
    GenerateOptions o;
    o.ranks = 4;
    o.microbatches = 8;
    o.chunks = k == ScheduleKind::Interleaved1F1B ? 2 : 1;
    auto s = generateSchedule(k, o);
    ASSERT_TRUE(static_cast<bool>(s));
    std::string text = print(*s);
    auto back = parseSchedule(text);
    ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
    EXPECT_EQ(back->shape.ranks, 4);
    EXPECT_EQ(back->shape.chunks, o.chunks);
    EXPECT_EQ(back->shape.microbatches, 8);
    EXPECT_EQ(back->actions, s->actions);
    back->name = s->name;
    EXPECT_EQ(print(*back), text);
  }
}

TEST(ScheduleFormat, TransfersAndComments) {
  auto s = parseSchedule("# two ranks\n"
                         "rank 0: F0.0 SEND_F0.0@1   # trailing comment\n"
                         "\n"
                         "rank 1:  RECV_F0.0@0 F1.0 B1.0 SEND_B1.0@0\n");
  ASSERT_TRUE(static_cast<bool>(s)) << llvm::toString(s.takeError());
  EXPECT_EQ(s->shape.ranks, 2);
  EXPECT_EQ(s->shape.chunks, 1);
  EXPECT_EQ(s->shape.microbatches, 1);
  ASSERT_EQ(s->actions[1].size(), 4u);
  EXPECT_EQ(s->actions[1][0],
            Action::transfer(ActionKind::Recv, ActionKind::F, 0, 0, 0));
  EXPECT_EQ(formatAction(s->actions[1][3]), "SEND_B1.0@0");
  EXPECT_EQ(formatAction(Action::compute(ActionKind::BW, 3, 12)), "BW3.12");
  EXPECT_TRUE(s->hasExplicitTransfers());
}

TEST(ScheduleFormat, ShapeLine) {
  auto s = parseSchedule("shape ranks=2 chunks=2 microbatches=3\n"
                         "rank 0: F0.0\nrank 1:\n");
  ASSERT_TRUE(static_cast<bool>(s)) << llvm::toString(s.takeError());
  EXPECT_EQ(s->shape.chunks, 2);
  EXPECT_EQ(s->shape.microbatches, 3);
}

TEST(ScheduleFormat, Errors) {
  EXPECT_EQ(parseError("rank 0: F0.0 X1.2\n"),
            "t.sched:1:14: error: unknown action 'X1.2': expected F, B, BI, "
            "BW, SEND_<F|B> or RECV_<F|B> followed by <stage>.<microbatch>");
  EXPECT_EQ(parseError("rank 0: F0.0\nrank 1: F1.0 B1\n"),
            "t.sched:2:14: error: expected <stage>.<microbatch> in 'B1'");
  EXPECT_EQ(parseError("rank 0: F0.0x\n"),
            "t.sched:1:13: error: unexpected 'x' in 'F0.0x'");
  EXPECT_EQ(parseError("rank 0: SEND_F0.0\n"),
            "t.sched:1:9: error: transfer 'SEND_F0.0' needs '@<peer rank>'");
  EXPECT_EQ(parseError("rank 0: SEND_BW0.0@1\n"),
            "t.sched:1:9: error: transfer 'SEND_BW0.0@1' must carry F or B "
            "(the output of F, or of B/BI)");
  EXPECT_EQ(parseError("rank 1: F0.0\n"),
            "t.sched:1:6: error: expected rank 0 here, found rank 1 (ranks "
            "are listed in order from 0)");
  EXPECT_EQ(parseError("rank 0 F0.0\n"),
            "t.sched:1:6: error: expected ':' after the rank number");
  EXPECT_EQ(parseError("  stage 0: F0.0\n"),
            "t.sched:1:3: error: expected 'rank <r>:', 'shape ...' or a "
            "comment");
  EXPECT_EQ(parseError("shape ranks=2 chunk=1\n"),
            "t.sched:1:15: error: unknown shape field 'chunk': expected "
            "ranks, chunks or microbatches");
  EXPECT_EQ(parseError("shape ranks=0 microbatches=1\n"),
            "t.sched:1:7: error: shape field 'ranks' needs a positive "
            "integer");
  EXPECT_EQ(parseError("shape ranks=2 microbatches=1\nrank 0: F0.0\n"),
            "t.sched: error: shape says 2 ranks but 1 rank lines follow");
  EXPECT_EQ(parseError("rank 0: F0.0\nrank 1: F2.0\n"),
            "t.sched: error: 3 stages do not divide into 2 ranks; add a "
            "'shape' line");
  EXPECT_EQ(parseError("# nothing\n"), "t.sched: error: no 'rank <r>:' lines");
}

} // namespace
