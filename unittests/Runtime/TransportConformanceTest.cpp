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

TANDEM_TRANSPORT_CONFORMANCE_TESTS(InProcessTransportConformance, runInProcess)
