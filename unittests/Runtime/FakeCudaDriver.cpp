//===- FakeCudaDriver.cpp - a CUDA driver without a GPU, for tests --------===//
//
// Exports the driver API entry points CudaDriver resolves, backed by host
// memory, so the runtime's dlopen path and its CUDA device run here. What
// it answers is set by the environment, read on every call:
//   TANDEM_FAKE_CUDA_VERSION  cuDriverGetVersion's value (default 13000)
//   TANDEM_FAKE_CUDA_DEVICES  how many GPUs it has (default 1)
//   TANDEM_FAKE_CUDA_INIT     cuInit's status (default 0)
//   TANDEM_FAKE_CUDA_OPAQUE   1: say the host cannot address the memory
// Strict where a real GPU would fault or corrupt silently: a copy's device
// side must lie inside a live allocation of this driver and its host side
// must not, and a call without a current context fails.
//
// Streams are lazy where that exposes a missing wait. Kernels of host code
// run inline when the host calls them, so a blocking stream (flag 0, a
// rank's stream) stands for work that never falls behind the host: what is
// issued on it runs at once. A non-blocking stream (a transport's) queues
// its work, which runs only when something needs it: a wait for an event
// recorded after it from a blocking stream (or the default stream), a
// synchronization of the stream or the context, a query of such an event
// (answered "not ready" once, then done), a free or the stream's
// destruction. The default (legacy) stream's synchronous copies
// wait for the blocking streams only, as on a GPU. So a consumer that does
// not wait for a transport's copy reads the old bytes here, and a producer
// that overwrites a payload before the copy ran sends the new ones.
//
// Graphs: a capturing stream records its copies (the fake's only stream
// work besides events) instead of issuing them, and a launch issues them
// in order on the stream it names. As on a GPU, the legacy stream's calls
// and synchronizations break a capture, and a capture may wait only for
// events it recorded itself; such a record is a dependency inside the
// capture, not a node of the graph (only CU_EVENT_RECORD_EXTERNAL makes
// one), so a launch records nothing, and waiting for or querying an event
// last recorded in a capture fails (CUDA_ERROR_CAPTURED_EVENT).
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace {

constexpr int kSuccess = 0;
constexpr int kInvalidValue = 1;
constexpr int kOutOfMemory = 2;
constexpr int kInvalidContext = 201;
constexpr int kInvalidHandle = 400;
constexpr int kInvalidDevice = 101;
constexpr int kNotReady = 600;
constexpr int kNotSupported = 801;
constexpr int kCaptureUnsupported = 900;
constexpr int kCaptureInvalidated = 901;
constexpr int kCaptureIsolation = 905;
constexpr int kCaptureImplicit = 906;
constexpr int kCapturedEvent = 907;
constexpr unsigned kNonBlocking = 0x1;
constexpr unsigned kDisableTiming = 0x2;

int fromEnvironment(const char *name, int fallback) {
  const char *value = std::getenv(name);
  return value && *value ? std::atoi(value) : fallback;
}

struct Event {
  /// Records issued and run; record k is done once done >= k.
  uint64_t recorded = 0, done = 0;
  /// Created without CU_EVENT_DISABLE_TIMING: `stamp` is when the latest
  /// record ran, in microseconds of CLOCK_MONOTONIC.
  bool timing = false;
  double stamp = 0;
  /// The capturing stream that recorded it last, while that capture lasts.
  const void *capturedBy = nullptr;
  /// Last recorded in a capture (until recorded again outside one).
  bool recordedInCapture = false;
};

double monotonicMicroseconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 +
         static_cast<double>(ts.tv_nsec) / 1e3;
}

/// A queued copy, event record, wait or host function.
struct Work {
  enum Kind { Copy, Record, Wait, Host } kind = Copy;
  uintptr_t dst = 0, src = 0;
  size_t bytes = 0;
  void (*fn)(void *) = nullptr;
  void *data = nullptr;
  std::shared_ptr<Event> event;
  uint64_t record = 0;
};

struct Stream {
  bool blocking = true;
  std::deque<Work> queue;
  /// Between cuStreamBeginCapture and cuStreamEndCapture: the work issued,
  /// recorded instead of run, and whether something broke the capture.
  bool capturing = false, invalidated = false;
  std::vector<Work> captured;
};

