//===- DeviceTest.cpp - the device layer on the host and a fake driver ----===//
//
// One body of tests over every device this machine can open: the host, and
// the CUDA device through the real dlopen path with a fake driver
// (FakeCudaDriver.cpp) standing in for libcuda.so.1. On a GPU machine the
// same body runs against the real driver (TANDEM_TEST_REAL_CUDA=1).
//
//===----------------------------------------------------------------------===//

#include "ScopedEnv.h"

#include "tandem/Runtime/CudaDriver.h"
#include "tandem/Runtime/CudaLibraries.h"
#include "tandem/Runtime/Device.h"
#include "tandem/Runtime/DeviceTimeline.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <numeric>
#include <thread>
#include <vector>

using namespace tandem::runtime;

namespace {

std::unique_ptr<CudaDriver> loadFake(std::string &error) {
  return CudaDriver::load(TANDEM_FAKE_CUDA_DRIVER, error);
}

enum class Which { Host, FakeCuda, RealCuda };

class DeviceConformance : public ::testing::TestWithParam<Which> {
protected:
  void SetUp() override {
    std::string error;
    switch (GetParam()) {
    case Which::Host:
      device = makeHostDevice();
      break;
    case Which::FakeCuda:
      driver = loadFake(error);
      ASSERT_TRUE(driver) << error;
      device = openCudaDevice(*driver, 0, error);
      break;
    case Which::RealCuda:
      if (!std::getenv("TANDEM_TEST_REAL_CUDA"))
        GTEST_SKIP() << "TANDEM_TEST_REAL_CUDA is not set";
      driver = CudaDriver::load("libcuda.so.1", error);
      ASSERT_TRUE(driver) << error;
      device = openCudaDevice(*driver, 0, error);
      break;
    }
    ASSERT_TRUE(device) << error;
  }
  std::unique_ptr<CudaDriver> driver;
  std::unique_ptr<Device> device;
};

TEST_P(DeviceConformance, AllocationsAreAlignedZeroedAndCounted) {
  std::string error;
  void *a = device->allocate(1000, kMaxDeviceAlignment, error);
  ASSERT_NE(a, nullptr) << error;
  void *b = device->allocate(0, 64, error);
  ASSERT_NE(b, nullptr) << error;
  EXPECT_NE(a, b);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % kMaxDeviceAlignment, 0u);
  EXPECT_EQ(device->allocate(64, 512, error), nullptr);
  EXPECT_EQ(error, "cannot allocate with an alignment of 512 bytes (a power "
                   "of two up to 256)");
  EXPECT_EQ(device->liveBytes(), 1000u);
  std::vector<unsigned char> back(1000, 0xff);
  ASSERT_TRUE(device->copyToHost(back.data(), a, back.size(), error)) << error;
  EXPECT_EQ(back, std::vector<unsigned char>(1000, 0));
  device->release(a);
  device->release(b);
  device->release(nullptr);
  EXPECT_EQ(device->liveBytes(), 0u);
  EXPECT_EQ(device->peakBytes(), 1000u);
}

// The driver's own count of the device's memory in use (the summary's
// device peak) sees an allocation, and the sampled peak keeps the most
// after it is freed; the host has no such count.
TEST_P(DeviceConformance, TheDriversCountSeesAnAllocation) {
  std::optional<uint64_t> before = device->driverUsedBytes();
  if (GetParam() == Which::Host) {
    EXPECT_FALSE(before);
    EXPECT_FALSE(device->sampleDriverPeak());
    return;
  }
  ASSERT_TRUE(before);
  constexpr uint64_t kBytes = 64ull << 20;
  std::string error;
  void *p = device->allocate(kBytes, 256, error);
  ASSERT_TRUE(p) << error;
  std::optional<uint64_t> during = device->driverUsedBytes();
  ASSERT_TRUE(during);
  EXPECT_GE(*during, *before + kBytes);
  std::optional<uint64_t> peak = device->sampleDriverPeak();
  ASSERT_TRUE(peak);
  EXPECT_GE(*peak, *during);
  device->release(p);
  EXPECT_LT(*device->driverUsedBytes(), *during);
  EXPECT_GE(*device->sampleDriverPeak(), *peak);
}

