//===- TransportConformanceTest.cpp - the conformance body in process -----===//
//
// TransportConformance.h's bodies with two ranks as threads over a fresh
// InProcessTransport each, over host memory and over a device's.
//
//===----------------------------------------------------------------------===//

#include "TransportConformance.h"

#include "tandem/Runtime/CudaDriver.h"
#include "tandem/Runtime/Device.h"

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <thread>

using namespace tandem::runtime;

namespace {

/// A device standing for a GPU: its memory is the host's, and its copies
/// are counted (those between two of its buffers apart). It holds no
/// memory of its own: the bodies' payloads are theirs.
class CountingDevice final : public Device {
public:
  DeviceKind kind() const override { return DeviceKind::Cuda; }
  bool hostAddressable() const override { return true; }
  std::string describe() const override { return "a counting device"; }
  bool copyToDevice(void *dst, const void *src, uint64_t bytes,
                    std::string &) override {
    return copy(hostCopies, dst, src, bytes);
  }
  bool copyToHost(void *dst, const void *src, uint64_t bytes,
                  std::string &) override {
    return copy(hostCopies, dst, src, bytes);
  }
  bool copyOnDevice(void *dst, const void *src, uint64_t bytes,
                    std::string &) override {
    return copy(deviceCopies, dst, src, bytes);
  }
  bool zero(void *dst, uint64_t bytes, std::string &) override {
    std::memset(dst, 0, bytes);
    return true;
  }
  bool synchronize(std::string &) override { return true; }

  std::atomic<int> deviceCopies{0}, hostCopies{0};

protected:
  void *allocateBytes(uint64_t, uint64_t, std::string &error) override {
    error = "the counting device holds no memory";
    return nullptr;
  }
  void releaseBytes(void *, uint64_t, uint64_t) override {}

private:
  static bool copy(std::atomic<int> &count, void *dst, const void *src,
                   uint64_t bytes) {
    ++count;
    std::memcpy(dst, src, bytes);
    return true;
  }
};

CountingDevice &countingDevice() {
  static CountingDevice device;
  return device;
}

/// Two ranks as threads over a fresh transport, over `device`'s memory
/// when one is given.
void runInProcess(void (*body)(Transport &, int64_t),
                  Device *device = nullptr) {
  InProcessTransport transport(2, device);
  std::thread other([&] { body(transport, 1); });
  body(transport, 0);
  other.join();
}

void runOnDevice(void (*body)(Transport &, int64_t)) {
  runInProcess(body, &countingDevice());
}

} // namespace

TANDEM_TRANSPORT_CONFORMANCE_TESTS(InProcessTransportConformance, runInProcess)

// The same bodies over a device's memory: every pair a device copy.
TANDEM_TRANSPORT_CONFORMANCE_TESTS(InProcessTransportOnDeviceConformance,
                                   runOnDevice)

TEST(InProcessTransportOnDevice, EachPairIsOneDeviceCopy) {
  CountingDevice &device = countingDevice();
  int before = device.deviceCopies, hostBefore = device.hostCopies;
  runOnDevice(conformance::pairsInPostingOrder);
  // Five messages, one copy each, none through the host.
  EXPECT_EQ(device.deviceCopies - before, 5);
  EXPECT_EQ(device.hostCopies - hostBefore, 0);
  InProcessTransport onDevice(2, &device);
  EXPECT_EQ(onDevice.payloadDevice(), &device);
  // The host device's memory is host memory: no device copies.
  std::unique_ptr<Device> host = makeHostDevice();
  InProcessTransport onHost(2, host.get());
  EXPECT_EQ(onHost.payloadDevice(), nullptr);
}