/// A captured graph or its instantiation: the work, issued in order on
/// the stream it is launched on.
struct Graph {
  std::vector<Work> work;
};

/// Guards everything below: ranks on threads share the fake GPU.
std::mutex mutex;
std::map<uintptr_t, size_t> allocations;
std::map<void *, std::unique_ptr<Stream>> streams;
std::map<void *, std::shared_ptr<Event>> events;
std::map<void *, std::unique_ptr<Graph>> graphs, execs;
int contextToken = 0;
thread_local void *current = nullptr;

/// The stream or event a handle names, or null (lock held).
Stream *streamOf(void *handle) {
  auto found = streams.find(handle);
  return found == streams.end() ? nullptr : found->second.get();
}

std::shared_ptr<Event> eventOf(void *handle) {
  auto found = events.find(handle);
  return found == events.end() ? nullptr : found->second;
}

/// [pointer, pointer + bytes) inside one live allocation (lock held).
bool onDevice(uintptr_t pointer, size_t bytes) {
  auto next = allocations.upper_bound(pointer);
  if (next == allocations.begin())
    return false;
  auto found = std::prev(next);
  return pointer - found->first <= found->second &&
         bytes <= found->second - (pointer - found->first);
}

/// `pointer` addresses a byte of a live allocation (one past the end does
/// not: host memory may start there).
bool anyDevice(uintptr_t pointer) { return onDevice(pointer, 1); }

bool validCopy(uintptr_t dst, bool dstDevice, uintptr_t src, bool srcDevice,
               size_t bytes) {
  return (dstDevice ? onDevice(dst, bytes) : !anyDevice(dst)) &&
         (srcDevice ? onDevice(src, bytes) : !anyDevice(src));
}

void runUntil(Stream &stream, const Work *last);

/// Runs queued work until record `record` of `event` is done (lock held).
/// The record was issued before anything that waits for it, so this
/// terminates.
void runToRecord(const Event &event, uint64_t record) {
  while (event.done < record) {
    Stream *holder = nullptr;
    const Work *at = nullptr;
    for (auto &[handle, stream] : streams)
      for (const Work &work : stream->queue)
        if (work.kind == Work::Record && work.event.get() == &event &&
            work.record == record) {
          holder = stream.get();
          at = &work;
        }
    if (!holder)
      return; // Nothing left can complete it.
    runUntil(*holder, at);
  }
}

/// Runs `stream`'s queue up to and including `last` (all of it when
/// nullptr), in order (lock held).
void runUntil(Stream &stream, const Work *last) {
  while (!stream.queue.empty()) {
    Work work = std::move(stream.queue.front());
    bool wasLast = &stream.queue.front() == last;
    stream.queue.pop_front();
    switch (work.kind) {
    case Work::Copy:
      std::memmove(reinterpret_cast<void *>(work.dst),
                   reinterpret_cast<const void *>(work.src), work.bytes);
      break;
    case Work::Record:
      if (work.record > work.event->done) {
        work.event->done = work.record;
        work.event->stamp = monotonicMicroseconds();
      }
      break;
    case Work::Wait:
      runToRecord(*work.event, work.record);
      break;
    case Work::Host:
      // As cuLaunchHostFunc's: it may not call the driver (the lock is
      // held), and the stream's later work waits for it.
      work.fn(work.data);
      break;
    }
    if (wasLast)
      return;
  }
}

void runAll() {
  for (auto &[handle, stream] : streams)
    runUntil(*stream, nullptr);
}

/// What the default stream's work waits for first: the blocking streams'.
void runBlocking() {
  for (auto &[handle, stream] : streams)
    if (stream->blocking)
      runUntil(*stream, nullptr);
}

/// Issued to run: a record takes the event's next number, a wait the
/// number of its latest record.
void numberRecord(Work &work) {
  if (work.kind == Work::Record)
    work.record = ++work.event->recorded;
  else if (work.kind == Work::Wait)
    work.record = work.event->recorded;
}

/// What a GPU refuses of work issued outside a capture: a wait for an
/// event last recorded in one. A record outside clears that state.
int outsideCapture(Work &work) {
  if (work.kind == Work::Wait && work.event->recordedInCapture)
    return kCapturedEvent;
  if (work.kind == Work::Record)
    work.event->recordedInCapture = false;
  return kSuccess;
}

