//===- StepTimer.h - where each rank's step time goes -----------*- C++ -*-===//
//
// A Transport decorator that times every wait: the time a rank spends
// inside `wait` or a collective is time it waits for its peers (the
// transfers themselves, in shared memory, are a small part), the time
// between is compute. The measured bubble of a step is its wait time over
// its step time. The compute spans are named by the run actions between the
// transport calls (read off the manifest's action list, which the rank
// walks in order, with the waits where transferWaits puts them); each
// posted group is a "transfer" span from its post until a wait saw it
// complete, on a track of its own, so its overlap with compute shows; every
// span becomes a Chrome/Perfetto trace event.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_TOOLS_TANDEM_RUN_STEPTIMER_H
#define TANDEM_TOOLS_TANDEM_RUN_STEPTIMER_H

#include "tandem/Runtime/DeviceTimeline.h"
#include "tandem/Runtime/Manifest.h"
#include "tandem/Runtime/Transport.h"

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace tandem::run {

struct TraceEvent {
  std::string name, category;
  /// Microseconds since the clock's epoch (CLOCK_MONOTONIC: one clock for
  /// all processes of a machine).
  double start = 0, duration = 0;
  uint64_t step = 0;
  /// A device span's DeviceSpan::uncertainty; negative for a host span.
  double uncertainty = -1;
};

class StepTimer final : public runtime::Transport {
public:
  /// `waits`: per action, where the rank waits for a send or receive
  /// (RankProgram::transferWaitPoints).
  StepTimer(runtime::Transport &inner, const runtime::Manifest &manifest,
            const std::vector<int64_t> &waits);

  /// The inner transport's: it decides where payloads may be.
  const runtime::Device *payloadDevice() const override {
    return inner.payloadDevice();
  }
  void setRankStream(int64_t rank, void *stream,
                     runtime::DeviceTimeline *timeline) override {
    inner.setRankStream(rank, stream, timeline);
  }
  bool post(int64_t rank, std::vector<runtime::TransportOp> &group,
            std::string &error) override;
  bool wait(int64_t rank, const std::vector<runtime::TransportOp *> &ops,
            std::string &error) override;
  bool collective(int64_t rank, runtime::CollectiveOp &op,
                  std::string &error) override;
  bool postedOpsMoveAlone() const override {
    return inner.postedOpsMoveAlone();
  }
  void finish(int64_t rank) override { inner.finish(rank); }
  void abort(const std::string &reason) override {
    if (beforeAbort)
      beforeAbort();
    inner.abort(reason);
  }
  /// Called before the step's transport aborts the job (which may end this
  /// process at once): tandem-run records that the rank failed.
  std::function<void()> beforeAbort;

  void beginStep(uint64_t step);
  void endStep();
  /// Of the last step.
  double stepSeconds() const { return lastStep; }
  double waitSeconds() const { return lastWait; }
  double bubble() const { return lastStep > 0 ? lastWait / lastStep : 0; }

  /// Adds the last step's device spans (RankProgram::deviceSpans), on
  /// tracks of their own.
  void addDeviceSpans(const std::vector<runtime::DeviceSpan> &spans);

  /// The trace's tracks per rank: the host's compute and waits, the host's
  /// view of transfers (post to seen complete), the device's runs and the
  /// device's transfers.
  static constexpr int64_t kTracks = 4;
  static const char *trackName(int64_t track);

  const std::vector<TraceEvent> &events() const { return trace; }
  /// The events as JSON objects (no enclosing brackets), `pid` = rank.
  std::string eventsJson(int64_t rank) const;

private:
  static double now();
  /// Records the compute span from `since` to `until` (gap `gap`).
  void compute(double since, double until);
  /// Ends the transfer spans of groups whose ops have all completed.
  void endTransfers(double at);

  runtime::Transport &inner;
  /// Names of the runs before transport call i (and, last, after the last
  /// call).
  std::vector<std::string> gapNames;
  /// Posted groups not yet seen complete: their span so far and ops.
  struct InFlight {
    TraceEvent span;
    std::vector<const runtime::TransportOp *> ops;
  };
  std::vector<InFlight> inFlight;
  std::vector<TraceEvent> trace;
  uint64_t step = 0;
  size_t gap = 0;
  double stepStart = 0, lastEnd = 0, waited = 0, lastStep = 0, lastWait = 0;
};

} // namespace tandem::run

#endif // TANDEM_TOOLS_TANDEM_RUN_STEPTIMER_H
