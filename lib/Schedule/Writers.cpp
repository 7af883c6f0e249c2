//===- Writers.cpp - Trace and SVG views of a simulated schedule ----------===//

#include "tandem/Schedule/Writers.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <string>

using namespace llvm;
using namespace tandem::schedule;

void tandem::schedule::writeTrace(const Schedule &schedule,
                                  const SimulationReport &report,
                                  raw_ostream &os) {
  constexpr double usPerUnit = 1000.0;
  json::Array events;
  events.push_back(json::Object{
      {"name", "process_name"},
      {"ph", "M"},
      {"pid", 0},
      {"args", json::Object{{"name", "tandem schedule " + schedule.name}}}});
  for (auto [r, rr] : enumerate(report.ranks)) {
    int64_t rank = r;
    events.push_back(json::Object{
        {"name", "thread_name"},
        {"ph", "M"},
        {"pid", 0},
        {"tid", rank},
        {"args", json::Object{{"name", "rank " + std::to_string(r)}}}});
    events.push_back(
        json::Object{{"name", "thread_sort_index"},
                     {"ph", "M"},
                     {"pid", 0},
                     {"tid", rank},
                     {"args", json::Object{{"sort_index", rank}}}});
    for (const TimedAction &t : rr.timeline) {
      json::Object args{{"stage", t.action.stage},
                        {"chunk", schedule.shape.chunkOf(t.action.stage)},
                        {"microbatch", t.action.microbatch}};
      if (!isCompute(t.action.kind))
        args["peer"] = t.action.peer;
      events.push_back(json::Object{{"name", formatAction(t.action)},
                                    {"cat", kindName(t.action.kind)},
                                    {"ph", "X"},
                                    {"pid", 0},
                                    {"tid", rank},
                                    {"ts", t.start * usPerUnit},
                                    {"dur", (t.end - t.start) * usPerUnit},
                                    {"args", std::move(args)}});
    }
  }
  json::Object root{{"traceEvents", std::move(events)},
                    {"displayTimeUnit", "ms"}};
  os << formatv("{0:2}", json::Value(std::move(root))) << "\n";
}

namespace {
struct Style {
  const char *fill;
  const char *text;
  const char *label;
};
} // namespace

static Style styleOf(ActionKind kind) {
  switch (kind) {
  case ActionKind::F:
    return {"#4e79a7", "#ffffff", "F forward"};
  case ActionKind::B:
    return {"#59a14f", "#ffffff", "B backward"};
  case ActionKind::BI:
    return {"#f28e2b", "#000000", "BI input grad"};
  case ActionKind::BW:
    return {"#b07aa1", "#ffffff", "BW weight grad"};
  case ActionKind::Send:
    return {"#bab0ac", "#000000", "SEND"};
  case ActionKind::Recv:
    return {"#d4cfcc", "#000000", "RECV"};
  }
  return {"#000000", "#ffffff", "?"};
}

static std::string num(double x) {
  std::string s;
  raw_string_ostream os(s);
  os << format("%.6g", x);
  return s;
}

