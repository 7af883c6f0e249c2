//===- CudaDriver.h - the CUDA driver, loaded at run time -------*- C++ -*-===//
//
// The runtime reaches the GPU through the CUDA driver API, opened with
// dlopen by its versioned name (libcuda.so.1) the way IREE's CUDA driver
// does, never linked: the runtime builds, links and passes its tests on
// machines without a driver or a GPU, and there says why it cannot run a
// GPU rank ("no CUDA driver", "no GPU", "CUDA driver 12.4 is too old").
// The declarations below are the driver's C ABI, written out here so that
// the runtime needs no CUDA headers either. docs/runtime.md, "Devices".
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_CUDADRIVER_H
#define TANDEM_RUNTIME_CUDADRIVER_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace tandem::runtime {

/// The oldest driver that runs what tandemc's CUDA target builds: the
/// libraries are compiled with the CUDA 13 toolkit, and a driver runs code
/// of its own major version or older (cuDriverGetVersion's encoding,
/// 1000 * major + 10 * minor).
constexpr int kMinimumCudaDriverVersion = 13000;

/// One GPU as the driver describes it.
struct CudaDeviceInfo {
  int ordinal = 0;
  std::string name;
  /// Compute capability (9.0 on an H100 or H200).
  int major = 0, minor = 0;
  uint64_t totalBytes = 0;
};

/// The driver's entry points the runtime calls, resolved from the loaded
/// library. Every call returns the driver's status (0 is success).
struct CudaDriverApi {
  using Result = int;
  using Device = int;
  using Context = void *;
  using Pointer = unsigned long long;

  Result (*init)(unsigned flags);
  Result (*driverGetVersion)(int *version);
  Result (*deviceGetCount)(int *count);
  Result (*deviceGet)(Device *device, int ordinal);
  Result (*deviceGetName)(char *name, int length, Device device);
  Result (*deviceGetAttribute)(int *value, int attribute, Device device);
  Result (*deviceTotalMem)(size_t *bytes, Device device);
  Result (*primaryCtxRetain)(Context *context, Device device);
  Result (*primaryCtxRelease)(Device device);
  Result (*ctxSetCurrent)(Context context);
  Result (*ctxSynchronize)();
  Result (*memAlloc)(Pointer *pointer, size_t bytes);
  Result (*memFree)(Pointer pointer);
  Result (*memcpyHtoD)(Pointer dst, const void *src, size_t bytes);
  Result (*memcpyDtoH)(void *dst, Pointer src, size_t bytes);
  Result (*memcpyDtoD)(Pointer dst, Pointer src, size_t bytes);
  Result (*memsetD8)(Pointer dst, unsigned char value, size_t bytes);
  Result (*getErrorName)(Result status, const char **name);
  Result (*streamCreate)(void **stream, unsigned flags);
  Result (*streamDestroy)(void *stream);
  Result (*streamSynchronize)(void *stream);
  /// The current context's device's free and total bytes.
  Result (*memGetInfo)(size_t *free, size_t *total);
  /// Ordering work across streams without the host: an event marks a point
  /// in a stream (cuEventRecord), another stream's later work waits for it
  /// (cuStreamWaitEvent), and the host asks whether it has passed
  /// (cuEventQuery: kCudaErrorNotReady while not).
  Result (*eventCreate)(void **event, unsigned flags);
  Result (*eventDestroy)(void *event);
  Result (*eventRecord)(void *event, void *stream);
  Result (*eventQuery)(void *event);
  Result (*streamWaitEvent)(void *stream, void *event, unsigned flags);
  /// Milliseconds between two done records of timing events.
  Result (*eventElapsedTime)(float *milliseconds, void *start, void *end);
  /// CUDA graphs: a stream's work captured instead of run, instantiated,
  /// and launched as one unit.
  Result (*streamBeginCapture)(void *stream, int mode);
  Result (*streamEndCapture)(void *stream, void **graph);
  Result (*graphInstantiate)(void **exec, void *graph,
                             unsigned long long flags);
  Result (*graphLaunch)(void *exec, void *stream);
  Result (*graphExecDestroy)(void *exec);
  Result (*graphDestroy)(void *graph);
  Result (*memcpyDtoDAsync)(Pointer dst, Pointer src, size_t bytes,
                            void *stream);
  /// A host function run in stream order (cuLaunchHostFunc): a capture
  /// makes it a host node of the graph.
  Result (*launchHostFunc)(void *stream, void (*fn)(void *), void *data);
};

/// cuStreamCreate's flag for a stream whose work does not wait for the
/// legacy default stream's, nor the legacy stream's for it
/// (CU_STREAM_NON_BLOCKING).
constexpr unsigned kCudaStreamNonBlocking = 0x1;
/// cuEventCreate's flag for an event that only orders work and records no
/// time, the cheaper kind (CU_EVENT_DISABLE_TIMING).
constexpr unsigned kCudaEventDisableTiming = 0x2;
/// cuStreamBeginCapture's mode that refuses, on the capturing thread only,
/// calls that could not be captured (CU_STREAM_CAPTURE_MODE_THREAD_LOCAL).
constexpr int kCudaCaptureThreadLocal = 1;

/// cuEventQuery's answer while the work it marks still runs
/// (CUDA_ERROR_NOT_READY).
constexpr int kCudaErrorNotReady = 600;

/// The loaded driver library: opened once per process and kept open (the
/// driver does not support being unloaded while contexts exist).
class CudaDriver {
public:
  /// Opens the driver: TANDEM_CUDA_DRIVER when set (a path, for a driver
  /// outside the loader's search path, and for tests), else libcuda.so.1;
  /// resolves every entry point, initializes it and checks its version
  /// against kMinimumCudaDriverVersion. nullptr with `error` naming the
  /// library and what failed.
  /// The first success is kept for the process.
  static const CudaDriver *open(std::string &error);
  /// Loads the driver from `library` (a name for the loader's search, or a
  /// path) without keeping it: open's work, for tests of its errors.
  static std::unique_ptr<CudaDriver> load(const std::string &library,
                                          std::string &error);

  const CudaDriverApi &api() const { return calls; }
  /// cuDriverGetVersion's value, and as "13.0".
  int version() const { return driverVersion; }
  static std::string versionName(int version);
  /// A stand-in that keeps device memory in host memory (the tests' fake
  /// driver, whose tandem_fake_cuda_host_addressable() says so): host code
  /// may address its memory.
  bool fake() const { return isFake; }
  /// The library the driver was loaded from.
  const std::string &library() const { return path; }

  /// The number of GPUs the driver sees.
  int deviceCount() const { return count; }
  /// Describes GPU `ordinal`; an ordinal out of range is an error naming
  /// how many there are.
  bool describe(int64_t ordinal, CudaDeviceInfo &info,
                std::string &error) const;

  /// "what: CUDA_ERROR_NAME (status)" for a failed call.
  std::string failure(const char *what, CudaDriverApi::Result status) const;

private:
  CudaDriver() = default;
  CudaDriverApi calls = {};
  std::string path;
  int driverVersion = 0;
  int count = 0;
  bool isFake = false;
};

} // namespace tandem::runtime

#endif // TANDEM_RUNTIME_CUDADRIVER_H