TEST_P(DeviceConformance, BytesRoundTripThroughEveryCopy) {
  std::string error;
  std::vector<unsigned char> data(777);
  std::iota(data.begin(), data.end(), 3);
  void *a = device->allocate(data.size(), 64, error);
  void *b = device->allocate(data.size(), 64, error);
  ASSERT_TRUE(a && b) << error;
  ASSERT_TRUE(device->copyToDevice(a, data.data(), data.size(), error))
      << error;
  ASSERT_TRUE(device->copyOnDevice(b, a, data.size(), error)) << error;
  // Part of the copy zeroed, through an offset pointer.
  ASSERT_TRUE(device->zero(static_cast<char *>(b) + 100, 50, error)) << error;
  ASSERT_TRUE(device->synchronize(error)) << error;
  std::vector<unsigned char> back(data.size());
  ASSERT_TRUE(device->copyToHost(back.data(), b, back.size(), error)) << error;
  std::fill(data.begin() + 100, data.begin() + 150, 0);
  EXPECT_EQ(back, data);
  device->release(a);
  device->release(b);
}

// A copy on a stream of its own runs after the work an event marks, and
// work that waits for the copy's event runs after the copy, without the
// host waiting for either (the transports' pattern, InProcessTransport).
// The fake GPU also shows that nothing else runs the copy: a missing wait
// reads the old bytes there.
TEST_P(DeviceConformance, EventsOrderWorkAcrossStreams) {
  std::string error;
  std::vector<unsigned char> data(1 << 20);
  std::iota(data.begin(), data.end(), 7);
  void *a = device->allocate(data.size(), 256, error);
  void *b = device->allocate(data.size(), 256, error);
  void *c = device->allocate(data.size(), 256, error);
  ASSERT_TRUE(a && b && c) << error;
  ASSERT_TRUE(device->copyToDevice(a, data.data(), data.size(), error))
      << error;
  void *stream = nullptr;
  ASSERT_TRUE(device->createStream(stream, error)) << error;
  EXPECT_EQ(stream == nullptr, GetParam() == Which::Host);
  std::shared_ptr<DeviceEvent> produced = DeviceEvent::create(*device, error);
  std::shared_ptr<DeviceEvent> copied = DeviceEvent::create(*device, error);
  ASSERT_TRUE(produced && copied) << error;
  ASSERT_TRUE(device->recordEvent(produced->get(), nullptr, error)) << error;
  ASSERT_TRUE(device->waitForEvent(stream, produced->get(), error)) << error;
  ASSERT_TRUE(device->copyOnDeviceAsync(b, a, data.size(), stream, error))
      << error;
  ASSERT_TRUE(device->recordEvent(copied->get(), stream, error)) << error;
  std::vector<unsigned char> back(data.size(), 1);
  if (GetParam() == Which::FakeCuda) {
    ASSERT_TRUE(device->copyToHost(back.data(), b, back.size(), error))
        << error;
    EXPECT_EQ(back, std::vector<unsigned char>(data.size(), 0))
        << "the fake ran a copy nothing waited for";
  }
  ASSERT_TRUE(device->waitForEvent(nullptr, copied->get(), error)) << error;
  ASSERT_TRUE(device->copyOnDevice(c, b, data.size(), error)) << error;
  ASSERT_TRUE(device->copyToHost(back.data(), c, back.size(), error)) << error;
  EXPECT_EQ(back, data);
  bool done = false;
  for (int k = 0; k < 1000000 && !done; ++k)
    ASSERT_TRUE(device->eventDone(copied->get(), done, error)) << error;
  EXPECT_TRUE(done);
  produced.reset();
  copied.reset();
  device->destroyStream(stream);
  for (void *p : {a, b, c})
    device->release(p);
}