/// A capture a call broke: what a GPU answers, and the capture fails.
int breakCapture(int status) {
  for (auto &[handle, stream] : streams)
    if (stream->capturing)
      stream->invalidated = true;
  return status;
}

bool anyCapture() {
  for (auto &[handle, stream] : streams)
    if (stream->capturing)
      return true;
  return false;
}

/// Issues `work` on `stream` (nullptr: the default stream), lock held: a
/// blocking or default stream runs it at once, after the work it waits for;
/// a capturing stream records it. A record's number and a wait's are
/// taken when issued to run.
int issue(void *stream, Work work) {
  if (!stream) {
    // The legacy stream synchronizes with the blocking streams, which a
    // capture refuses.
    if (anyCapture())
      return breakCapture(kCaptureImplicit);
    if (int status = outsideCapture(work))
      return status;
    numberRecord(work);
    runBlocking();
    Stream legacy;
    legacy.queue.push_back(std::move(work));
    runUntil(legacy, nullptr);
    return kSuccess;
  }
  Stream *found = streamOf(stream);
  if (!found)
    return kInvalidHandle;
  Stream &s = *found;
  if (s.capturing) {
    // An event from outside the capture would need a cross-graph
    // dependency, which the fake does not model.
    if (work.kind == Work::Wait && work.event->capturedBy != &s) {
      s.invalidated = true;
      return kCaptureIsolation;
    }
    // A wait for the stream's own record is order it keeps anyway; a
    // record marks the event, the graph gets no node for it.
    if (work.kind == Work::Wait)
      return kSuccess;
    if (work.kind == Work::Record) {
      work.event->capturedBy = &s;
      work.event->recordedInCapture = true;
      return kSuccess;
    }
    s.captured.push_back(std::move(work));
    return kSuccess;
  }
  if (int status = outsideCapture(work))
    return status;
  numberRecord(work);
  s.queue.push_back(std::move(work));
  if (s.blocking)
    runUntil(s, nullptr);
  return kSuccess;
}

/// A synchronous copy on the default stream.
int copy(uintptr_t dst, bool dstDevice, uintptr_t src, bool srcDevice,
         size_t bytes) {
  if (!current)
    return kInvalidContext;
  std::lock_guard<std::mutex> lock(mutex);
  if (!validCopy(dst, dstDevice, src, srcDevice, bytes))
    return kInvalidValue;
  Work work;
  work.dst = dst;
  work.src = src;
  work.bytes = bytes;
  return issue(nullptr, std::move(work));
}

} // namespace

extern "C" {

// Tells CudaDriver that host code may address this driver's memory
// (CudaDriver::fake), unless TANDEM_FAKE_CUDA_OPAQUE=1 has it play a GPU
// whose memory the host cannot reach.
int tandem_fake_cuda_host_addressable() {
  return fromEnvironment("TANDEM_FAKE_CUDA_OPAQUE", 0) ? 0 : 1;
}

// Whether [pointer, pointer + bytes) lies in one live allocation: the fake
// NCCL asks, to refuse payloads that are not GPU memory.
int tandem_fake_cuda_is_device(const void *pointer, size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex);
  return onDevice(reinterpret_cast<uintptr_t>(pointer), bytes) ? 1 : 0;
}

int cuGetErrorName(int status, const char **name) {
  switch (status) {
  case kSuccess:
    *name = "CUDA_SUCCESS";
    return kSuccess;
  case kInvalidValue:
    *name = "CUDA_ERROR_INVALID_VALUE";
    return kSuccess;
  case kOutOfMemory:
    *name = "CUDA_ERROR_OUT_OF_MEMORY";
    return kSuccess;
  case 100:
    *name = "CUDA_ERROR_NO_DEVICE";
    return kSuccess;
  case kInvalidDevice:
    *name = "CUDA_ERROR_INVALID_DEVICE";
    return kSuccess;
  case kInvalidContext:
    *name = "CUDA_ERROR_INVALID_CONTEXT";
    return kSuccess;
  case kInvalidHandle:
    *name = "CUDA_ERROR_INVALID_HANDLE";
    return kSuccess;
  case kNotReady:
    *name = "CUDA_ERROR_NOT_READY";
    return kSuccess;
  case kNotSupported:
    *name = "CUDA_ERROR_NOT_SUPPORTED";
    return kSuccess;
  case kCaptureUnsupported:
    *name = "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED";
    return kSuccess;
  case kCaptureInvalidated:
    *name = "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED";
    return kSuccess;
  case kCaptureIsolation:
    *name = "CUDA_ERROR_STREAM_CAPTURE_ISOLATION";
    return kSuccess;
  case kCaptureImplicit:
    *name = "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT";
    return kSuccess;
  case kCapturedEvent:
    *name = "CUDA_ERROR_CAPTURED_EVENT";
    return kSuccess;
  default:
    *name = nullptr;
    return kInvalidValue;
  }
}

