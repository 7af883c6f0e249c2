//===- Device.h - the memory and copies a rank runs on ----------*- C++ -*-===//
//
// The device layer beneath the executor: where a rank's arena, parameter
// block and step buffers live, and how bytes move between them and the
// host. Two implementations: the host (plain memory; CPU ranks and emulated
// CUDA ranks) and a CUDA GPU through the driver API (CudaDriver.h), so the
// action walk above it stays target-neutral. docs/runtime.md, "Devices".
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_DEVICE_H
#define TANDEM_RUNTIME_DEVICE_H

#include "tandem/Runtime/FragmentABI.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace tandem::runtime {

class CudaDriver;

/// What a rank's fragment calls need from its device: the context every
/// entry point takes (FragmentABI.h) and what it points to, held for the
/// rank's lifetime. On the host, and for host code on any device, the
/// context points to nothing.
class FragmentResources {
public:
  FragmentResources() { ctx.abi_version = TANDEM_FRAGMENT_ABI_VERSION; }
  FragmentResources(const FragmentResources &) = delete;
  FragmentResources &operator=(const FragmentResources &) = delete;
  virtual ~FragmentResources();
  const tandem_fragment_context &context() const { return ctx; }

protected:
  /// Every field zero or null but the ABI version (the constructor's).
  tandem_fragment_context ctx = {};
};

enum class DeviceKind { Host, Cuda };

/// The largest alignment an allocation may ask for: the CUDA target's 256,
/// what cuMemAlloc guarantees.
constexpr uint64_t kMaxDeviceAlignment = 256;

class Device {
public:
  virtual ~Device();
  virtual DeviceKind kind() const = 0;
  /// Whether host code may read and write this device's memory directly:
  /// the host does, a GPU does not (the fake driver of the tests does, so
  /// host-compiled fragments run on it).
  virtual bool hostAddressable() const = 0;
  /// "the host", or "GPU 0 (NVIDIA H200, compute capability 9.0, 139.8
  /// GiB)".
  virtual std::string describe() const = 0;

  /// `bytes` of zeroed memory aligned to `alignment` (a power of two, at
  /// most kMaxDeviceAlignment; the host aligns to at least 64), 0 bytes
  /// giving a unique non-null pointer; nullptr with `error` when the device
  /// cannot hold them. An address on a GPU is not readable by the host:
  /// move bytes with the copies below.
  void *allocate(uint64_t bytes, uint64_t alignment, std::string &error);
  /// Frees what allocate returned (nullptr is ignored).
  void release(void *pointer);

  /// Synchronous copies: the bytes are in place when the call returns.
  virtual bool copyToDevice(void *dst, const void *src, uint64_t bytes,
                            std::string &error) = 0;
  virtual bool copyToHost(void *dst, const void *src, uint64_t bytes,
                          std::string &error) = 0;
  virtual bool copyOnDevice(void *dst, const void *src, uint64_t bytes,
                            std::string &error) = 0;
  virtual bool zero(void *dst, uint64_t bytes, std::string &error) = 0;
  /// Waits for everything issued on the device so far.
  virtual bool synchronize(std::string &error) = 0;
  /// Makes the device current on the calling thread, for libraries that
  /// find their device that way (NCCL). Nothing to do on the host.
  virtual bool makeCurrent(std::string &error) { return true; }

