//===- Device.cpp - the device layer and its host implementation ----------===//

#include "tandem/Runtime/Device.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

using namespace tandem::runtime;

Device::~Device() = default;

void *Device::allocate(uint64_t bytes, std::string &error) {
  void *pointer = allocateBytes(bytes, error);
  if (!pointer)
    return nullptr;
  sizes[pointer] = bytes;
  live += bytes;
  peak = std::max(peak, live);
  return pointer;
}

void Device::release(void *pointer) {
  if (!pointer)
    return;
  auto found = sizes.find(pointer);
  if (found != sizes.end()) {
    live -= found->second;
    sizes.erase(found);
  }
  releaseBytes(pointer);
}

namespace {

class HostDevice final : public Device {
public:
  DeviceKind kind() const override { return DeviceKind::Host; }
  std::string describe() const override { return "host"; }

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
  void *allocateBytes(uint64_t bytes, std::string &error) override {
    // aligned_alloc needs a multiple of the alignment; checked, since the
    // size comes from a manifest.
    uint64_t rounded = std::max<uint64_t>(bytes, 1);
    if (rounded > UINT64_MAX - (kDeviceAlignment - 1)) {
      error = "cannot allocate " + std::to_string(bytes) + " bytes on the host";
      return nullptr;
    }
    rounded = (rounded + kDeviceAlignment - 1) / kDeviceAlignment *
              kDeviceAlignment;
    void *pointer = std::aligned_alloc(kDeviceAlignment, rounded);
    if (!pointer) {
      error = "cannot allocate " + std::to_string(bytes) +
              " bytes on the host: out of memory";
      return nullptr;
    }
    std::memset(pointer, 0, rounded);
    return pointer;
  }
  void releaseBytes(void *pointer) override { std::free(pointer); }
};

} // namespace

std::unique_ptr<Device> tandem::runtime::makeHostDevice() {
  return std::make_unique<HostDevice>();
}
