//===- TransportConformanceTest.cpp - the conformance body in process -----===//
//
// TransportConformance.h's bodies with two ranks as threads over a fresh
// InProcessTransport each, over host memory and over a device's.
//
//===----------------------------------------------------------------------===//

#include "TransportConformance.h"

#include "tandem/Runtime/Device.h"

#include <atomic>
#include <cstdlib>
#include <thread>

using namespace tandem::runtime;

namespace {

void runInProcess(void (*body)(Transport &, int64_t)) {
  InProcessTransport transport(2);
  std::thread other([&] { body(transport, 1); });
  body(transport, 0);
  other.join();
}

} // namespace

TANDEM_TRANSPORT_CONFORMANCE_TESTS(InProcessTransportConformance, runInProcess)

namespace {

/// A device standing for a GPU: its memory is the host's, and the copies
/// between two of its buffers are counted.
class CountingDevice final : public Device {
public:
  DeviceKind kind() const override { return DeviceKind::Cuda; }
  bool hostAddressable() const override { return true; }
  std::string describe() const override { return "a counting device"; }
  bool copyToDevice(void *dst, const void *src, uint64_t bytes,
                    std::string &) override {
    ++hostCopies;
    std::memcpy(dst, src, bytes);
    return true;
  }
  bool copyToHost(void *dst, const void *src, uint64_t bytes,
                  std::string &) override {
    ++hostCopies;
    std::memcpy(dst, src, bytes);
    return true;
  }
  bool copyOnDevice(void *dst, const void *src, uint64_t bytes,
                    std::string &) override {
    ++deviceCopies;
    std::memcpy(dst, src, bytes);
    return true;
  }
  bool zero(void *dst, uint64_t bytes, std::string &) override {
    std::memset(dst, 0, bytes);
    return true;
  }
  bool synchronize(std::string &) override { return true; }

  std::atomic<int> deviceCopies{0}, hostCopies{0};

protected:
  void *allocateBytes(uint64_t bytes, uint64_t, std::string &) override {
    return std::calloc(1, bytes ? bytes : 1);
  }
  void releaseBytes(void *pointer, uint64_t, uint64_t) override {
    std::free(pointer);
  }
};

CountingDevice &countingDevice() {
  static CountingDevice device;
  return device;
}

void runOnDevice(void (*body)(Transport &, int64_t)) {
  InProcessTransport transport(2, &countingDevice());
  std::thread other([&] { body(transport, 1); });
  body(transport, 0);
  other.join();
}

} // namespace

// The same bodies over a device's memory: every pair a device copy.
TANDEM_TRANSPORT_CONFORMANCE_TESTS(InProcessTransportOnDeviceConformance,
                                   runOnDevice)

TEST(InProcessTransportOnDevice, EachPairIsOneDeviceCopy) {
  CountingDevice &device = countingDevice();
  int before = device.deviceCopies;
  runOnDevice(conformance::pairsInPostingOrder);
  // Five messages, one copy each, none through the host.
  EXPECT_EQ(device.deviceCopies - before, 5);
  EXPECT_EQ(device.hostCopies, 0);
  InProcessTransport onDevice(2, &device);
  EXPECT_EQ(onDevice.payloadDevice(), &device);
  // The host device's memory is host memory: no device copies.
  std::unique_ptr<Device> host = makeHostDevice();
  InProcessTransport onHost(2, host.get());
  EXPECT_EQ(onHost.payloadDevice(), nullptr);
}