// A graph runs the work captured on a stream each time it is launched,
// with the captured arguments: a copy, launched twice with new bytes in the
// source between, each launch followed by an event recorded outside the
// capture that the reader waits for. A plain record inside the capture is
// no node of the graph (CUDA's CU_EVENT_RECORD_EXTERNAL would make one):
// the fake, as the driver documents, then refuses waits for that event
// until it is recorded again outside (CUDA_ERROR_CAPTURED_EVENT).
// Capturing runs nothing (the fake shows it); the host captures no graphs.
TEST_P(DeviceConformance, AGraphReplaysItsCapture) {
  std::string error;
  void *stream = nullptr;
  ASSERT_TRUE(device->createStream(stream, error)) << error;
  if (GetParam() == Which::Host) {
    EXPECT_FALSE(device->beginCapture(stream, error));
    EXPECT_EQ(error, "the host captures no graphs");
    return;
  }
  const int32_t zero = 0;
  void *a = device->allocate(4, 4, error);
  void *b = device->allocate(4, 4, error);
  ASSERT_TRUE(a && b) << error;
  std::shared_ptr<DeviceEvent> done = DeviceEvent::create(*device, error);
  ASSERT_TRUE(done) << error;
  ASSERT_TRUE(device->beginCapture(stream, error)) << error;
  ASSERT_TRUE(device->copyOnDeviceAsync(b, a, 4, stream, error)) << error;
  ASSERT_TRUE(device->recordEvent(done->get(), stream, error)) << error;
  void *graph = nullptr;
  ASSERT_TRUE(device->endCapture(stream, graph, error)) << error;
  ASSERT_NE(graph, nullptr);
  if (GetParam() == Which::FakeCuda) {
    EXPECT_FALSE(device->waitForEvent(nullptr, done->get(), error));
    EXPECT_NE(error.find("CUDA_ERROR_CAPTURED_EVENT"), std::string::npos)
        << error;
  }
  for (int32_t value : {3, 4}) {
    ASSERT_TRUE(device->copyToDevice(a, &value, 4, error)) << error;
    int32_t back = -1;
    if (GetParam() == Which::FakeCuda) {
      ASSERT_TRUE(device->copyToHost(&back, b, 4, error)) << error;
      EXPECT_EQ(back, value == 3 ? zero : 3) << "the capture ran its copy";
    }
    ASSERT_TRUE(device->launchGraph(graph, stream, error)) << error;
    ASSERT_TRUE(device->recordEvent(done->get(), stream, error)) << error;
    ASSERT_TRUE(device->waitForEvent(nullptr, done->get(), error)) << error;
    ASSERT_TRUE(device->copyToHost(&back, b, 4, error)) << error;
    EXPECT_EQ(back, value);
  }
  device->destroyGraph(graph);
  done.reset();
  device->destroyStream(stream);
  device->release(a);
  device->release(b);
}

// A host function runs in stream order, and a capture records it: it does
// not run while captured, and runs at every launch of the graph.
TEST_P(DeviceConformance, AHostFunctionRunsInStreamOrderAndInAGraph) {
  std::string error;
  void *stream = nullptr;
  ASSERT_TRUE(device->createRankStream(stream, error)) << error;
  struct Counter {
    std::atomic<int> runs{0};
    static void add(void *self) { static_cast<Counter *>(self)->runs++; }
  } counter;
  auto drain = [&] {
    std::shared_ptr<DeviceEvent> done = DeviceEvent::create(*device, error);
    ASSERT_TRUE(done) << error;
    ASSERT_TRUE(device->recordEvent(done->get(), stream, error)) << error;
    bool finished = false;
    while (!finished)
      ASSERT_TRUE(device->eventDone(done->get(), finished, error)) << error;
  };
  ASSERT_TRUE(
      device->launchHostFunction(stream, &Counter::add, &counter, error))
      << error;
  drain();
  EXPECT_EQ(counter.runs, 1);
  if (GetParam() == Which::Host) {
    device->destroyStream(stream);
    return;
  }
  ASSERT_TRUE(device->beginCapture(stream, error)) << error;
  ASSERT_TRUE(
      device->launchHostFunction(stream, &Counter::add, &counter, error))
      << error;
  void *graph = nullptr;
  ASSERT_TRUE(device->endCapture(stream, graph, error)) << error;
  drain();
  EXPECT_EQ(counter.runs, 1) << "a captured host function ran";
  for (int launch = 1; launch <= 2; ++launch) {
    ASSERT_TRUE(device->launchGraph(graph, stream, error)) << error;
    drain();
    EXPECT_EQ(counter.runs, 1 + launch);
  }
  device->destroyGraph(graph);
  device->destroyStream(stream);
}

