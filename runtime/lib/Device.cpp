//===- Device.cpp - the device layer and its host implementation ----------===//

#include "tandem/Runtime/Device.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <tuple>

using namespace tandem::runtime;

namespace {
std::atomic<uint64_t> liveHostBytes{0}, peakHostBytes{0};
} // namespace

BufferBytes tandem::runtime::bufferBytes() {
  return {liveHostBytes.load(), peakHostBytes.load()};
}

void tandem::runtime::resetBufferPeak() {
  peakHostBytes.store(liveHostBytes.load());
}

void tandem::runtime::countHostAllocation(uint64_t bytes) {
  uint64_t now = liveHostBytes.fetch_add(bytes) + bytes;
  uint64_t peak = peakHostBytes.load();
  while (now > peak && !peakHostBytes.compare_exchange_weak(peak, now)) {
  }
}

void tandem::runtime::countHostRelease(uint64_t bytes) {
  liveHostBytes.fetch_sub(bytes);
}

Device::~Device() = default;

FragmentResources::~FragmentResources() = default;

std::unique_ptr<FragmentResources>
Device::fragmentResources(bool deviceCode, std::string &error) {
  if (deviceCode) {
    error = describe() + " runs no device code";
    return nullptr;
  }
  return std::make_unique<FragmentResources>();
}

std::shared_ptr<DeviceEvent>
DeviceEvent::create(Device &device, std::string &error, bool timing) {
  void *handle = nullptr;
  if (!device.createEvent(handle, timing, error))
    return nullptr;
  return std::shared_ptr<DeviceEvent>(new DeviceEvent(device, handle));
}

void *Device::allocate(uint64_t bytes, uint64_t alignment, std::string &error) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 ||
      alignment > kMaxDeviceAlignment) {
    error = "cannot allocate with an alignment of " +
            std::to_string(alignment) + " bytes (a power of two up to " +
            std::to_string(kMaxDeviceAlignment) + ")";
    return nullptr;
  }
  void *pointer = allocateBytes(bytes, alignment, error);
  if (!pointer)
    return nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  sizes[pointer] = {bytes, alignment};
  live += bytes;
  peak = std::max(peak, live);
  return pointer;
}

std::optional<uint64_t> Device::sampleDriverPeak() {
  std::optional<uint64_t> used = driverUsedBytes();
  std::lock_guard<std::mutex> lock(mutex);
  if (used)
    driverPeak = std::max(driverPeak.value_or(0), *used);
  return driverPeak;
}

void Device::release(void *pointer) {
  if (!pointer)
    return;
  uint64_t bytes = 0, alignment = 0;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto found = sizes.find(pointer);
    if (found == sizes.end())
      return; // Not this device's.
    std::tie(bytes, alignment) = found->second;
    live -= bytes;
    sizes.erase(found);
  }
  releaseBytes(pointer, bytes, alignment);
}

namespace {

/// The host's alignment: at least a cache line.
uint64_t hostAlignment(uint64_t alignment) {
  return std::max<uint64_t>(alignment, 64);
}

/// What the host allocates for `bytes`: whole alignment units, at least
/// one.
uint64_t roundedSize(uint64_t bytes, uint64_t alignment) {
  return (std::max<uint64_t>(bytes, 1) + alignment - 1) / alignment * alignment;
}

class HostDevice final : public Device {
public:
  DeviceKind kind() const override { return DeviceKind::Host; }
  bool hostAddressable() const override { return true; }
  std::string describe() const override { return "the host"; }

  bool copyToDevice(void *dst, const void *src, uint64_t bytes,
                    std::string &) override {
    if (bytes)
      std::memcpy(dst, src, bytes);
    return true;
  }
  bool copyToHost(void *dst, const void *src, uint64_t bytes,
                  std::string &) override {
    if (bytes)
      std::memcpy(dst, src, bytes);
    return true;
  }
  bool copyOnDevice(void *dst, const void *src, uint64_t bytes,
                    std::string &) override {
    // A rank may move a buffer onto an overlapping view of itself.
    if (bytes)
      std::memmove(dst, src, bytes);
    return true;
  }
  bool zero(void *dst, uint64_t bytes, std::string &) override {
    if (bytes)
      std::memset(dst, 0, bytes);
    return true;
  }
  bool synchronize(std::string &) override { return true; }

protected:
  void *allocateBytes(uint64_t bytes, uint64_t alignment,
                      std::string &error) override {
    // aligned_alloc needs a multiple of the alignment; checked, since the
    // size comes from a manifest.
    alignment = hostAlignment(alignment);
    if (bytes > UINT64_MAX - alignment) {
      error = "cannot allocate " + std::to_string(bytes) + " bytes on the host";
      return nullptr;
    }
    uint64_t rounded = roundedSize(bytes, alignment);
    void *pointer = std::aligned_alloc(alignment, rounded);
    if (!pointer) {
      error = "cannot allocate " + std::to_string(bytes) +
              " bytes on the host: out of memory";
      return nullptr;
    }
    std::memset(pointer, 0, rounded);
    countHostAllocation(rounded);
    return pointer;
  }
  void releaseBytes(void *pointer, uint64_t bytes,
                    uint64_t alignment) override {
    std::free(pointer);
    countHostRelease(roundedSize(bytes, hostAlignment(alignment)));
  }
};

} // namespace

std::unique_ptr<Device> tandem::runtime::makeHostDevice() {
  return std::make_unique<HostDevice>();
}
