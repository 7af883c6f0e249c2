//===- NcclTransportTest.cpp - the NCCL transport over a fake NCCL --------===//
//
// TransportConformance.h's bodies with two ranks as threads, each with its
// own NcclTransport on a fake GPU (FakeCudaDriver.cpp), over the fake NCCL
// (FakeNccl.cpp) loaded through NcclLibrary's dlopen path; then what only
// NCCL has: one order per rank pair across channels, the library's errors,
// a rank that never joins.
//
//===----------------------------------------------------------------------===//

#include "ScopedEnv.h"
#include "TransportConformance.h"

#include "tandem/Runtime/CudaDriver.h"
#include "tandem/Runtime/Device.h"
#include "tandem/Runtime/NcclTransport.h"

#include <thread>

using namespace tandem::runtime;

namespace {

/// The fake GPU every rank shares, and the fake NCCL.
struct FakeStack {
  std::unique_ptr<CudaDriver> driver;
  std::unique_ptr<Device> device;
  std::unique_ptr<NcclLibrary> nccl;
};

FakeStack &fakeStack() {
  static FakeStack stack = [] {
    FakeStack s;
    std::string error;
    s.driver = CudaDriver::load(TANDEM_FAKE_CUDA_DRIVER, error);
    EXPECT_TRUE(s.driver) << error;
    if (s.driver)
      s.device = openCudaDevice(*s.driver, 0, error);
    EXPECT_TRUE(s.device) << error;
    s.nccl = NcclLibrary::load(TANDEM_FAKE_NCCL, error);
    EXPECT_TRUE(s.nccl) << error;
    return s;
  }();
  return stack;
}

/// Two ranks as threads, each joining a fresh communicator.
void runOverNccl(void (*body)(Transport &, int64_t),
                 double timeoutSeconds = 30) {
  FakeStack &stack = fakeStack();
  ASSERT_TRUE(stack.device && stack.nccl);
  NcclUniqueId id;
  ASSERT_EQ(stack.nccl->api().getUniqueId(&id), kNcclSuccess);
  auto rank = [&](int64_t r) {
    std::string error;
    auto transport = NcclTransport::create(*stack.nccl, *stack.device, id, r, 2,
                                           timeoutSeconds, error);
    ASSERT_TRUE(transport) << error;
    EXPECT_EQ(transport->payloadDevice(), stack.device.get());
    body(*transport, r);
  };
  std::thread other(rank, 1);
  rank(0);
  other.join();
}

/// Two messages of different sizes sent on channels 1 then 2 and received
/// on 2 then 1: a program that tags pair by channel, NCCL by issue order.
void misorderedPair(Transport &transport, int64_t rank, bool &ok,
                    std::string &error) {
  const int32_t values[3] = {1, 2, 3};
  int32_t got[3] = {0, 0, 0};
  TransportOp two = rank == 0 ? conformance::sendOf(1, 2, values[1], "two")
                              : conformance::recvOf(0, 2, got[1], "two");
  two.bytes = 2 * sizeof(int32_t);
  std::vector<TransportOp> group;
  if (rank == 0)
    group = {conformance::sendOf(1, 1, values[0], "one"), two};
  else
    group = {two, conformance::recvOf(0, 1, got[0], "one")};
  ok = transport.exchange(rank, group, error);
  if (ok && rank == 1) {
    EXPECT_EQ(got[0], 1);
    EXPECT_EQ(got[1], 2);
    EXPECT_EQ(got[2], 3);
  }
  transport.finish(rank);
}

} // namespace

TANDEM_TRANSPORT_CONFORMANCE_TESTS_UNTAGGED(NcclTransportConformance,
                                            runOverNccl, 0.2)

TEST(NcclTransport, AMisorderedProgramIsCaught) {
  // Channels are separate queues in process: the program runs.
  {
    InProcessTransport transport(2);
    bool ok[2] = {};
    std::string errors[2];
    std::thread other([&] { misorderedPair(transport, 1, ok[1], errors[1]); });
    misorderedPair(transport, 0, ok[0], errors[0]);
    other.join();
    EXPECT_TRUE(ok[0] && ok[1]) << errors[0] << errors[1];
  }
  // NCCL pairs in issue order: the one-element send meets the
  // two-element receive, and both ranks fail saying why.
  FakeStack &stack = fakeStack();
  ASSERT_TRUE(stack.device && stack.nccl);
  NcclUniqueId id;
  ASSERT_EQ(stack.nccl->api().getUniqueId(&id), kNcclSuccess);
  bool ok[2] = {true, true};
  std::string errors[2];
  auto rank = [&](int64_t r) {
    std::string error;
    auto transport =
        NcclTransport::create(*stack.nccl, *stack.device, id, r, 2, 30, error);
    ASSERT_TRUE(transport) << error;
    misorderedPair(*transport, r, ok[r], errors[r]);
  };
  std::thread other(rank, 1);
  rank(0);
  other.join();
  for (int r = 0; r < 2; ++r) {
    EXPECT_FALSE(ok[r]);
    EXPECT_NE(errors[r].find("match in issue order"), std::string::npos)
        << errors[r];
    // Whichever message rank 1 finds first: the first (one element
    // against two) or the second (two against one).
    bool first = errors[r].find("invalid usage (5): rank 0's send of 1 x "
                                "int32 to rank 1 met rank 1's recv of 2 x "
                                "int32") != std::string::npos;
    bool second = errors[r].find("invalid usage (5): rank 0's send of 2 x "
                                 "int32 to rank 1 met rank 1's recv of 1 x "
                                 "int32") != std::string::npos;
    EXPECT_TRUE(first || second) << errors[r];
  }
  EXPECT_NE(errors[0].find("send of one to rank 1"), std::string::npos)
      << errors[0];
  EXPECT_NE(errors[1].find("recv of two from rank 0"), std::string::npos)
      << errors[1];
}

