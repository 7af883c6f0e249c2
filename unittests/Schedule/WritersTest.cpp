//===- WritersTest.cpp - Trace JSON and SVG
//--------------------------------===//

#include "tandem/Schedule/Writers.h"
#include "tandem/Schedule/Generators.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <set>

using namespace tandem::schedule;

namespace {

struct Fixture {
  Schedule schedule;
  SimulationReport report;
};

Fixture make(ScheduleKind kind, int p, int m, int v = 1) {
  GenerateOptions o;
  o.ranks = p;
  o.microbatches = m;
  o.chunks = v;
  auto s = generateSchedule(kind, o);
  EXPECT_TRUE(static_cast<bool>(s));
  auto r = simulate(*s, Costs());
  EXPECT_TRUE(static_cast<bool>(r));
  return {*s, *r};
}

TEST(ScheduleWriters, TraceIsJSONWithOneTrackPerRank) {
  Fixture f = make(ScheduleKind::ZBH1, 3, 4);
  std::string out;
  llvm::raw_string_ostream os(out);
  writeTrace(f.schedule, f.report, os);
  llvm::Expected<llvm::json::Value> v = llvm::json::parse(out);
  ASSERT_TRUE(static_cast<bool>(v)) << llvm::toString(v.takeError());
  const llvm::json::Array *events = v->getAsObject()->getArray("traceEvents");
  ASSERT_NE(events, nullptr);
  int complete = 0;
  std::set<int64_t> tracks;
  double lastEnd = 0;
  for (const llvm::json::Value &e : *events) {
    const llvm::json::Object *o = e.getAsObject();
    ASSERT_NE(o, nullptr);
    if (o->getString("ph") != "X")
      continue;
    ++complete;
    tracks.insert(*o->getInteger("tid"));
    lastEnd = std::max(lastEnd, *o->getNumber("ts") + *o->getNumber("dur"));
    EXPECT_TRUE(o->getObject("args")->getInteger("microbatch").has_value());
  }
  EXPECT_EQ(complete, 3 * 3 * 4);
  EXPECT_EQ(tracks, (std::set<int64_t>{0, 1, 2}));
  EXPECT_EQ(lastEnd, f.report.stepTime * 1000);
}

TEST(ScheduleWriters, SVGIsWellFormed) {
  Fixture f = make(ScheduleKind::Interleaved1F1B, 2, 4, 2);
  std::string out;
  llvm::raw_string_ostream os(out);
  writeSVG(f.schedule, f.report, os);
  llvm::StringRef svg(out);
  EXPECT_TRUE(svg.starts_with("<?xml"));
  EXPECT_TRUE(svg.rtrim().ends_with("</svg>"));
  // Balanced elements: every <g>, <text> and <title> closes.
  for (const char *tag : {"g", "text", "title", "svg"}) {
    size_t open = 0, close = 0;
    std::string o =
        std::string("<") + tag + (std::string(tag) == "g" ? ">" : "");
    std::string c = std::string("</") + tag + ">";
    for (size_t at = svg.find(o); at != llvm::StringRef::npos;
         at = svg.find(o, at + 1))
      if (std::string(tag) == "g" || svg[at + o.size()] == ' ' ||
          svg[at + o.size()] == '>')
        ++open;
    for (size_t at = svg.find(c); at != llvm::StringRef::npos;
         at = svg.find(c, at + 1))
      ++close;
    EXPECT_EQ(open, close) << tag;
  }
  // One box per action, chunk:microbatch labels, a legend and rank rows.
  EXPECT_EQ(svg.count("<g><title>"), 2u * 2 * 2 * 4);
  EXPECT_TRUE(svg.contains(">1:3</text>"));
  EXPECT_TRUE(svg.contains("F forward"));
  EXPECT_TRUE(svg.contains("B backward"));
  EXPECT_TRUE(svg.contains(">rank 1</text>"));
}

} // namespace