INSTANTIATE_TEST_SUITE_P(Devices, DeviceConformance,
                         ::testing::Values(Which::Host, Which::FakeCuda,
                                           Which::RealCuda),
                         [](const ::testing::TestParamInfo<Which> &info) {
                           switch (info.param) {
                           case Which::Host:
                             return "Host";
                           case Which::FakeCuda:
                             return "FakeCuda";
                           default:
                             return "RealCuda";
                           }
                         });

TEST(CudaDriver, DescribesTheGpu) {
  std::string error;
  auto driver = loadFake(error);
  ASSERT_TRUE(driver) << error;
  EXPECT_EQ(driver->version(), 13000);
  EXPECT_EQ(CudaDriver::versionName(driver->version()), "13.0");
  EXPECT_EQ(driver->deviceCount(), 1);
  auto device = openCudaDevice(*driver, 0, error);
  ASSERT_TRUE(device) << error;
  EXPECT_EQ(device->kind(), DeviceKind::Cuda);
  EXPECT_EQ(device->describe(),
            "GPU 0 (Fake GPU, compute capability 9.0, 1.0 GiB)");
}

TEST(CudaDriver, NoDriverIsSaidSo) {
  std::string error;
  EXPECT_FALSE(CudaDriver::load("libtandem-no-such-driver.so.1", error));
  EXPECT_NE(error.find("no CUDA driver: cannot load "
                       "'libtandem-no-such-driver.so.1'"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("TANDEM_CUDA_DRIVER"), std::string::npos) << error;
}

TEST(CudaDriver, ALibraryThatIsNoDriverIsNamed) {
  std::string error;
  EXPECT_FALSE(CudaDriver::load("libm.so.6", error));
  EXPECT_EQ(error, "CUDA driver 'libm.so.6' has no cuGetErrorName (a driver "
                   "older than CUDA 13.0?)");
}

TEST(CudaDriver, AnOldDriverIsTooOld) {
  ScopedEnv version("TANDEM_FAKE_CUDA_VERSION", "12040");
  std::string error;
  EXPECT_FALSE(loadFake(error));
  EXPECT_EQ(error.rfind("CUDA driver 12.4 ('", 0), 0u) << error;
  EXPECT_NE(error.find("') is too old: tandemc's CUDA libraries need 13.0 or "
                       "newer"),
            std::string::npos)
      << error;
}

TEST(CudaDriver, NoDeviceIsNoGpu) {
  std::string error;
  {
    ScopedEnv devices("TANDEM_FAKE_CUDA_DEVICES", "0");
    EXPECT_FALSE(loadFake(error));
    EXPECT_EQ(error.rfind("no GPU: the CUDA driver ('", 0), 0u) << error;
    EXPECT_NE(error.find("', 13.0) finds no device"), std::string::npos)
        << error;
  }
  {
    // A machine with the driver and no GPU: cuInit says
    // CUDA_ERROR_NO_DEVICE.
    ScopedEnv init("TANDEM_FAKE_CUDA_INIT", "100");
    error.clear();
    EXPECT_FALSE(loadFake(error));
    EXPECT_EQ(error.rfind("no GPU: ", 0), 0u) << error;
  }
  {
    ScopedEnv init("TANDEM_FAKE_CUDA_INIT", "999");
    error.clear();
    EXPECT_FALSE(loadFake(error));
    EXPECT_NE(error.find("cuInit: CUDA error (999)"), std::string::npos)
        << error;
  }
}

TEST(CudaDriver, AMissingGpuOrdinalIsNamed) {
  ScopedEnv devices("TANDEM_FAKE_CUDA_DEVICES", "2");
  std::string error;
  auto driver = loadFake(error);
  ASSERT_TRUE(driver) << error;
  EXPECT_TRUE(openCudaDevice(*driver, 1, error)) << error;
  EXPECT_FALSE(openCudaDevice(*driver, 2, error));
  EXPECT_EQ(error, "GPU 2 does not exist: the CUDA driver finds 2 devices");
}

// The CUDA runtime and cuBLASLt a GPU library needs: from the folders of
// TANDEM_CUDA_LIBRARY_PATH first (a Python environment's on the GPU
// machine), by absolute path. Here, the toolkit's copies.
TEST(CudaLibraries, LoadFromTheSearchPathFirst) {
  const std::string folder = "/usr/local/cuda/lib64";
  if (!std::ifstream(folder + "/libcublasLt.so.13"))
    GTEST_SKIP() << "no CUDA 13 toolkit in " << folder;
  ScopedEnv path("TANDEM_CUDA_LIBRARY_PATH",
                 ("/nonexistent:" + folder).c_str());
  std::string error;
  const CudaLibraries *libraries = CudaLibraries::open(error);
  ASSERT_TRUE(libraries) << error;
  EXPECT_EQ(libraries->cudartPath(), folder + "/libcudart.so.13");
  EXPECT_EQ(libraries->cublasLtPath(), folder + "/libcublasLt.so.13");
  EXPECT_GE(libraries->cublasLtVersion(), kMinimumCublasLtVersion);
}

TEST(CudaDevice, FailuresNameTheGpuAndTheCall) {
  std::string error;
  auto driver = loadFake(error);
  ASSERT_TRUE(driver) << error;
  auto device = openCudaDevice(*driver, 0, error);
  ASSERT_TRUE(device) << error;
  // More than the GPU holds.
  EXPECT_EQ(device->allocate(uint64_t(1) << 40, 256, error), nullptr);
  EXPECT_EQ(error, "cannot allocate 1099511627776 bytes on GPU 0 (Fake GPU, "
                   "compute capability 9.0, 1.0 GiB): cuMemAlloc: "
                   "CUDA_ERROR_OUT_OF_MEMORY (2)");
  EXPECT_EQ(device->liveBytes(), 0u);
  // A host address handed over as the device's: the driver refuses it
  // (the fake checks what a GPU would fault on).
  std::vector<char> host(64), other(64);
  EXPECT_FALSE(device->copyToHost(other.data(), host.data(), 64, error));
  EXPECT_NE(error.find("cuMemcpyDtoH: CUDA_ERROR_INVALID_VALUE (1)"),
            std::string::npos)
      << error;
}

} // namespace

