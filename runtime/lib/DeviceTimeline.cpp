//===- DeviceTimeline.cpp - a rank's device work timed by events ----------===//

#include "tandem/Runtime/DeviceTimeline.h"

#include <ctime>

using namespace tandem::runtime;

double tandem::runtime::monotonicMicroseconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 +
         static_cast<double>(ts.tv_nsec) / 1e3;
}

void *DeviceTimeline::take(std::string &error) {
  if (used == pool.size()) {
    std::shared_ptr<DeviceEvent> event =
        DeviceEvent::create(device, error, /*timing=*/true);
    if (!event)
      return nullptr;
    pool.push_back(std::move(event));
  }
  return pool[used++]->get();
}

int64_t DeviceTimeline::begin(void *stream, std::string name,
                              std::string category, std::string &error) {
  std::lock_guard<std::mutex> lock(mutex);
  void *event = take(error);
  if (!event || !device.recordEvent(event, stream, error))
    return -1;
  spans.push_back({std::move(name), std::move(category), event, nullptr});
  return static_cast<int64_t>(spans.size()) - 1;
}

bool DeviceTimeline::end(int64_t span, void *stream, std::string &error) {
  std::lock_guard<std::mutex> lock(mutex);
  if (span < 0 || static_cast<size_t>(span) >= spans.size()) {
    error = "no device span " + std::to_string(span);
    return false;
  }
  void *event = take(error);
  if (!event || !device.recordEvent(event, stream, error))
    return false;
  spans[span].end = event;
  return true;
}

bool DeviceTimeline::collect(void *stream, std::vector<DeviceSpan> &out,
                             std::string &error) {
  std::lock_guard<std::mutex> lock(mutex);
  out.clear();
  void *anchor = take(error);
  const double recorded = monotonicMicroseconds();
  if (!anchor || !device.recordEvent(anchor, stream, error))
    return false;
  // The device is idle: the anchor is done as soon as the host asks again.
  // It ran between `recorded` and `now`; the spans are placed as if at
  // `now`, so they may be late by the difference (not early).
  bool done = false;
  for (int k = 0; k < 1000000 && !done; ++k)
    if (!device.eventDone(anchor, done, error))
      return false;
  if (!done) {
    error = "the device did not reach the trace's anchor event";
    return false;
  }
  const double now = monotonicMicroseconds();
  for (const Span &span : spans) {
    if (!span.end) {
      error = "device span '" + span.name + "' was never ended";
      return false;
    }
    double before = 0, duration = 0;
    if (!device.elapsedMicroseconds(span.begin, anchor, before, error) ||
        !device.elapsedMicroseconds(span.begin, span.end, duration, error))
      return false;
    out.push_back(
        {span.name, span.category, now - before, duration, now - recorded});
  }
  spans.clear();
  used = 0;
  return true;
}
