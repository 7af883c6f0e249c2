//===- DeviceTimeline.h - a rank's device work timed by events --*- C++ -*-===//
//
// On a GPU the host's clock says when work was issued, not when it ran: a
// step's kernels run after the host has moved on, and a transport's copies
// run on a stream of their own. A timeline marks each span of device work
// with a pair of timing events on the stream that runs it (a run on the
// rank's stream, a transfer on the transport's), and once the step's work
// is done places every span on the host's clock through one anchor event,
// so the trace shows the GPU's own timeline next to the host's spans.
// docs/runtime.md, "Progress, summary and trace".
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_DEVICETIMELINE_H
#define TANDEM_RUNTIME_DEVICETIMELINE_H

#include "tandem/Runtime/Device.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tandem::runtime {

/// Microseconds on CLOCK_MONOTONIC: the clock of every span in a trace,
/// which all processes of a machine share.
double monotonicMicroseconds();

/// A span of device work on the host's clock.
struct DeviceSpan {
  std::string name, category;
  /// Microseconds on CLOCK_MONOTONIC (the host spans' clock).
  double start = 0, duration = 0;
  /// How much later than the truth `start` may be, in microseconds: the
  /// device's clock is placed on the host's by an anchor event that ran
  /// between its record and the host seeing it done; the spans take the
  /// latter time. Spans of one collection share it, so comparing two of
  /// them needs none; comparing ranks' spans does.
  double uncertainty = 0;
};

/// One rank's spans. Spans may be begun from any thread (a transport's copy
/// is issued by whichever rank pairs it): the timeline is guarded.
class DeviceTimeline {
public:
  explicit DeviceTimeline(Device &device) : device(device) {}

  /// Marks the start of a span on `stream`: its number for `end`, or -1
  /// with `error`.
  int64_t begin(void *stream, std::string name, std::string category,
                std::string &error);
  /// Marks the end of span `span` on `stream`.
  bool end(int64_t span, void *stream, std::string &error);
  /// Once the device has finished every span's work (after the step's
  /// synchronization): the spans begun since the last collect, in the order
  /// begun, on the host's clock. The anchor is an event recorded on
  /// `stream` now, when the device is idle: its host time is taken when the
  /// host sees it done. The events are kept for the next step.
  bool collect(void *stream, std::vector<DeviceSpan> &spans,
               std::string &error);

private:
  /// A timing event of the pool, made when the pool runs out (lock held).
  void *take(std::string &error);

  Device &device;
  std::mutex mutex;
  struct Span {
    std::string name, category;
    void *begin = nullptr, *end = nullptr;
  };
  std::vector<Span> spans;
  /// Timing events, reused step after step; `used` of them hold marks.
  std::vector<std::shared_ptr<DeviceEvent>> pool;
  size_t used = 0;
};

} // namespace tandem::runtime

#endif // TANDEM_RUNTIME_DEVICETIMELINE_H
