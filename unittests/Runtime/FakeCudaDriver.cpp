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
//===----------------------------------------------------------------------===//

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

namespace {

constexpr int kSuccess = 0;
constexpr int kInvalidValue = 1;
constexpr int kOutOfMemory = 2;
constexpr int kInvalidContext = 201;
constexpr int kInvalidDevice = 101;

int fromEnvironment(const char *name, int fallback) {
  const char *value = std::getenv(name);
  return value && *value ? std::atoi(value) : fallback;
}

std::mutex mutex;
std::map<uintptr_t, size_t> allocations;
int contextToken = 0;
thread_local void *current = nullptr;

/// [pointer, pointer + bytes) inside one live allocation.
bool onDevice(uintptr_t pointer, size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex);
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

int copy(uintptr_t dst, bool dstDevice, uintptr_t src, bool srcDevice,
         size_t bytes) {
  if (!current)
    return kInvalidContext;
  if ((dstDevice ? !onDevice(dst, bytes) : anyDevice(dst)) ||
      (srcDevice ? !onDevice(src, bytes) : anyDevice(src)))
    return kInvalidValue;
  std::memmove(reinterpret_cast<void *>(dst),
               reinterpret_cast<const void *>(src), bytes);
  return kSuccess;
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

int cuCtxSynchronize() { return current ? kSuccess : kInvalidContext; }

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

int cuStreamCreate(void **stream, unsigned) {
  if (!current)
    return kInvalidContext;
  *stream = new int(0);
  return kSuccess;
}

int cuStreamDestroy_v2(void *stream) {
  delete static_cast<int *>(stream);
  return kSuccess;
}

int cuStreamSynchronize(void *) { return current ? kSuccess : kInvalidContext; }

// Work here is done when issued: every stream is idle.
int cuStreamQuery(void *) { return current ? kSuccess : kInvalidContext; }

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
  if (!onDevice(dst, bytes))
    return kInvalidValue;
  std::memset(reinterpret_cast<void *>(dst), value, bytes);
  return kSuccess;
}

} // extern "C"
