//===- ScheduleCommand.cpp - `tandemc schedule` ---------------------------===//
//
// `tandemc schedule --schedule gpipe|1f1b|interleaved-1f1b|zb-h1|FILE
// --ranks p --microbatches m [--chunks v] [--f ..] [--b ..] [--w ..]
// [--device h100|h200|cpu|FILE] [--print] [--svg out.svg]
// [--trace out.json]`: generates a built-in schedule (or reads a user table
// in the text format of docs/schedules.md), validates it, runs the
// simulator and prints the report. With --device the links are the
// device's and every time is in seconds.
//
//===----------------------------------------------------------------------===//

#include "ScheduleCommand.h"

#include "tandem/Analysis/Device.h"
#include "tandem/Schedule/Generators.h"
#include "tandem/Schedule/Simulator.h"
#include "tandem/Schedule/Writers.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

using namespace llvm;
using namespace tandem::schedule;

static cl::SubCommand
    scheduleCommand("schedule",
                    "Generate or read a pipeline schedule, validate it and "
                    "simulate one training step");

static cl::OptionCategory scheduleCategory("Schedule options");

static cl::opt<std::string> scheduleName(
    "schedule",
    cl::desc("gpipe, 1f1b, interleaved-1f1b, zb-h1, or a file with a "
             "per-rank action table"),
    cl::value_desc("name|file"), cl::Required, cl::sub(scheduleCommand),
    cl::cat(scheduleCategory));
static cl::opt<int> ranks("ranks", cl::desc("Pipeline ranks p (built-ins)"),
                          cl::init(0), cl::sub(scheduleCommand),
                          cl::cat(scheduleCategory));
static cl::opt<int> microbatches("microbatches",
                                 cl::desc("Microbatches m (built-ins)"),
                                 cl::init(0), cl::sub(scheduleCommand),
                                 cl::cat(scheduleCategory));
static cl::opt<int> chunks("chunks",
                           cl::desc("Chunks per rank v (interleaved-1f1b)"),
                           cl::init(1), cl::sub(scheduleCommand),
                           cl::cat(scheduleCategory));
static cl::opt<int>
    layers("layers",
           cl::desc("Layers the model has; checked against ranks x chunks "
                    "(0 = unchecked)"),
           cl::init(0), cl::sub(scheduleCommand), cl::cat(scheduleCategory));
static cl::opt<std::string>
    forwardTime("f",
                cl::desc("Forward duration: one value, or one per stage "
                         "separated by commas"),
                cl::init("1"), cl::sub(scheduleCommand),
                cl::cat(scheduleCategory));
static cl::opt<std::string> inputGradTime(
    "b",
    cl::desc("Input-gradient duration (BI); a full backward B takes b + w"),
    cl::init("1"), cl::sub(scheduleCommand), cl::cat(scheduleCategory));
static cl::opt<std::string>
    weightGradTime("w", cl::desc("Weight-gradient duration (BW)"),
                   cl::init("1"), cl::sub(scheduleCommand),
                   cl::cat(scheduleCategory));
static cl::opt<double> latency("latency", cl::desc("Link latency per transfer"),
                               cl::init(0.0), cl::sub(scheduleCommand),
                               cl::cat(scheduleCategory));
static cl::opt<double> bandwidth(
    "bandwidth", cl::desc("Link bandwidth in bytes per time unit (0 = free)"),
    cl::init(0.0), cl::sub(scheduleCommand), cl::cat(scheduleCategory));
static cl::opt<double>
    bytes("bytes", cl::desc("Activation bytes per microbatch on a stage edge"),
          cl::init(0.0), cl::sub(scheduleCommand), cl::cat(scheduleCategory));
static cl::opt<std::string> deviceName(
    "device",
    cl::desc("Device description (h100, h200, cpu, or a JSON file): links "
             "from the device, times (--f, --b, --w and the report) in "
             "seconds"),
    cl::value_desc("name|file"), cl::sub(scheduleCommand),
    cl::cat(scheduleCategory));
static cl::opt<bool> printActions("print",
                                  cl::desc("Print the per-rank action lists"),
                                  cl::sub(scheduleCommand),
                                  cl::cat(scheduleCategory));
static cl::opt<std::string> svgFile("svg",
                                    cl::desc("Write an SVG timeline here"),
                                    cl::value_desc("file"),
                                    cl::sub(scheduleCommand),
                                    cl::cat(scheduleCategory));
static cl::opt<std::string>
    traceFile("trace", cl::desc("Write a Chrome/Perfetto trace (JSON) here"),
              cl::value_desc("file"), cl::sub(scheduleCommand),
              cl::cat(scheduleCategory));

bool tandem::tandemc::scheduleCommandSelected() {
  return static_cast<bool>(scheduleCommand);
}

static int fail(const Twine &message) {
  WithColor::error(errs(), "tandemc schedule") << message << "\n";
  return 1;
}