// The fake GPU's queued work is "not ready" when first asked about and runs
// then, as a GPU finishes it later; a synchronization runs it too. A wait
// for a destroyed event names the call.
TEST(CudaDevice, TheFakeRunsQueuedWorkWhenAsked) {
  std::string error;
  auto driver = loadFake(error);
  ASSERT_TRUE(driver) << error;
  auto device = openCudaDevice(*driver, 0, error);
  ASSERT_TRUE(device) << error;
  int32_t value = 42, back = 0;
  void *a = device->allocate(4, 4, error);
  void *b = device->allocate(4, 4, error);
  void *stream = nullptr;
  ASSERT_TRUE(a && b && device->createStream(stream, error)) << error;
  ASSERT_TRUE(device->copyToDevice(a, &value, 4, error)) << error;
  void *event = nullptr;
  ASSERT_TRUE(device->createEvent(event, /*timing=*/false, error)) << error;
  bool done = false;
  ASSERT_TRUE(device->eventDone(event, done, error)) << error;
  EXPECT_TRUE(done) << "an event never recorded is done";
  ASSERT_TRUE(device->copyOnDeviceAsync(b, a, 4, stream, error)) << error;
  ASSERT_TRUE(device->recordEvent(event, stream, error)) << error;
  ASSERT_TRUE(device->eventDone(event, done, error)) << error;
  EXPECT_FALSE(done);
  ASSERT_TRUE(device->eventDone(event, done, error)) << error;
  EXPECT_TRUE(done);
  ASSERT_TRUE(device->copyToHost(&back, b, 4, error)) << error;
  EXPECT_EQ(back, 42);

  value = 7;
  ASSERT_TRUE(device->copyToDevice(a, &value, 4, error)) << error;
  ASSERT_TRUE(device->copyOnDeviceAsync(b, a, 4, stream, error)) << error;
  ASSERT_TRUE(device->synchronize(error)) << error;
  ASSERT_TRUE(device->copyToHost(&back, b, 4, error)) << error;
  EXPECT_EQ(back, 7);

  device->destroyEvent(event);
  EXPECT_FALSE(device->waitForEvent(stream, event, error));
  EXPECT_EQ(error, "GPU 0 (Fake GPU, compute capability 9.0, 1.0 GiB): "
                   "cuStreamWaitEvent: CUDA_ERROR_INVALID_HANDLE (400)");
  device->destroyStream(stream);
  device->release(a);
  device->release(b);
}

