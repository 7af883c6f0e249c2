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

#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace tandem::runtime {

class CudaDriver;

enum class DeviceKind { Host, Cuda };

/// Every allocation is aligned to this many bytes: the manifest's largest
/// alignment (the CUDA target's 256, what cuMemAlloc guarantees).
constexpr uint64_t kDeviceAlignment = 256;

class Device {
public:
  virtual ~Device();
  virtual DeviceKind kind() const = 0;
  /// "host", or "GPU 0 (NVIDIA H200, compute capability 9.0, 139.8 GiB)".
  virtual std::string describe() const = 0;

  /// `bytes` of zeroed memory aligned to kDeviceAlignment (0 bytes give a
  /// unique non-null pointer); nullptr with `error` when the device cannot
  /// hold them. An address on a GPU is not readable by the host: move bytes
  /// with the copies below.
  void *allocate(uint64_t bytes, std::string &error);
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

  /// The bytes this device's allocations hold now, and the most held at
  /// once (as requested, before any rounding by the device).
  uint64_t liveBytes() const { return live; }
  uint64_t peakBytes() const { return peak; }

protected:
  Device() = default;
  virtual void *allocateBytes(uint64_t bytes, std::string &error) = 0;
  virtual void releaseBytes(void *pointer) = 0;

private:
  /// Sizes by pointer, for the counts (allocations are few: an arena, a
  /// parameter block, step inputs).
  std::map<void *, uint64_t> sizes;
  uint64_t live = 0, peak = 0;
};

/// The host: memory from the C++ heap, copies with memcpy.
std::unique_ptr<Device> makeHostDevice();

/// GPU `ordinal` through `driver` (its primary context, made current on the
/// calling thread by every call); nullptr with `error` naming the GPU.
std::unique_ptr<Device> openCudaDevice(const CudaDriver &driver, int ordinal,
                                       std::string &error);

} // namespace tandem::runtime

#endif // TANDEM_RUNTIME_DEVICE_H
