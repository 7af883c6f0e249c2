//===- StepTimer.h - where each rank's step time goes ------------*- C++
//-*-===//
//
// A Transport decorator that times every send/recv group: the time a rank
// spends inside `exchange` is time it waits for its peers (the transfers
// themselves, in shared memory, are a small part), the time between groups
// is compute. The measured bubble of a step is its wait time over its step
// time. The compute spans are named by the run actions between the groups
// (read off the manifest's action list, which the rank walks in order), and
// every span becomes a Chrome/Perfetto trace event.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_TOOLS_TANDEM_RUN_STEPTIMER_H
#define TANDEM_TOOLS_TANDEM_RUN_STEPTIMER_H

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
};

class StepTimer final : public runtime::Transport {
public:
  StepTimer(runtime::Transport &inner, const runtime::Manifest &manifest);

  /// The inner transport's: it decides where payloads may be.
  const runtime::Device *payloadDevice() const override {
    return inner.payloadDevice();
  }
  bool exchange(int64_t rank, std::vector<runtime::TransportOp> &group,
                std::string &error) override;
  bool collective(int64_t rank, runtime::CollectiveOp &op,
                  std::string &error) override;
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

  const std::vector<TraceEvent> &events() const { return trace; }
  /// The events as JSON objects (no enclosing brackets), `pid` = rank.
  std::string eventsJson(int64_t rank) const;

private:
  static double now();
  /// Records the compute span from `since` to `until` (gap `gap`).
  void compute(double since, double until);

  runtime::Transport &inner;
  /// Names of the runs before group i (and, last, after the last group).
  std::vector<std::string> gapNames;
  std::vector<TraceEvent> trace;
  uint64_t step = 0;
  size_t gap = 0;
  double stepStart = 0, lastEnd = 0, wait = 0, lastStep = 0, lastWait = 0;
};

} // namespace tandem::run

#endif // TANDEM_TOOLS_TANDEM_RUN_STEPTIMER_H