  /// Streams and events (docs/runtime.md, "Streams and events"): work
  /// issued on a stream runs in issue order; an event marks a point in a
  /// stream, and another stream's later work may wait for it without the
  /// host waiting. The handles are the driver's; a stream of nullptr is the
  /// device's default stream. On the host every operation is done when
  /// issued and every handle is nullptr.
  ///
  /// A stream of its own for work that overlaps the ranks' (transfers):
  /// non-blocking, so neither it nor the default stream waits for the other.
  virtual bool createStream(void *&stream, std::string &error) {
    stream = nullptr;
    return true;
  }
  /// A stream for a rank's own work, as a GPU library's context has:
  /// blocking, so the synchronous copies on the default stream run after
  /// its work.
  virtual bool createRankStream(void *&stream, std::string &error) {
    stream = nullptr;
    return true;
  }
  /// Destroys a stream; work issued on it still runs.
  virtual void destroyStream(void *stream) {}
  /// An event that only orders work, or with `timing` one whose records
  /// are also timed (elapsedMicroseconds).
  virtual bool createEvent(void *&event, bool timing, std::string &error) {
    event = nullptr;
    return true;
  }
  /// Destroys an event; waits already issued on it still hold.
  virtual void destroyEvent(void *event) {}
  /// Marks `stream`'s work issued so far.
  virtual bool recordEvent(void *event, void *stream, std::string &error) {
    return true;
  }
  /// `stream`'s work issued from now on waits for the work `event` marks
  /// (its latest record); the host does not wait.
  virtual bool waitForEvent(void *stream, void *event, std::string &error) {
    return true;
  }
  /// Without waiting: whether the work `event` marks has finished (an event
  /// never recorded has).
  virtual bool eventDone(void *event, bool &done, std::string &error) {
    done = true;
    return true;
  }
  /// The device time between two done records of timing events (start
  /// before end). The host times no events.
  virtual bool elapsedMicroseconds(void *start, void *end, double &us,
                                   std::string &error) {
    error = describe() + " times no events";
    return false;
  }
  /// CUDA graphs: from beginCapture on, the work issued on `stream` is
  /// recorded instead of run, until endCapture makes it `graph`, a unit
  /// that launchGraph runs on a stream, as often as asked, with the same
  /// arguments (pointers included). The host captures nothing.
  virtual bool beginCapture(void *stream, std::string &error) {
    error = describe() + " captures no graphs";
    return false;
  }
  /// Ends the capture; `graph` is null with `error` when it failed (the
  /// stream is usable again either way).
  virtual bool endCapture(void *stream, void *&graph, std::string &error) {
    graph = nullptr;
    error = describe() + " captures no graphs";
    return false;
  }
  virtual bool launchGraph(void *graph, void *stream, std::string &error) {
    error = describe() + " captures no graphs";
    return false;
  }
  virtual void destroyGraph(void *graph) {}
  /// Runs `fn(data)` on the host once `stream`'s work issued before has
  /// run, and before its work issued after (cuLaunchHostFunc); a capture
  /// records it as a node that every launch of the graph runs. `fn` must
  /// not call the device. The host runs it at once.
  virtual bool launchHostFunction(void *stream, void (*fn)(void *), void *data,
                                  std::string &error) {
    fn(data);
    return true;
  }
  /// A copy between two of the device's buffers issued on `stream`: in
  /// place once the stream's work up to here has run. The host's is done
  /// when issued.
  virtual bool copyOnDeviceAsync(void *dst, const void *src, uint64_t bytes,
                                 void *stream, std::string &error) {
    return copyOnDevice(dst, src, bytes, error);
  }

  /// A rank's fragment context: for code compiled for this device (a GPU
  /// library on a GPU: its own stream, cuBLASLt handle, workspace and plan
  /// cache), or empty for host code (`deviceCode` false). nullptr with
  /// `error` when the device cannot provide it.
  virtual std::unique_ptr<FragmentResources>
  fragmentResources(bool deviceCode, std::string &error);

  /// The bytes this device's allocations hold now, and the most held at
  /// once (as requested, before any rounding by the device).
  uint64_t liveBytes() const { return live; }
  uint64_t peakBytes() const { return peak; }

  /// The device's memory in use as its driver counts it: every allocation
  /// on it, with the driver's, the libraries' (cuBLASLt, NCCL) and other
  /// processes' (a GPU's total less its free bytes); nullopt where the
  /// device has no such count (the host) or the driver does not answer.
  virtual std::optional<uint64_t> driverUsedBytes() { return std::nullopt; }
  /// Samples driverUsedBytes (after a step: allocations happen outside
  /// steps, so the most seen after one is the peak of the training) and
  /// returns the most seen so far by any rank on this device, or nullopt.
  std::optional<uint64_t> sampleDriverPeak();

protected:
  Device() = default;
  virtual void *allocateBytes(uint64_t bytes, uint64_t alignment,
                              std::string &error) = 0;
  /// Frees what allocateBytes returned for `bytes` at `alignment`.
  virtual void releaseBytes(void *pointer, uint64_t bytes,
                            uint64_t alignment) = 0;

private:
  /// Size and alignment by pointer, for the counts and the release
  /// (allocations are few: an arena, a parameter block, step inputs).
  std::map<void *, std::pair<uint64_t, uint64_t>> sizes;
  /// Ranks on threads share a device: the counts are guarded.
  std::mutex mutex;
  uint64_t live = 0, peak = 0;
  std::optional<uint64_t> driverPeak;
};

