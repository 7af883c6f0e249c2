//===- CudaDevice.cpp - a GPU through the CUDA driver API -----------------===//

#include "tandem/Runtime/CudaDriver.h"
#include "tandem/Runtime/CudaLibraries.h"
#include "tandem/Runtime/Device.h"
#include "tandem/Runtime/OptionValues.h"

#include <algorithm>
#include <cstdio>
#include <shared_mutex>
#include <vector>

using namespace tandem::runtime;

namespace {

using Pointer = CudaDriverApi::Pointer;

Pointer address(const void *pointer) {
  return static_cast<Pointer>(reinterpret_cast<uintptr_t>(pointer));
}

class CudaDevice final : public Device {
public:
  CudaDevice(const CudaDriver &driver, CudaDeviceInfo info,
             CudaDriverApi::Device device, CudaDriverApi::Context context)
      : driver(driver), info(std::move(info)), device(device),
        context(context) {}
  ~CudaDevice() override { driver.api().primaryCtxRelease(device); }

  DeviceKind kind() const override { return DeviceKind::Cuda; }
  bool hostAddressable() const override { return driver.fake(); }
  std::string describe() const override {
    char gib[32];
    std::snprintf(gib, sizeof(gib), "%.1f",
                  static_cast<double>(info.totalBytes) / (1ull << 30));
    return "GPU " + std::to_string(info.ordinal) + " (" + info.name +
           ", compute capability " + std::to_string(info.major) + "." +
           std::to_string(info.minor) + ", " + gib + " GiB)";
  }

  bool copyToDevice(void *dst, const void *src, uint64_t bytes,
                    std::string &error) override {
    return !bytes ||
           synchronous(
               "cuMemcpyHtoD",
               [&] {
                 return driver.api().memcpyHtoD(address(dst), src, bytes);
               },
               error);
  }
  bool copyToHost(void *dst, const void *src, uint64_t bytes,
                  std::string &error) override {
    return !bytes ||
           synchronous(
               "cuMemcpyDtoH",
               [&] {
                 return driver.api().memcpyDtoH(dst, address(src), bytes);
               },
               error);
  }
  bool copyOnDevice(void *dst, const void *src, uint64_t bytes,
                    std::string &error) override {
    return !bytes || synchronous(
                         "cuMemcpyDtoD",
                         [&] {
                           return driver.api().memcpyDtoD(address(dst),
                                                          address(src), bytes);
                         },
                         error);
  }
  bool zero(void *dst, uint64_t bytes, std::string &error) override {
    return !bytes ||
           synchronous(
               "cuMemsetD8",
               [&] { return driver.api().memsetD8(address(dst), 0, bytes); },
               error);
  }
  bool synchronize(std::string &error) override {
    return synchronous(
        "cuCtxSynchronize", [&] { return driver.api().ctxSynchronize(); },
        error);
  }

