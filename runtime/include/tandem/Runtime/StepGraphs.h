//===- StepGraphs.h - a rank's step replayed as CUDA graphs -----*- C++ -*-===//
//
// tandem-run --cuda-graphs (docs/runtime.md, "CUDA graphs"). A rank's step
// is cut into segments: maximal runs of consecutive fragment runs with no
// transfer, collective or transfer wait between them. Each segment's
// launches are captured once on the rank's stream and its graph launched
// in later steps instead of the fragments. The transport's posts and waits
// stay between the segments, outside every graph: a capture may not wait
// for work outside it (an event recorded outside the capture), nor record
// an event that work outside it waits for. With no transfers (S = 1) the
// step is one segment.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_STEPGRAPHS_H
#define TANDEM_RUNTIME_STEPGRAPHS_H

#include "tandem/Runtime/FragmentABI.h"
#include "tandem/Runtime/Manifest.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tandem::runtime {

class Device;
class DeviceTimeline;

/// Per action of `actions`: for a run, the index of the last run of its
/// segment; -1 for any other action. `waits` gives per action the action
/// after which the step waits for that transfer (-1 for none), as
/// RankProgram::transferWaitPoints does; a segment ends at a run after
/// which the step waits.
std::vector<int64_t> segmentEnds(const std::vector<ActionInfo> &actions,
                                 const std::vector<int64_t> &waits);

/// The graphs of a rank's segments, keyed by their first action.
class StepGraphs {
public:
  StepGraphs(Device &device, void *stream) : device(device), stream(stream) {}
  ~StepGraphs();
  StepGraphs(const StepGraphs &) = delete;
  StepGraphs &operator=(const StepGraphs &) = delete;

  /// At a step's start: every graph is dropped when `addresses` (what the
  /// launches take that may move between steps) or `ends` (the segments,
  /// as segmentEnds gives them: a graph is known by its first action) differ
  /// from those the graphs were captured with; `capture` says whether this
  /// step captures the segments that have no graph (the first step runs as
  /// usual, so that the GEMMs' plans are chosen outside any capture).
  void startStep(std::vector<const void *> addresses,
                 const std::vector<int64_t> &ends, bool capture);

  enum class Mode {
    /// The runs call their fragments.
    Call,
    /// The runs call their fragments into a capture, launched at the end.
    Capture,
    /// The runs call nothing; their graph is launched at the end.
    Replay
  };
  /// How the segment beginning at action `first` runs this step.
  Mode mode(int64_t first) const;
  /// Before the segment's first run: begins its capture when it captures.
  bool enter(int64_t first, std::string &error);
  /// After its last run: ends its capture, then launches its graph when it
  /// has one, timed on `timeline` (when not null) as one span `name`.
  bool leave(int64_t first, DeviceTimeline *timeline, const std::string &name,
             std::string &error);
  /// A step that fails mid-segment: ends the capture under way, if any,
  /// and drops it.
  void abandon();
  /// The graphs held.
  size_t size() const { return graphs.size(); }

private:
  void clear();
  Device &device;
  void *stream;
  std::map<int64_t, void *> graphs;
  std::vector<const void *> capturedWith;
  std::vector<int64_t> capturedEnds;
  bool captureThisStep = false;
  /// The first action of the segment being captured, or -1.
  int64_t capturing = -1;
};

/// Host code on a device with streams (a CPU or emulated CUDA library on
/// the fake driver) under --cuda-graphs: each run is issued on the rank's
/// stream as a host function, which a capture records like a kernel, so
/// that the step's capture and replay run on the host as they would on a
/// GPU. The call's arguments live here until the run is issued again
/// (replays issue nothing and run the captured call).
class HostCalls {
public:
  bool issue(Device &device, void *stream, int64_t action,
             tandem_fragment_fn fn, const tandem_fragment_context &context,
             std::vector<const void *> args, std::vector<void *> results,
             void *scratch, std::string &error);
  /// After the device has run the step: the first action (in action order)
  /// whose call returned non-zero, and its status; -1 when none did. The
  /// statuses are cleared.
  int64_t takeFailure(int &status);

private:
  struct Call {
    tandem_fragment_fn fn = nullptr;
    tandem_fragment_context context{};
    std::vector<const void *> args;
    std::vector<void *> results;
    void *scratch = nullptr;
    int status = 0;
  };
  static void run(void *call);
  std::map<int64_t, std::unique_ptr<Call>> calls;
};

} // namespace tandem::runtime

#endif // TANDEM_RUNTIME_STEPGRAPHS_H