TEST(NcclTransport, ARankThatNeverJoinsTimesOut) {
  FakeStack &stack = fakeStack();
  ASSERT_TRUE(stack.device && stack.nccl);
  NcclUniqueId id;
  ASSERT_EQ(stack.nccl->api().getUniqueId(&id), kNcclSuccess);
  std::string error;
  EXPECT_FALSE(
      NcclTransport::create(*stack.nccl, *stack.device, id, 0, 2, 0.2, error));
  EXPECT_EQ(error, "NCCL rank 0 of 2: the communicator did not form: no "
                   "progress for 0.2 s (the --timeout)");
}

TEST(NcclTransport, OnlyGpuMemory) {
  FakeStack &stack = fakeStack();
  ASSERT_TRUE(stack.nccl);
  std::unique_ptr<Device> host = makeHostDevice();
  // Refused before NCCL is asked: no communicator is needed.
  NcclUniqueId id = {};
  std::string error;
  EXPECT_FALSE(NcclTransport::create(*stack.nccl, *host, id, 0, 1, 1, error));
  EXPECT_EQ(error, "NCCL rank 0 of 1: NCCL moves GPU memory, and the rank "
                   "runs on the host");
  EXPECT_FALSE(
      NcclTransport::create(*stack.nccl, *stack.device, id, 2, 2, 1, error));
  EXPECT_EQ(error, "NCCL rank 2 of 2: not a rank of the communicator");
}

TEST(NcclTransport, ASelfSendOrWireConversionIsRefused) {
  FakeStack &stack = fakeStack();
  ASSERT_TRUE(stack.device && stack.nccl);
  NcclUniqueId id;
  ASSERT_EQ(stack.nccl->api().getUniqueId(&id), kNcclSuccess);
  std::string error;
  auto transport =
      NcclTransport::create(*stack.nccl, *stack.device, id, 0, 1, 1, error);
  ASSERT_TRUE(transport) << error;
  const int32_t value = 4;
  std::vector<TransportOp> self = {conformance::sendOf(0, 1, value, "me")};
  EXPECT_FALSE(transport->exchange(0, self, error));
  EXPECT_NE(error.find("peer 0 is not another rank"), std::string::npos)
      << error;
  std::vector<TransportOp> cast = {conformance::sendOf(1, 1, value, "cast")};
  cast[0].wire = ElementType::BF16;
  EXPECT_FALSE(transport->exchange(0, cast, error));
  EXPECT_NE(error.find("wire conversion is not supported"), std::string::npos)
      << error;
}

TEST(NcclLibrary, SaysWhatIsMissingOrTooOld) {
  std::string error;
  EXPECT_FALSE(NcclLibrary::load("libtandem-no-such-nccl.so.2", error));
  EXPECT_EQ(
      error.rfind("no NCCL: cannot load 'libtandem-no-such-nccl.so.2'", 0), 0u)
      << error;
  EXPECT_FALSE(NcclLibrary::load("libm.so.6", error));
  EXPECT_NE(error.find("has no ncclGetVersion"), std::string::npos) << error;
  {
    ScopedEnv old("TANDEM_FAKE_NCCL_VERSION", "21203");
    EXPECT_FALSE(NcclLibrary::load(TANDEM_FAKE_NCCL, error));
    EXPECT_NE(error.find("NCCL 2.12.3 ("), std::string::npos) << error;
    EXPECT_NE(error.find("is too old: the NCCL transport needs 2.18.0 or "
                         "newer"),
              std::string::npos)
        << error;
  }
  auto nccl = NcclLibrary::load(TANDEM_FAKE_NCCL, error);
  ASSERT_TRUE(nccl) << error;
  EXPECT_EQ(nccl->version(), 22809);
  EXPECT_EQ(NcclLibrary::versionName(nccl->version()), "2.28.9");
  // Before 2.9 NCCL's code had a thousand per major version.
  EXPECT_EQ(NcclLibrary::versionName(2804), "2.8.4");
  EXPECT_EQ(NcclLibrary::versionName(20903), "2.9.3");
}

TEST(NcclLibrary, ElementTypesKeepTheirCounts) {
  size_t bytes = 0;
  EXPECT_EQ(ncclDataTypeOf(ElementType::BF16, bytes), 9);
  EXPECT_EQ(bytes, 2u);
  EXPECT_EQ(ncclDataTypeOf(ElementType::F32, bytes), 7);
  EXPECT_EQ(bytes, 4u);
  // NCCL 2.18 has no f8 types: the bytes travel as uint8.
  EXPECT_EQ(ncclDataTypeOf(ElementType::F8E4M3FN, bytes), 1);
  EXPECT_EQ(bytes, 1u);
}