  bool createStream(void *&stream, std::string &error) override {
    stream = nullptr;
    return check(
        "cuStreamCreate",
        [&] {
          return driver.api().streamCreate(&stream, kCudaStreamNonBlocking);
        },
        error);
  }
  bool createRankStream(void *&stream, std::string &error) override {
    stream = nullptr;
    return check(
        "cuStreamCreate", [&] { return driver.api().streamCreate(&stream, 0); },
        error);
  }
  void destroyStream(void *stream) override {
    if (stream && driver.api().ctxSetCurrent(context) == 0)
      driver.api().streamDestroy(stream);
  }
  bool createEvent(void *&event, bool timing, std::string &error) override {
    event = nullptr;
    return check(
        "cuEventCreate",
        [&] {
          return driver.api().eventCreate(
              &event, timing ? 0u : kCudaEventDisableTiming);
        },
        error);
  }
  bool elapsedMicroseconds(void *start, void *end, double &us,
                           std::string &error) override {
    float ms = 0;
    bool ok = check(
        "cuEventElapsedTime",
        [&] { return driver.api().eventElapsedTime(&ms, start, end); }, error);
    us = ok ? static_cast<double>(ms) * 1e3 : 0;
    return ok;
  }
  void destroyEvent(void *event) override {
    if (event && driver.api().ctxSetCurrent(context) == 0)
      driver.api().eventDestroy(event);
  }
  bool recordEvent(void *event, void *stream, std::string &error) override {
    return check(
        "cuEventRecord",
        [&] { return driver.api().eventRecord(event, stream); }, error);
  }
  bool waitForEvent(void *stream, void *event, std::string &error) override {
    return check(
        "cuStreamWaitEvent",
        [&] { return driver.api().streamWaitEvent(stream, event, 0); }, error);
  }
  bool eventDone(void *event, bool &done, std::string &error) override {
    int answer = 0;
    bool ok = check(
        "cuEventQuery",
        [&] {
          answer = driver.api().eventQuery(event);
          return answer == kCudaErrorNotReady ? 0 : answer;
        },
        error);
    done = ok && answer == 0;
    return ok;
  }
  bool copyOnDeviceAsync(void *dst, const void *src, uint64_t bytes,
                         void *stream, std::string &error) override {
    return !bytes || check(
                         "cuMemcpyDtoDAsync",
                         [&] {
                           return driver.api().memcpyDtoDAsync(
                               address(dst), address(src), bytes, stream);
                         },
                         error);
  }
  bool beginCapture(void *stream, std::string &error) override {
    captureExclusion.lock_shared();
    if (!check(
            "cuStreamBeginCapture",
            [&] {
              return driver.api().streamBeginCapture(stream,
                                                     kCudaCaptureThreadLocal);
            },
            error)) {
      captureExclusion.unlock_shared();
      return false;
    }
    capturingHere.push_back(this);
    return true;
  }
  bool endCapture(void *stream, void *&graph, std::string &error) override {
    graph = nullptr;
    void *captured = nullptr;
    bool ended = check(
        "cuStreamEndCapture",
        [&] { return driver.api().streamEndCapture(stream, &captured); },
        error);
    // Only a capture this thread began holds the lock here.
    auto mine = std::find(capturingHere.begin(), capturingHere.end(), this);
    if (mine != capturingHere.end()) {
      capturingHere.erase(mine);
      captureExclusion.unlock_shared();
    }
    if (!ended)
      return false;
    bool ok = check(
        "cuGraphInstantiate",
        [&] { return driver.api().graphInstantiate(&graph, captured, 0); },
        error);
    driver.api().graphDestroy(captured);
    if (!ok)
      graph = nullptr;
    return ok;
  }
  bool launchGraph(void *graph, void *stream, std::string &error) override {
    return check(
        "cuGraphLaunch",
        [&] { return driver.api().graphLaunch(graph, stream); }, error);
  }
  void destroyGraph(void *graph) override {
    if (graph && driver.api().ctxSetCurrent(context) == 0)
      driver.api().graphExecDestroy(graph);
  }
  bool launchHostFunction(void *stream, void (*fn)(void *), void *data,
                          std::string &error) override {
    return check(
        "cuLaunchHostFunc",
        [&] { return driver.api().launchHostFunc(stream, fn, data); }, error);
  }
  bool makeCurrent(std::string &error) override {
    return check("cuCtxSetCurrent", [] { return 0; }, error);
  }
  std::optional<uint64_t> driverUsedBytes() override {
    size_t free = 0, total = 0;
    std::string error;
    if (!check(
            "cuMemGetInfo",
            [&] { return driver.api().memGetInfo(&free, &total); }, error) ||
        free > total)
      return std::nullopt;
    return total - free;
  }

  std::unique_ptr<FragmentResources>
  fragmentResources(bool deviceCode, std::string &error) override;

protected:
  void *allocateBytes(uint64_t bytes, uint64_t, std::string &error) override {
    // cuMemAlloc's pointers are aligned to 256 bytes, the most allocate()
    // lets anyone ask for.
    // cuMemAlloc refuses 0 bytes; one byte keeps the pointer unique.
    Pointer pointer = 0;
    if (!synchronous(
            "cuMemAlloc",
            [&] { return driver.api().memAlloc(&pointer, bytes ? bytes : 1); },
            error)) {
      // `error` begins with the device's description.
      error = "cannot allocate " + std::to_string(bytes) + " bytes on " + error;
      return nullptr;
    }
    // Fresh device memory holds whatever was there: zero it, as the
    // contract (and the host) promise.
    void *memory = reinterpret_cast<void *>(static_cast<uintptr_t>(pointer));
    if (!zero(memory, bytes, error)) {
      driver.api().memFree(address(memory));
      return nullptr;
    }
    return memory;
  }
  void releaseBytes(void *pointer, uint64_t, uint64_t) override {
    std::string ignored;
    synchronous(
        "cuMemFree", [&] { return driver.api().memFree(address(pointer)); },
        ignored);
  }

private:
  /// A synchronous call (`check`'s) that must not overlap another thread's
  /// capture: a copy or memset on the legacy stream joins every blocking
  /// stream, a rank's capturing one too, which breaks that capture
  /// (CUDA_ERROR_STREAM_CAPTURE_IMPLICIT), and cuCtxSynchronize, cuMemAlloc
  /// and cuMemFree may not run during one. Ranks on threads of one GPU
  /// capture while others copy their step inputs or end their step, so
  /// such calls wait for the captures under way, and captures for them.
  /// On the capturing thread itself the call goes to the driver, which
  /// refuses it and fails the capture.
  template <typename Call>
  bool synchronous(const char *what, Call call, std::string &error) {
    if (std::find(capturingHere.begin(), capturingHere.end(), this) !=
        capturingHere.end())
      return check(what, call, error);
    std::unique_lock<std::shared_mutex> lock(captureExclusion);
    return check(what, call, error);
  }
  /// Held shared from beginCapture to endCapture (on the capturing
  /// thread; one capture a thread), exclusively by `synchronous`.
  std::shared_mutex captureExclusion;
  /// The devices this thread captures on (one entry a capture).
  static thread_local std::vector<const CudaDevice *> capturingHere;