int cuDriverGetVersion(int *version) {
  *version = fromEnvironment("TANDEM_FAKE_CUDA_VERSION", 13000);
  return kSuccess;
}

int cuInit(unsigned) { return fromEnvironment("TANDEM_FAKE_CUDA_INIT", 0); }

int cuDeviceGetCount(int *count) {
  *count = fromEnvironment("TANDEM_FAKE_CUDA_DEVICES", 1);
  return kSuccess;
}

int cuDeviceGet(int *device, int ordinal) {
  if (ordinal < 0 || ordinal >= fromEnvironment("TANDEM_FAKE_CUDA_DEVICES", 1))
    return kInvalidDevice;
  *device = ordinal;
  return kSuccess;
}

int cuDeviceGetName(char *name, int length, int) {
  std::strncpy(name, "Fake GPU", static_cast<size_t>(length));
  return kSuccess;
}

int cuDeviceGetAttribute(int *value, int attribute, int) {
  if (attribute == 75)
    *value = 9;
  else if (attribute == 76)
    *value = 0;
  else
    return kInvalidValue;
  return kSuccess;
}

int cuDeviceTotalMem_v2(size_t *bytes, int) {
  *bytes = size_t(1) << 30;
  return kSuccess;
}

int cuDevicePrimaryCtxRetain(void **context, int) {
  *context = &contextToken;
  return kSuccess;
}

int cuDevicePrimaryCtxRelease_v2(int) { return kSuccess; }

int cuCtxSetCurrent(void *context) {
  current = context;
  return kSuccess;
}

int cuCtxSynchronize() {
  if (!current)
    return kInvalidContext;
  std::lock_guard<std::mutex> lock(mutex);
  if (anyCapture())
    return breakCapture(kCaptureUnsupported);
  runAll();
  return kSuccess;
}

int cuMemAlloc_v2(unsigned long long *pointer, size_t bytes) {
  if (!current)
    return kInvalidContext;
  if (bytes == 0)
    return kInvalidValue;
  // More than the fake GPU holds: what a real one answers.
  if (bytes > (size_t(1) << 30))
    return kOutOfMemory;
  void *memory = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!memory)
    return kOutOfMemory;
  // Garbage, as a GPU's fresh memory may hold: the runtime must zero it.
  std::memset(memory, 0xa5, bytes);
  std::lock_guard<std::mutex> lock(mutex);
  allocations[reinterpret_cast<uintptr_t>(memory)] = bytes;
  *pointer = reinterpret_cast<uintptr_t>(memory);
  return kSuccess;
}

int cuMemFree_v2(unsigned long long pointer) {
  std::lock_guard<std::mutex> lock(mutex);
  auto found = allocations.find(static_cast<uintptr_t>(pointer));
  if (!current || found == allocations.end())
    return kInvalidValue;
  // Queued work may still touch the memory: as cuMemFree, wait for it.
  runAll();
  std::free(reinterpret_cast<void *>(found->first));
  allocations.erase(found);
  return kSuccess;
}

int cuMemcpyHtoD_v2(unsigned long long dst, const void *src, size_t bytes) {
  return copy(dst, true, reinterpret_cast<uintptr_t>(src), false, bytes);
}

int cuMemcpyDtoH_v2(void *dst, unsigned long long src, size_t bytes) {
  return copy(reinterpret_cast<uintptr_t>(dst), false, src, true, bytes);
}