// On the fake GPU, whose transport streams run their copies only when
// something waits for them (FakeCudaDriver.cpp): the receiver's later work
// sees the payload, and the sender's later writes do not reach it, because
// each rank's wait orders its stream after the copy. Whichever rank waits
// first, the other's missing wait would show: without the sender's, the
// copy would run at the receiver's wait and carry the sender's new value;
// without the receiver's, its read would find the old bytes.
TEST(InProcessTransportOnDevice, EventsOrderACopyBetweenTheRanksWork) {
  std::string error;
  auto driver = CudaDriver::load(TANDEM_FAKE_CUDA_DRIVER, error);
  ASSERT_TRUE(driver) << error;
  std::unique_ptr<Device> device = openCudaDevice(*driver, 0, error);
  ASSERT_TRUE(device) << error;
  for (bool senderFirst : {true, false}) {
    SCOPED_TRACE(senderFirst ? "the sender waits first"
                             : "the receiver waits first");
    DeviceAllocation payload(*device, 4, 4, error),
        landing(*device, 4, 4, error);
    ASSERT_TRUE(payload && landing) << error;
    InProcessTransport transport(2, device.get());
    std::mutex mutex;
    std::condition_variable changed;
    int turn = 0; // Which rank waits next: 0 the first, 1 the second.
    auto takeTurn = [&](bool first, auto body) {
      std::unique_lock<std::mutex> lock(mutex);
      changed.wait(lock, [&] { return turn == (first ? 0 : 1); });
      body();
      ++turn;
      changed.notify_all();
    };
    const int32_t old = 5, updated = 6;
    int32_t received = 0;
    std::string sendError, recvError;
    ASSERT_TRUE(device->copyToDevice(payload.data(), &old, 4, error)) << error;
    std::thread receiver([&] {
      std::vector<TransportOp> group = {
          conformance::opOf(false, 0, 1, "the payload")};
      group[0].recvData = landing.data();
      EXPECT_TRUE(transport.post(1, group, recvError)) << recvError;
      takeTurn(!senderFirst, [&] {
        EXPECT_TRUE(transport.wait(1, {&group[0]}, recvError)) << recvError;
        EXPECT_TRUE(device->copyToHost(&received, landing.data(), 4, recvError))
            << recvError;
      });
      transport.finish(1);
    });
    std::vector<TransportOp> group = {
        conformance::opOf(true, 1, 1, "the payload")};
    group[0].sendData = payload.data();
    EXPECT_TRUE(transport.post(0, group, sendError)) << sendError;
    takeTurn(senderFirst, [&] {
      EXPECT_TRUE(transport.wait(0, {&group[0]}, sendError)) << sendError;
      EXPECT_TRUE(device->copyToDevice(payload.data(), &updated, 4, sendError))
          << sendError;
    });
    transport.finish(0);
    receiver.join();
    EXPECT_EQ(received, old);
  }
}

TEST(InProcessTransport, AllReduceFoldsInGroupOrder) {
  // f32 addition is not associative: 1e8 + 1 rounds back to 1e8.
  const float values[3] = {1e8f, 1.0f, -1e8f};
  auto run = [&](std::vector<int64_t> group) {
    InProcessTransport transport(3);
    float got[3] = {values[0], values[1], values[2]};
    std::string errors[3];
    std::vector<std::thread> threads;
    for (int64_t r = 0; r < 3; ++r)
      threads.emplace_back([&, r] {
        CollectiveOp op;
        op.group = group;
        op.bytes = sizeof(float);
        op.data = &got[r];
        op.description = "sum";
        EXPECT_TRUE(transport.collective(r, op, errors[r])) << errors[r];
      });
    for (std::thread &t : threads)
      t.join();
    EXPECT_EQ(got[0], got[1]);
    EXPECT_EQ(got[1], got[2]);
    return got[0];
  };
  EXPECT_EQ(run({0, 1, 2}), 0.0f); // (1e8 + 1) - 1e8
  EXPECT_EQ(run({0, 2, 1}), 1.0f); // (1e8 - 1e8) + 1
}

TEST(InProcessTransport, AMemberThatNeverArrivesIsADeadlock) {
  InProcessTransport transport(2);
  std::string error;
  std::thread other([&] { transport.finish(1); });
  float value = 1;
  CollectiveOp op;
  op.group = {0, 1};
  op.bytes = sizeof value;
  op.data = &value;
  op.description = "all_reduce sum of g";
  EXPECT_FALSE(transport.collective(0, op, error));
  other.join();
  EXPECT_NE(error.find("deadlock under rendezvous semantics:\n  rank 0 waits "
                       "in all_reduce sum of g over ranks {0, 1}: not reached "
                       "by rank 1 (finished its list)"),
            std::string::npos)
      << error;
}