/// An event of a device, destroyed with the last holder (a transport's
/// pending ops share one).
class DeviceEvent {
public:
  /// A fresh event on `device` (which must outlive it), timed with
  /// `timing`; nullptr with `error`.
  static std::shared_ptr<DeviceEvent> create(Device &device, std::string &error,
                                             bool timing = false);
  DeviceEvent(const DeviceEvent &) = delete;
  DeviceEvent &operator=(const DeviceEvent &) = delete;
  ~DeviceEvent() { device.destroyEvent(handle); }
  void *get() const { return handle; }

private:
  DeviceEvent(Device &device, void *handle) : device(device), handle(handle) {}
  Device &device;
  void *handle;
};

/// One allocation of a device, released when destroyed or replaced.
class DeviceAllocation {
public:
  DeviceAllocation() = default;
  /// `bytes` on `device` (which must outlive the allocation) aligned to
  /// `alignment`; empty, with `error` set, when the device cannot hold them.
  DeviceAllocation(Device &device, uint64_t bytes, uint64_t alignment,
                   std::string &error)
      : device(&device), pointer(device.allocate(bytes, alignment, error)),
        bytes(pointer ? bytes : 0) {}
  DeviceAllocation(DeviceAllocation &&other) noexcept {
    *this = std::move(other);
  }
  DeviceAllocation &operator=(DeviceAllocation &&other) noexcept {
    if (this != &other) {
      reset();
      device = other.device;
      pointer = other.pointer;
      bytes = other.bytes;
      other.pointer = nullptr;
      other.bytes = 0;
    }
    return *this;
  }
  DeviceAllocation(const DeviceAllocation &) = delete;
  DeviceAllocation &operator=(const DeviceAllocation &) = delete;
  ~DeviceAllocation() { reset(); }

  void *data() const { return pointer; }
  uint64_t size() const { return bytes; }
  explicit operator bool() const { return pointer != nullptr; }
  void reset() {
    if (pointer)
      device->release(pointer);
    pointer = nullptr;
    bytes = 0;
  }

private:
  Device *device = nullptr;
  void *pointer = nullptr;
  uint64_t bytes = 0;
};

/// The host memory the runtime holds (its Buffers and the host device's
/// allocations, rounded up as allocated): now, and the most held at once
/// since the last resetBufferPeak(). The runtime's own count, independent
/// of any memory plan; all ranks of the process together.
struct BufferBytes {
  uint64_t live = 0, peak = 0;
};
BufferBytes bufferBytes();
/// Lowers the peak to the bytes live now.
void resetBufferPeak();
/// Counts `bytes` of host memory taken / given back.
void countHostAllocation(uint64_t bytes);
void countHostRelease(uint64_t bytes);

/// The host: memory from the C++ heap, copies with memcpy.
std::unique_ptr<Device> makeHostDevice();

/// GPU `ordinal` through `driver` (its primary context, made current on the
/// calling thread by every call); nullptr with `error` naming the GPU.
std::unique_ptr<Device> openCudaDevice(const CudaDriver &driver,
                                       int64_t ordinal, std::string &error);

/// The device a tool's --device names: "host", or "cuda[:N]" (GPU N,
/// default 0, through the driver); nullptr with `error` (a bad name or
/// number, or "--device NAME: " and why the GPU did not open).
std::unique_ptr<Device> openDevice(const std::string &name, std::string &error);

} // namespace tandem::runtime

#endif // TANDEM_RUNTIME_DEVICE_H