int cuMemcpyDtoD_v2(unsigned long long dst, unsigned long long src,
                    size_t bytes) {
  return copy(dst, true, src, true, bytes);
}

int cuStreamCreate(void **stream, unsigned flags) {
  if (!current)
    return kInvalidContext;
  auto made = std::make_unique<Stream>();
  made->blocking = !(flags & kNonBlocking);
  std::lock_guard<std::mutex> lock(mutex);
  *stream = made.get();
  streams[made.get()] = std::move(made);
  return kSuccess;
}

int cuStreamDestroy_v2(void *stream) {
  std::lock_guard<std::mutex> lock(mutex);
  auto found = streams.find(stream);
  if (found == streams.end())
    return kInvalidHandle;
  // Work issued on the stream still runs.
  runUntil(*found->second, nullptr);
  streams.erase(found);
  return kSuccess;
}

int cuStreamSynchronize(void *stream) {
  if (!current)
    return kInvalidContext;
  std::lock_guard<std::mutex> lock(mutex);
  if (anyCapture())
    return breakCapture(kCaptureUnsupported);
  if (!stream) {
    runBlocking();
    return kSuccess;
  }
  Stream *found = streamOf(stream);
  if (!found)
    return kInvalidHandle;
  runUntil(*found, nullptr);
  return kSuccess;
}

int cuEventCreate(void **event, unsigned flags) {
  if (!current)
    return kInvalidContext;
  auto made = std::make_shared<Event>();
  made->timing = !(flags & kDisableTiming);
  std::lock_guard<std::mutex> lock(mutex);
  *event = made.get();
  events[made.get()] = std::move(made);
  return kSuccess;
}

// Waits issued on the event keep their own reference.
int cuEventDestroy_v2(void *event) {
  std::lock_guard<std::mutex> lock(mutex);
  return events.erase(event) ? kSuccess : kInvalidHandle;
}

} // extern "C"

namespace {

/// A record of `event` or a wait for it, issued on `stream`.
int issueOnEvent(Work::Kind kind, void *event, void *stream) {
  if (!current)
    return kInvalidContext;
  std::lock_guard<std::mutex> lock(mutex);
  Work work;
  work.kind = kind;
  work.event = eventOf(event);
  if (!work.event)
    return kInvalidHandle;
  return issue(stream, std::move(work));
}

} // namespace

extern "C" {

int cuEventRecord(void *event, void *stream) {
  return issueOnEvent(Work::Record, event, stream);
}

int cuEventQuery(void *event) {
  if (!current)
    return kInvalidContext;
  std::lock_guard<std::mutex> lock(mutex);
  std::shared_ptr<Event> found = eventOf(event);
  if (!found)
    return kInvalidHandle;
  Event &e = *found;
  if (e.recordedInCapture)
    return kCapturedEvent;
  if (e.done >= e.recorded)
    return kSuccess;
  runToRecord(e, e.recorded);
  return kNotReady;
}

// As the driver: both events timed, recorded and done.
int cuEventElapsedTime_v2(float *milliseconds, void *start, void *end) {
  if (!current)
    return kInvalidContext;
  std::lock_guard<std::mutex> lock(mutex);
  std::shared_ptr<Event> first = eventOf(start), last = eventOf(end);
  if (!first || !last || !first->timing || !last->timing)
    return kInvalidHandle;
  const Event &a = *first, &b = *last;
  if (!a.recorded || !b.recorded)
    return kInvalidValue;
  if (a.done < a.recorded || b.done < b.recorded)
    return kNotReady;
  *milliseconds = static_cast<float>((b.stamp - a.stamp) / 1e3);
  return kSuccess;
}

int cuStreamWaitEvent(void *stream, void *event, unsigned) {
  return issueOnEvent(Work::Wait, event, stream);
}

int cuMemcpyDtoDAsync_v2(unsigned long long dst, unsigned long long src,
                         size_t bytes, void *stream) {
  if (!current)
    return kInvalidContext;
  std::lock_guard<std::mutex> lock(mutex);
  if (!validCopy(dst, true, src, true, bytes))
    return kInvalidValue;
  Work work;
  work.dst = dst;
  work.src = src;
  work.bytes = bytes;
  return issue(stream, std::move(work));
}

// Captures on any number of streams at once, as thread-local mode allows
// ranks on threads; the fake keeps no per-thread state, so any thread's
// legacy-stream call, cuCtxSynchronize, cuStreamSynchronize or cuMemAlloc
// breaks every capture under way (stricter than thread-local mode, which
// refuses only the capturing thread's; a legacy-stream call joins the
// blocking streams, capturing ones too, on a GPU as well).
int cuStreamBeginCapture_v2(void *stream, int) {
  if (!current)
    return kInvalidContext;
  std::lock_guard<std::mutex> lock(mutex);
  Stream *found = streamOf(stream);
  if (!found)
    return stream ? kInvalidHandle : kCaptureUnsupported;
  if (found->capturing)
    return kNotSupported;
  found->capturing = true;
  found->invalidated = false;
  found->captured.clear();
  return kSuccess;
}

int cuStreamEndCapture(void *stream, void **graph) {
  if (!current)
    return kInvalidContext;
  std::lock_guard<std::mutex> lock(mutex);
  Stream *found = streamOf(stream);
  if (!found || !found->capturing)
    return kInvalidValue;
  Stream &s = *found;
  s.capturing = false;
  for (auto &[handle, event] : events)
    if (event->capturedBy == &s)
      event->capturedBy = nullptr;
  *graph = nullptr;
  if (s.invalidated)
    return kCaptureInvalidated;
  auto made = std::make_unique<Graph>();
  made->work = std::move(s.captured);
  *graph = made.get();
  graphs[made.get()] = std::move(made);
  return kSuccess;
}

int cuGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long) {
  if (!current)
    return kInvalidContext;
  std::lock_guard<std::mutex> lock(mutex);
  auto found = graphs.find(graph);
  if (found == graphs.end())
    return kInvalidValue;
  auto made = std::make_unique<Graph>(*found->second);
  *exec = made.get();
  execs[made.get()] = std::move(made);
  return kSuccess;
}