/// Parses "1" or "1,2,1.5" into durations.
static bool parseDurations(StringRef flag, StringRef text,
                           std::vector<double> &out) {
  SmallVector<StringRef> parts;
  text.split(parts, ',');
  for (StringRef part : parts) {
    double value = 0;
    if (part.trim().getAsDouble(value) || value < 0) {
      fail("--" + flag +
           " expects non-negative numbers separated by commas, "
           "got '" +
           text + "'");
      return false;
    }
    out.push_back(value);
  }
  return true;
}

static bool writeFile(StringRef path, function_ref<void(raw_ostream &)> write) {
  std::error_code ec;
  ToolOutputFile out(path, ec, sys::fs::OF_Text);
  if (ec) {
    fail("cannot write '" + path + "': " + ec.message());
    return false;
  }
  write(out.os());
  out.keep();
  return true;
}

int tandem::tandemc::runScheduleCommand() {
  Schedule schedule;
  if (auto kind = parseScheduleKind(scheduleName)) {
    if (ranks < 1 || microbatches < 1)
      return fail(scheduleName + " needs --ranks and --microbatches (both at "
                                 "least 1)");
    GenerateOptions options;
    options.ranks = ranks;
    options.microbatches = microbatches;
    options.chunks = chunks;
    options.layers = layers;
    auto generated = generateSchedule(*kind, options);
    if (!generated)
      return fail(toString(generated.takeError()));
    schedule = std::move(*generated);
  } else {
    auto buffer = MemoryBuffer::getFile(scheduleName, /*IsText=*/true);
    if (!buffer)
      return fail("'" + scheduleName +
                  "' is neither a built-in schedule (gpipe, 1f1b, "
                  "interleaved-1f1b, zb-h1) nor a readable file: " +
                  buffer.getError().message());
    auto parsed = parseSchedule((*buffer)->getBuffer(), scheduleName);
    if (!parsed)
      return fail(toString(parsed.takeError()));
    schedule = std::move(*parsed);
    // Given flags must agree with the table.
    if (ranks.getNumOccurrences() && ranks != schedule.shape.ranks)
      return fail(formatv("--ranks {0} but the table has {1} ranks",
                          ranks.getValue(), schedule.shape.ranks)
                      .str());
    if (microbatches.getNumOccurrences() &&
        microbatches != schedule.shape.microbatches)
      return fail(formatv("--microbatches {0} but the table has {1}",
                          microbatches.getValue(), schedule.shape.microbatches)
                      .str());
    if (chunks.getNumOccurrences() && chunks != schedule.shape.chunks)
      return fail(formatv("--chunks {0} but the table has {1}",
                          chunks.getValue(), schedule.shape.chunks)
                      .str());
  }
  if (Error e = validateSchedule(schedule))
    return fail("invalid schedule: " + toString(std::move(e)));

  Costs costs;
  costs.forward.clear();
  costs.inputGrad.clear();
  costs.weightGrad.clear();
  if (!parseDurations("f", forwardTime, costs.forward) ||
      !parseDurations("b", inputGradTime, costs.inputGrad) ||
      !parseDurations("w", weightGradTime, costs.weightGrad))
    return 1;
  costs.latency = latency;
  costs.bandwidth = bandwidth;
  costs.bytesPerMicrobatch = bytes;
  std::optional<tandem::analysis::Device> device;
  if (!deviceName.empty()) {
    for (auto *flag : {&latency, &bandwidth})
      if (flag->getNumOccurrences())
        return fail("--" + flag->ArgStr +
                    " cannot be combined with --device: the device gives "
                    "the links");
    auto loaded = tandem::analysis::loadDevice(deviceName);
    if (!loaded)
      return fail(toString(loaded.takeError()));
    device = std::move(*loaded);
    costs.latency = device->linkLatency;
    costs.bandwidth = device->linkBandwidth;
  }
  auto report = simulate(schedule, costs);
  if (!report)
    return fail(toString(report.takeError()));

  outs() << "schedule " << schedule.name << ": " << schedule.shape.ranks
         << " ranks, " << schedule.shape.chunks << " chunks per rank, "
         << schedule.shape.microbatches << " microbatches\n";
  if (device)
    outs() << "device " << device->name << ": link "
           << format("%.6g", device->linkBandwidth) << " bytes/s, latency "
           << format("%.6g", device->linkLatency) << " s; times in seconds\n";
  if (printActions)
    printSchedule(schedule, outs());
  printReport(schedule, *report, outs());
  if (!svgFile.empty() && !writeFile(svgFile, [&](raw_ostream &os) {
        writeSVG(schedule, *report, os);
      }))
    return 1;
  if (!traceFile.empty() && !writeFile(traceFile, [&](raw_ostream &os) {
        writeTrace(schedule, *report, os);
      }))
    return 1;
  return 0;
}
