//===- GeneratorsTest.cpp - Built-in schedules and their conditions -------===//

#include "tandem/Schedule/Generators.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

using namespace tandem::schedule;

namespace {

std::string printed(ScheduleKind kind, int p, int m, int v = 1) {
  GenerateOptions o;
  o.ranks = p;
  o.microbatches = m;
  o.chunks = v;
  auto s = generateSchedule(kind, o);
  if (!s)
    return "error: " + llvm::toString(s.takeError());
  std::string out;
  llvm::raw_string_ostream os(out);
  printSchedule(*s, os);
  return out;
}

std::string error(ScheduleKind kind, GenerateOptions o) {
  auto s = generateSchedule(kind, o);
  if (s)
    return "no error";
  return llvm::toString(s.takeError());
}

TEST(ScheduleGenerators, Names) {
  for (auto k : {ScheduleKind::GPipe, ScheduleKind::OneFOneB,
                 ScheduleKind::Interleaved1F1B, ScheduleKind::ZBH1})
    EXPECT_EQ(parseScheduleKind(scheduleKindName(k)), k);
  EXPECT_FALSE(parseScheduleKind("2f2b").has_value());
}

TEST(ScheduleGenerators, OneFOneBOrder) {
  EXPECT_EQ(printed(ScheduleKind::OneFOneB, 3, 4),
            "# 1f1b schedule\n"
            "shape ranks=3 chunks=1 microbatches=4\n"
            "rank 0: F0.0 F0.1 F0.2 B0.0 F0.3 B0.1 B0.2 B0.3\n"
            "rank 1: F1.0 F1.1 B1.0 F1.2 B1.1 F1.3 B1.2 B1.3\n"
            "rank 2: F2.0 B2.0 F2.1 B2.1 F2.2 B2.2 F2.3 B2.3\n");
}

TEST(ScheduleGenerators, GPipeOrder) {
  EXPECT_EQ(printed(ScheduleKind::GPipe, 2, 2),
            "# gpipe schedule\n"
            "shape ranks=2 chunks=1 microbatches=2\n"
            "rank 0: F0.0 F0.1 B0.0 B0.1\n"
            "rank 1: F1.0 F1.1 B1.0 B1.1\n");
}

TEST(ScheduleGenerators, InterleavedOrder) {
  EXPECT_EQ(printed(ScheduleKind::Interleaved1F1B, 2, 4, 2),
            "# interleaved-1f1b schedule\n"
            "shape ranks=2 chunks=2 microbatches=4\n"
            "rank 0: F0.0 F0.1 F2.0 F2.1 F0.2 B2.0 F0.3 B2.1 F2.2 B0.0 F2.3 "
            "B0.1 B2.2 B2.3 B0.2 B0.3\n"
            "rank 1: F1.0 F1.1 F3.0 B3.0 F3.1 B3.1 F1.2 B1.0 F1.3 B1.1 F3.2 "
            "B3.2 F3.3 B3.3 B1.2 B1.3\n");
}

TEST(ScheduleGenerators, ZBH1Order) {
  EXPECT_EQ(printed(ScheduleKind::ZBH1, 3, 4),
            "# zb-h1 schedule\n"
            "shape ranks=3 chunks=1 microbatches=4\n"
            "rank 0: F0.0 F0.1 F0.2 BI0.0 BW0.0 F0.3 BI0.1 BW0.1 BI0.2 BW0.2 "
            "BI0.3 BW0.3\n"
            "rank 1: F1.0 F1.1 BI1.0 F1.2 BI1.1 BW1.0 F1.3 BI1.2 BW1.1 BI1.3 "
            "BW1.2 BW1.3\n"
            "rank 2: F2.0 BI2.0 F2.1 BI2.1 F2.2 BI2.2 BW2.0 F2.3 BI2.3 BW2.1 "
            "BW2.2 BW2.3\n");
}

TEST(ScheduleGenerators, EveryBuiltInValidates) {
  for (int p : {1, 2, 3, 4})
    for (int m : {1, 2, 4, 8})
      for (int v : {1, 2, 3}) {
        GenerateOptions o;
        o.ranks = p;
        o.microbatches = m;
        o.chunks = v;
        for (auto k : {ScheduleKind::GPipe, ScheduleKind::OneFOneB,
                       ScheduleKind::Interleaved1F1B, ScheduleKind::ZBH1}) {
          auto s = generateSchedule(k, o);
          if (!s) {
            llvm::consumeError(s.takeError());
            continue;
          }
          // Includes gradient accumulation in microbatch order.
          llvm::Error e = validateSchedule(*s);
          EXPECT_FALSE(static_cast<bool>(e))
              << scheduleKindName(k).str() << " p=" << p << " m=" << m
              << " v=" << v << ": " << llvm::toString(std::move(e));
        }
      }
}

TEST(ScheduleGenerators, Conditions) {
  GenerateOptions o;
  o.ranks = 4;
  o.microbatches = 6;
  o.chunks = 2;
  EXPECT_EQ(error(ScheduleKind::Interleaved1F1B, o),
            "interleaved-1f1b: the microbatch count (6) must be a multiple "
            "of the rank count (4)");
  o.microbatches = 8;
  o.layers = 6;
  EXPECT_EQ(error(ScheduleKind::Interleaved1F1B, o),
            "interleaved-1f1b: 4 ranks x 2 chunks = 8 stages need at least 8 "
            "layers, the model has 6");
  o.layers = 8;
  EXPECT_EQ(error(ScheduleKind::Interleaved1F1B, o), "no error");
  o.chunks = 1;
  EXPECT_EQ(error(ScheduleKind::Interleaved1F1B, o),
            "interleaved-1f1b: needs at least 2 chunks per rank, got "
            "--chunks 1; use 1f1b for one");
  o.chunks = 2;
  EXPECT_EQ(error(ScheduleKind::OneFOneB, o),
            "1f1b: runs one chunk per rank, got --chunks 2; use "
            "interleaved-1f1b for several");
  EXPECT_EQ(error(ScheduleKind::ZBH1, o),
            "zb-h1: runs one chunk per rank, got --chunks 2; use "
            "interleaved-1f1b for several");
  o.chunks = 1;
  o.ranks = 0;
  EXPECT_EQ(error(ScheduleKind::GPipe, o),
            "gpipe: needs at least 1 rank, got 0");
  o.ranks = 2;
  o.microbatches = 0;
  EXPECT_EQ(error(ScheduleKind::OneFOneB, o),
            "1f1b: needs at least 1 microbatch, got 0");
}

} // namespace
