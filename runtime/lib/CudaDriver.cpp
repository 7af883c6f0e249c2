//===- CudaDriver.cpp - the CUDA driver, loaded at run time ---------------===//

#include "tandem/Runtime/CudaDriver.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>

using namespace tandem::runtime;

namespace {

// The driver's attribute numbers (cuda.h's CUdevice_attribute).
constexpr int kComputeCapabilityMajor = 75;
constexpr int kComputeCapabilityMinor = 76;
// CUDA_ERROR_NO_DEVICE: cuInit's answer on a machine with a driver and no
// GPU.
constexpr int kErrorNoDevice = 100;

/// Resolves `symbol` from `handle` into `slot`; false with `error` set when
/// the library lacks it (a driver older than the symbol's version).
template <typename Fn>
bool resolve(void *handle, const char *symbol, Fn &slot,
             const std::string &library, std::string &error) {
  void *address = dlsym(handle, symbol);
  if (!address) {
    error = "CUDA driver '" + library + "' has no " + symbol +
            " (a driver older than CUDA " +
            CudaDriver::versionName(kMinimumCudaDriverVersion) + "?)";
    return false;
  }
  slot = reinterpret_cast<Fn>(address);
  return true;
}

} // namespace

std::string CudaDriver::versionName(int version) {
  return std::to_string(version / 1000) + "." +
         std::to_string(version % 1000 / 10);
}

std::string CudaDriver::failure(const char *what,
                                CudaDriverApi::Result status) const {
  const char *name = nullptr;
  if (calls.getErrorName && calls.getErrorName(status, &name) != 0)
    name = nullptr;
  return std::string(what) + ": " + (name ? name : "CUDA error") + " (" +
         std::to_string(status) + ")";
}

std::unique_ptr<CudaDriver> CudaDriver::load(const std::string &library,
                                             std::string &error) {
  // RTLD_GLOBAL: the CUDA runtime inside a rank's library finds the same
  // driver instance rather than opening a second one.
  void *handle = dlopen(library.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle) {
    const char *message = dlerror();
    error = "no CUDA driver: cannot load '" + library +
            "': " + (message ? message : "unknown error") +
            " (a GPU rank needs the NVIDIA driver; set TANDEM_CUDA_DRIVER to "
            "its libcuda.so.1 if it is outside the loader's path)";
    return nullptr;
  }
  std::unique_ptr<CudaDriver> driver(new CudaDriver());
  driver->path = library;
  using HostAddressable = int (*)();
  auto hostAddressable = reinterpret_cast<HostAddressable>(
      dlsym(handle, "tandem_fake_cuda_host_addressable"));
  driver->isFake = hostAddressable && hostAddressable() != 0;
  CudaDriverApi &c = driver->calls;
  if (!resolve(handle, "cuGetErrorName", c.getErrorName, library, error) ||
      !resolve(handle, "cuInit", c.init, library, error) ||
      !resolve(handle, "cuDriverGetVersion", c.driverGetVersion, library,
               error) ||
      !resolve(handle, "cuDeviceGetCount", c.deviceGetCount, library, error) ||
      !resolve(handle, "cuDeviceGet", c.deviceGet, library, error) ||
      !resolve(handle, "cuDeviceGetName", c.deviceGetName, library, error) ||
      !resolve(handle, "cuDeviceGetAttribute", c.deviceGetAttribute, library,
               error) ||
      !resolve(handle, "cuDeviceTotalMem_v2", c.deviceTotalMem, library,
               error) ||
      !resolve(handle, "cuDevicePrimaryCtxRetain", c.primaryCtxRetain, library,
               error) ||
      !resolve(handle, "cuDevicePrimaryCtxRelease_v2", c.primaryCtxRelease,
               library, error) ||
      !resolve(handle, "cuCtxSetCurrent", c.ctxSetCurrent, library, error) ||
      !resolve(handle, "cuCtxSynchronize", c.ctxSynchronize, library, error) ||
      !resolve(handle, "cuMemAlloc_v2", c.memAlloc, library, error) ||
      !resolve(handle, "cuMemFree_v2", c.memFree, library, error) ||
      !resolve(handle, "cuMemcpyHtoD_v2", c.memcpyHtoD, library, error) ||
      !resolve(handle, "cuMemcpyDtoH_v2", c.memcpyDtoH, library, error) ||
      !resolve(handle, "cuMemcpyDtoD_v2", c.memcpyDtoD, library, error) ||
      !resolve(handle, "cuMemsetD8_v2", c.memsetD8, library, error) ||
      !resolve(handle, "cuStreamCreate", c.streamCreate, library, error) ||
      !resolve(handle, "cuStreamDestroy_v2", c.streamDestroy, library, error) ||
      !resolve(handle, "cuStreamSynchronize", c.streamSynchronize, library,
               error) ||
      !resolve(handle, "cuMemGetInfo_v2", c.memGetInfo, library, error) ||
      !resolve(handle, "cuEventCreate", c.eventCreate, library, error) ||
      !resolve(handle, "cuEventDestroy_v2", c.eventDestroy, library, error) ||
      !resolve(handle, "cuEventRecord", c.eventRecord, library, error) ||
      !resolve(handle, "cuEventQuery", c.eventQuery, library, error) ||
      !resolve(handle, "cuStreamWaitEvent", c.streamWaitEvent, library,
               error) ||
      !resolve(handle, "cuEventElapsedTime_v2", c.eventElapsedTime, library,
               error) ||
      !resolve(handle, "cuStreamBeginCapture_v2", c.streamBeginCapture, library,
               error) ||
      !resolve(handle, "cuStreamEndCapture", c.streamEndCapture, library,
               error) ||
      !resolve(handle, "cuGraphInstantiateWithFlags", c.graphInstantiate,
               library, error) ||
      !resolve(handle, "cuGraphLaunch", c.graphLaunch, library, error) ||
      !resolve(handle, "cuGraphExecDestroy", c.graphExecDestroy, library,
               error) ||
      !resolve(handle, "cuGraphDestroy", c.graphDestroy, library, error) ||
      !resolve(handle, "cuMemcpyDtoDAsync_v2", c.memcpyDtoDAsync, library,
               error) ||
      !resolve(handle, "cuLaunchHostFunc", c.launchHostFunc, library, error))
    return nullptr;

  // The version first: an old driver's cuInit may fail for reasons of its
  // own, and "too old" is the one a user can act on.
  if (int status = c.driverGetVersion(&driver->driverVersion)) {
    error = "CUDA driver '" + library +
            "': " + driver->failure("cuDriverGetVersion", status);
    return nullptr;
  }
  if (driver->driverVersion < kMinimumCudaDriverVersion) {
    error = "CUDA driver " + versionName(driver->driverVersion) + " ('" +
            library + "') is too old: tandemc's CUDA libraries need " +
            versionName(kMinimumCudaDriverVersion) + " or newer";
    return nullptr;
  }
  if (int status = c.init(0)) {
    error = status == kErrorNoDevice
                ? "no GPU: the CUDA driver ('" + library + "', " +
                      versionName(driver->driverVersion) + ") finds no device"
                : "CUDA driver '" + library +
                      "': " + driver->failure("cuInit", status);
    return nullptr;
  }
  if (int status = c.deviceGetCount(&driver->count)) {
    error = "CUDA driver '" + library +
            "': " + driver->failure("cuDeviceGetCount", status);
    return nullptr;
  }
  if (driver->count <= 0) {
    error = "no GPU: the CUDA driver ('" + library + "', " +
            versionName(driver->driverVersion) + ") finds no device";
    return nullptr;
  }
  return driver;
}