// A timeline's spans land on the host's clock where the device ran them:
// a span of the default stream around 5 ms of the host's time (the fake's
// blocking streams run with the host), in the order begun. A span never
// ended, and timing on the host, are errors.
TEST(DeviceTimeline, SpansLandOnTheHostClock) {
  std::string error;
  auto driver = loadFake(error);
  ASSERT_TRUE(driver) << error;
  auto device = openCudaDevice(*driver, 0, error);
  ASSERT_TRUE(device) << error;
  DeviceTimeline timeline(*device);
  for (int step = 0; step < 2; ++step) {
    double before = monotonicMicroseconds();
    int64_t outer = timeline.begin(nullptr, "outer", "device", error);
    ASSERT_GE(outer, 0) << error;
    // The outer span's record ran between `before` and `begun`.
    double begun = monotonicMicroseconds();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    int64_t inner = timeline.begin(nullptr, "inner", "device", error);
    ASSERT_GE(inner, 0) << error;
    ASSERT_TRUE(timeline.end(inner, nullptr, error)) << error;
    ASSERT_TRUE(timeline.end(outer, nullptr, error)) << error;
    double after = monotonicMicroseconds();
    std::vector<DeviceSpan> spans;
    ASSERT_TRUE(timeline.collect(nullptr, spans, error)) << error;
    ASSERT_EQ(spans.size(), 2u);
    EXPECT_EQ(spans[0].name, "outer");
    EXPECT_EQ(spans[1].name, "inner");
    EXPECT_GE(spans[0].duration, 4900);
    // Float milliseconds: a microsecond of rounding either way. Placed
    // late by up to the uncertainty (the time from the anchor's record to
    // the host seeing it done, which a preempted thread stretches), so the
    // end may pass `after` by that much.
    EXPECT_GE(spans[0].start, before - 1);
    EXPECT_LE(spans[0].start + spans[0].duration,
              after + spans[0].uncertainty + 1);
    EXPECT_GE(spans[1].start, spans[0].start + 4900);
    EXPECT_LE(spans[1].start + spans[1].duration,
              spans[0].start + spans[0].duration + 1);
    // Placed late by at most the uncertainty, which one collection's
    // spans share: start - uncertainty is no later than the truth.
    EXPECT_GE(spans[0].uncertainty, 0);
    EXPECT_EQ(spans[0].uncertainty, spans[1].uncertainty);
    EXPECT_LE(spans[0].start - spans[0].uncertainty, begun + 1);
  }
  ASSERT_GE(timeline.begin(nullptr, "open", "device", error), 0) << error;
  std::vector<DeviceSpan> spans;
  EXPECT_FALSE(timeline.collect(nullptr, spans, error));
  EXPECT_EQ(error, "device span 'open' was never ended");
  std::unique_ptr<Device> host = makeHostDevice();
  double us = 0;
  EXPECT_FALSE(host->elapsedMicroseconds(nullptr, nullptr, us, error));
  EXPECT_EQ(error, "the host times no events");
}