int cuGraphLaunch(void *exec, void *stream) {
  if (!current)
    return kInvalidContext;
  std::lock_guard<std::mutex> lock(mutex);
  auto found = execs.find(exec);
  if (found == execs.end())
    return kInvalidValue;
  for (const Work &work : found->second->work)
    if (int status = issue(stream, work))
      return status;
  return kSuccess;
}

int cuLaunchHostFunc(void *stream, void (*fn)(void *), void *data) {
  if (!current)
    return kInvalidContext;
  if (!fn)
    return kInvalidValue;
  std::lock_guard<std::mutex> lock(mutex);
  Work work;
  work.kind = Work::Host;
  work.fn = fn;
  work.data = data;
  return issue(stream, std::move(work));
}

int cuGraphExecDestroy(void *exec) {
  std::lock_guard<std::mutex> lock(mutex);
  return execs.erase(exec) ? kSuccess : kInvalidValue;
}

int cuGraphDestroy(void *graph) {
  std::lock_guard<std::mutex> lock(mutex);
  return graphs.erase(graph) ? kSuccess : kInvalidValue;
}

// The fake GPU's 1 GiB less its allocations (rounded as allocated) and a
// context's worth the driver keeps (TANDEM_FAKE_CUDA_CONTEXT_BYTES,
// default 0), as a real driver counts them.
int cuMemGetInfo_v2(size_t *free, size_t *total) {
  if (!current)
    return kInvalidContext;
  size_t used =
      static_cast<size_t>(fromEnvironment("TANDEM_FAKE_CUDA_CONTEXT_BYTES", 0));
  std::lock_guard<std::mutex> lock(mutex);
  for (const auto &[pointer, bytes] : allocations)
    used += (bytes + 255) / 256 * 256;
  *total = size_t(1) << 30;
  *free = used < *total ? *total - used : 0;
  return kSuccess;
}

int cuMemsetD8_v2(unsigned long long dst, unsigned char value, size_t bytes) {
  if (!current)
    return kInvalidContext;
  std::lock_guard<std::mutex> lock(mutex);
  if (!onDevice(dst, bytes))
    return kInvalidValue;
  if (anyCapture())
    return breakCapture(kCaptureImplicit);
  runBlocking();
  std::memset(reinterpret_cast<void *>(dst), value, bytes);
  return kSuccess;
}

} // extern "C"