void tandem::schedule::writeSVG(const Schedule &schedule,
                                const SimulationReport &report,
                                raw_ostream &os) {
  const double step = std::max(report.stepTime, 1e-9);
  const double left = 70, top = 40, rowHeight = 30, boxHeight = 24;
  // Aim for about 1000 pixels of timeline; keep boxes readable.
  const double scale = std::clamp(1000.0 / step, 4.0, 60.0);
  const double width = left + step * scale + 20;
  const int ranks = schedule.shape.ranks;
  const double axisY = top + ranks * rowHeight + 6;
  const double legendY = axisY + 34;
  const double height = legendY + 30;
  bool severalChunks = schedule.shape.chunks > 1;

  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width)
     << "\" height=\"" << num(height) << "\" viewBox=\"0 0 " << num(width)
     << " " << num(height)
     << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  os << "<rect x=\"0\" y=\"0\" width=\"" << num(width) << "\" height=\""
     << num(height) << "\" fill=\"#ffffff\"/>\n";
  double meanBubble = 0;
  for (const RankReport &rr : report.ranks)
    meanBubble += rr.bubble;
  meanBubble /= std::max<size_t>(1, report.ranks.size());
  os << "<text x=\"" << num(left) << "\" y=\"20\" font-size=\"14\">"
     << schedule.name << ": " << ranks << " ranks, " << schedule.shape.chunks
     << (schedule.shape.chunks == 1 ? " chunk" : " chunks") << " per rank, "
     << schedule.shape.microbatches << " microbatches; step time "
     << num(report.stepTime) << ", mean bubble " << num(meanBubble)
     << "</text>\n";
  for (auto [r, rr] : enumerate(report.ranks)) {
    double y = top + r * rowHeight;
    os << "<text x=\"8\" y=\"" << num(y + boxHeight / 2 + 4) << "\">rank " << r
       << "</text>\n";
    os << "<rect x=\"" << num(left) << "\" y=\"" << num(y) << "\" width=\""
       << num(step * scale) << "\" height=\"" << num(boxHeight)
       << "\" fill=\"#f2f2f2\"/>\n";
    for (const TimedAction &t : rr.timeline) {
      Style style = styleOf(t.action.kind);
      double x = left + t.start * scale, w = (t.end - t.start) * scale;
      os << "<g><title>" << formatAction(t.action) << " [" << num(t.start)
         << ", " << num(t.end) << ")</title><rect x=\"" << num(x) << "\" y=\""
         << num(y) << "\" width=\"" << num(w) << "\" height=\""
         << num(boxHeight) << "\" fill=\"" << style.fill
         << "\" stroke=\"#ffffff\" stroke-width=\"1\"/>";
      std::string label = std::to_string(t.action.microbatch);
      if (severalChunks)
        label = std::to_string(schedule.shape.chunkOf(t.action.stage)) + ":" +
                label;
      // Narrow boxes get a smaller font; boxes too narrow for that keep the
      // label in their tooltip only.
      bool fits = w >= 7.0 * label.size();
      bool fitsSmall = w >= 5.0 * label.size();
      if (fits || fitsSmall)
        os << "<text x=\"" << num(x + w / 2) << "\" y=\""
           << num(y + boxHeight / 2 + 4) << "\" text-anchor=\"middle\" fill=\""
           << style.text << (fits ? "" : "\" font-size=\"8") << "\">" << label
           << "</text>";
      os << "</g>\n";
    }
  }
  // Time axis: a tick every `tick` units, about every 50 pixels.
  double tick =
      std::max(1.0, std::pow(10.0, std::floor(std::log10(50.0 / scale * 2))));
  while (tick * scale < 40)
    tick *= 2;
  os << "<line x1=\"" << num(left) << "\" y1=\"" << num(axisY) << "\" x2=\""
     << num(left + step * scale) << "\" y2=\"" << num(axisY)
     << "\" stroke=\"#000000\"/>\n";
  for (double t = 0; t <= step + 1e-9; t += tick) {
    double x = left + t * scale;
    os << "<line x1=\"" << num(x) << "\" y1=\"" << num(axisY) << "\" x2=\""
       << num(x) << "\" y2=\"" << num(axisY + 5) << "\" stroke=\"#000000\"/>"
       << "<text x=\"" << num(x) << "\" y=\"" << num(axisY + 18)
       << "\" text-anchor=\"middle\" font-size=\"10\">" << num(t)
       << "</text>\n";
  }
  // Legend: the kinds this schedule uses.
  bool used[6] = {false, false, false, false, false, false};
  for (const RankReport &rr : report.ranks)
    for (const TimedAction &t : rr.timeline)
      used[static_cast<int>(t.action.kind)] = true;
  double x = left;
  for (int k = 0; k < 6; ++k) {
    if (!used[k])
      continue;
    Style style = styleOf(static_cast<ActionKind>(k));
    os << "<rect x=\"" << num(x) << "\" y=\"" << num(legendY)
       << "\" width=\"14\" height=\"14\" fill=\"" << style.fill
       << "\"/><text x=\"" << num(x + 20) << "\" y=\"" << num(legendY + 12)
       << "\">" << style.label << "</text>\n";
    x += 40 + 7.0 * std::string(style.label).size();
  }
  os << "<text x=\"" << num(x) << "\" y=\"" << num(legendY + 12)
     << "\">numbers: microbatch" << (severalChunks ? " (chunk:microbatch)" : "")
     << "</text>\n";
  os << "</svg>\n";
}