const CudaDriver *CudaDriver::open(std::string &error) {
  static std::mutex mutex;
  static std::unique_ptr<CudaDriver> opened;
  std::lock_guard<std::mutex> lock(mutex);
  if (!opened) {
    const char *chosen = std::getenv("TANDEM_CUDA_DRIVER");
    opened = load(chosen && *chosen ? chosen : "libcuda.so.1", error);
  }
  return opened.get();
}

bool CudaDriver::describe(int64_t ordinal, CudaDeviceInfo &info,
                          std::string &error) const {
  if (ordinal < 0 || ordinal >= count) {
    error = "GPU " + std::to_string(ordinal) + " does not exist: the CUDA " +
            "driver finds " + std::to_string(count) +
            (count == 1 ? " device" : " devices");
    return false;
  }
  CudaDriverApi::Device device = 0;
  char name[256] = {};
  size_t total = 0;
  int status = 0;
  const char *what = "cuDeviceGet";
  if (!(status = calls.deviceGet(&device, static_cast<int>(ordinal)))) {
    what = "cuDeviceGetName";
    if (!(status = calls.deviceGetName(name, sizeof(name) - 1, device))) {
      what = "cuDeviceGetAttribute";
      if (!(status = calls.deviceGetAttribute(
                &info.major, kComputeCapabilityMajor, device)) &&
          !(status = calls.deviceGetAttribute(
                &info.minor, kComputeCapabilityMinor, device))) {
        what = "cuDeviceTotalMem";
        status = calls.deviceTotalMem(&total, device);
      }
    }
  }
  if (status) {
    error = "GPU " + std::to_string(ordinal) + ": " + failure(what, status);
    return false;
  }
  info.ordinal = static_cast<int>(ordinal);
  info.name = name;
  info.totalBytes = total;
  return true;
}
