//===- Transport.cpp - what every transport shares ------------------------===//

#include "tandem/Runtime/Transport.h"

using namespace tandem::runtime;

Transport::~Transport() = default;

PeerBytes Transport::bytesWith(int64_t rank, int64_t peer) const {
  std::lock_guard<std::mutex> lock(countMutex);
  auto found = counts.find({rank, peer});
  return found == counts.end() ? PeerBytes() : found->second;
}

void Transport::countCompleted(int64_t rank, const TransportOp &op) {
  std::lock_guard<std::mutex> lock(countMutex);
  PeerBytes &peer = counts[{rank, op.peer}];
  (op.send ? peer.sent : peer.received) += op.bytes;
}
