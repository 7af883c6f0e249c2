//===- TransportConformanceTest.cpp - the conformance body in process -----===//
//
// TransportConformance.h's bodies with two ranks as threads over a fresh
// InProcessTransport each.
//
//===----------------------------------------------------------------------===//

#include "TransportConformance.h"

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

TEST(InProcessTransportConformance, PairsInPostingOrder) {
  runInProcess(conformance::pairsInPostingOrder);
}
TEST(InProcessTransportConformance, ChannelsAreSeparate) {
  runInProcess(conformance::channelsAreSeparate);
}
TEST(InProcessTransportConformance, BothWaysInOneGroup) {
  runInProcess(conformance::bothWaysInOneGroup);
}
TEST(InProcessTransportConformance, ALargerMessageFails) {
  runInProcess(conformance::aLargerMessageFails);
}
TEST(InProcessTransportConformance, ASilentPeerIsNamed) {
  runInProcess(conformance::aSilentPeerIsNamed);
}