// As on a GPU, the fake refuses the legacy stream while a stream captures,
// and the capture then fails whole.
TEST(CudaDevice, TheLegacyStreamBreaksACapture) {
  std::string error;
  auto driver = loadFake(error);
  ASSERT_TRUE(driver) << error;
  auto device = openCudaDevice(*driver, 0, error);
  ASSERT_TRUE(device) << error;
  void *stream = nullptr;
  void *a = device->allocate(4, 4, error);
  ASSERT_TRUE(a && device->createStream(stream, error)) << error;
  ASSERT_TRUE(device->beginCapture(stream, error)) << error;
  const int32_t value = 1;
  EXPECT_FALSE(device->copyToDevice(a, &value, 4, error));
  EXPECT_EQ(error, "GPU 0 (Fake GPU, compute capability 9.0, 1.0 GiB): "
                   "cuMemcpyHtoD: CUDA_ERROR_STREAM_CAPTURE_IMPLICIT (906)");
  void *graph = nullptr;
  EXPECT_FALSE(device->endCapture(stream, graph, error));
  EXPECT_EQ(graph, nullptr);
  EXPECT_EQ(error, "GPU 0 (Fake GPU, compute capability 9.0, 1.0 GiB): "
                   "cuStreamEndCapture: CUDA_ERROR_STREAM_CAPTURE_INVALIDATED "
                   "(901)");
  // The stream is usable again.
  ASSERT_TRUE(device->copyToDevice(a, &value, 4, error)) << error;
  device->destroyStream(stream);
  device->release(a);
}

// Ranks on threads of one GPU: a synchronous copy (here another rank's step
// input) while a rank captures would join its blocking stream and break
// the capture, so the device holds it until the capture ends. Without
// that exclusion the fake fails the capture (CUDA_ERROR_STREAM_CAPTURE_
// IMPLICIT), as a GPU does. Two ranks (threads) may capture at once.
TEST(CudaDevice, ACaptureHoldsOtherThreadsSynchronousCalls) {
  std::string error;
  auto driver = loadFake(error);
  ASSERT_TRUE(driver) << error;
  auto device = openCudaDevice(*driver, 0, error);
  ASSERT_TRUE(device) << error;
  void *a = device->allocate(4, 4, error), *b = device->allocate(4, 4, error);
  void *first = nullptr, *second = nullptr;
  ASSERT_TRUE(a && b && device->createRankStream(first, error) &&
              device->createRankStream(second, error))
      << error;
  ASSERT_TRUE(device->beginCapture(first, error)) << error;
  ASSERT_TRUE(device->copyOnDeviceAsync(b, a, 4, first, error)) << error;
  // The second rank captures on its own thread until told to end.
  void *graphs[2] = {nullptr, nullptr};
  std::atomic<int> secondState{0}; // 1 capturing, 2 end it, 3 ended
  std::string secondError;
  bool secondOk = false;
  std::thread secondRank([&] {
    secondOk = device->beginCapture(second, secondError);
    secondState = 1;
    while (secondState != 2)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    secondOk = secondOk && device->endCapture(second, graphs[1], secondError);
    secondState = 3;
  });
  while (secondState != 1)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::atomic<bool> copied{false};
  std::string copyError;
  std::thread other([&] {
    const int32_t value = 7;
    copied = device->copyToDevice(a, &value, 4, copyError);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(copied) << "the copy ran during the captures";
  secondState = 2;
  while (secondState != 3)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  secondRank.join();
  EXPECT_TRUE(secondOk) << secondError;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(copied) << "the copy ran during the first capture";
  EXPECT_TRUE(device->endCapture(first, graphs[0], error)) << error;
  other.join();
  EXPECT_TRUE(copied) << copyError;
  // The captured copy runs at the launch, after the other thread's.
  ASSERT_TRUE(device->launchGraph(graphs[0], first, error)) << error;
  ASSERT_TRUE(device->synchronize(error)) << error;
  int32_t back = 0;
  ASSERT_TRUE(device->copyToHost(&back, b, 4, error)) << error;
  EXPECT_EQ(back, 7);
  for (void *graph : graphs)
    device->destroyGraph(graph);
  device->destroyStream(first);
  device->destroyStream(second);
  device->release(a);
  device->release(b);
}