  /// Makes the context current on this thread (a rank's thread need not be
  /// the one that opened the device), then runs `call`.
  template <typename Call>
  bool check(const char *what, Call call, std::string &error) {
    int status = driver.api().ctxSetCurrent(context);
    if (status) {
      error = describe() + ": " + driver.failure("cuCtxSetCurrent", status);
      return false;
    }
    status = call();
    if (status) {
      error = describe() + ": " + driver.failure(what, status);
      return false;
    }
    return true;
  }

  const CudaDriver &driver;
  CudaDeviceInfo info;
  CudaDriverApi::Device device;
  CudaDriverApi::Context context;
};

/// A GPU rank's fragment context: its stream (blocking, so the device's
/// synchronous copies on the legacy stream order after its work), its
/// cuBLASLt handle, workspace and plan cache.
class CudaFragmentResources final : public FragmentResources {
public:
  /// cuBLASLt's recommended workspace on Hopper, as llm.c uses.
  static constexpr uint64_t kWorkspaceBytes = 32ull << 20;
  /// Plans cached per rank: more than the distinct GEMM shapes of any
  /// model here (gpt2-124m's rank has a few dozen).
  static constexpr uint64_t kPlanCacheEntries = 1024;

  CudaFragmentResources(Device &device, const CudaDriver &driver,
                        const CudaLibraries &libraries,
                        CudaDriverApi::Context context)
      : device(device), driver(driver), libraries(libraries), context(context) {
  }
  ~CudaFragmentResources() override {
    if (driver.api().ctxSetCurrent(context) != 0)
      return;
    libraries.destroyBlasHandle(ctx.blas);
    if (ctx.stream)
      driver.api().streamDestroy(ctx.stream);
  }

  bool create(std::string &error) {
    int status = driver.api().ctxSetCurrent(context);
    if (!status)
      status = driver.api().streamCreate(&ctx.stream, 0);
    if (status) {
      error =
          device.describe() + ": " + driver.failure("cuStreamCreate", status);
      return false;
    }
    ctx.blas = libraries.createBlasHandle(error);
    if (!ctx.blas) {
      error = device.describe() + ": " + error;
      return false;
    }
    workspace =
        DeviceAllocation(device, kWorkspaceBytes, kMaxDeviceAlignment, error);
    if (!workspace)
      return false;
    ctx.workspace = workspace.data();
    ctx.workspace_bytes = workspace.size();
    // Host memory: the generated code looks plans up on the host.
    plans.assign(kPlanCacheEntries, tandem_plan_entry{});
    cache.capacity = plans.size();
    cache.entries = plans.data();
    ctx.plan_cache = &cache;
    return true;
  }

private:
  Device &device;
  const CudaDriver &driver;
  const CudaLibraries &libraries;
  CudaDriverApi::Context context;
  DeviceAllocation workspace;
  std::vector<tandem_plan_entry> plans;
  tandem_plan_cache cache = {0, nullptr};
};

thread_local std::vector<const CudaDevice *> CudaDevice::capturingHere;

std::unique_ptr<FragmentResources>
CudaDevice::fragmentResources(bool deviceCode, std::string &error) {
  if (!deviceCode)
    return Device::fragmentResources(false, error);
  const CudaLibraries *libraries = CudaLibraries::open(error);
  if (!libraries)
    return nullptr;
  auto resources = std::make_unique<CudaFragmentResources>(*this, driver,
                                                           *libraries, context);
  if (!resources->create(error))
    return nullptr;
  return resources;
}

} // namespace

std::unique_ptr<Device>
tandem::runtime::openCudaDevice(const CudaDriver &driver, int64_t ordinal,
                                std::string &error) {
  CudaDeviceInfo info;
  if (!driver.describe(ordinal, info, error))
    return nullptr;
  const CudaDriverApi &api = driver.api();
  CudaDriverApi::Device device = 0;
  CudaDriverApi::Context context = nullptr;
  // describe() checked the ordinal against the count.
  int status = api.deviceGet(&device, static_cast<int>(ordinal));
  if (!status)
    status = api.primaryCtxRetain(&context, device);
  if (status) {
    error = "GPU " + std::to_string(ordinal) + ": " +
            driver.failure("cuDevicePrimaryCtxRetain", status);
    return nullptr;
  }
  return std::make_unique<CudaDevice>(driver, std::move(info), device, context);
}

std::unique_ptr<Device> tandem::runtime::openDevice(const std::string &name,
                                                    std::string &error) {
  if (name == "host")
    return makeHostDevice();
  if (name != "cuda" && name.rfind("cuda:", 0) != 0) {
    error = "--device takes host or cuda[:N], not '" + name + "'";
    return nullptr;
  }
  uint64_t ordinal = 0;
  if (name != "cuda" &&
      !parseCount("--device cuda:", name.substr(5), ordinal, error))
    return nullptr;
  const CudaDriver *driver = CudaDriver::open(error);
  // A number past any int64 is past the last GPU too.
  std::unique_ptr<Device> device =
      driver ? openCudaDevice(
                   *driver,
                   static_cast<int64_t>(std::min<uint64_t>(ordinal, INT64_MAX)),
                   error)
             : nullptr;
  if (!device)
    error = "--device " + name + ": " + error;
  return device;
}
