//===- InProcessTransport.cpp - ranks as threads, rendezvous --------------===//

#include "tandem/Runtime/Transport.h"

#include "tandem/Runtime/Device.h"

#include <cstring>
#include <sstream>

using namespace tandem::runtime;

InProcessTransport::InProcessTransport(int64_t ranks, Device *device)
    : ranks(ranks),
      device(device && device->kind() != DeviceKind::Host ? device : nullptr),
      finished(ranks, false), waiting(ranks, false), remaining(ranks, 0),
      posted(ranks, nullptr) {}

bool InProcessTransport::complete(Pending send, Pending recv,
                                  std::string &error) {
  const TransportOp &s = *send.op;
  TransportOp &r = *recv.op;
  if (s.bytes != r.bytes || s.dtype != r.dtype || s.wire != r.wire) {
    std::ostringstream os;
    os << "mismatched pair on channel " << s.channel << ": rank " << send.rank
       << " " << s.description << " (" << elementTypeName(s.dtype) << ", "
       << s.bytes << " bytes, wire " << elementTypeName(s.wire) << ") vs rank "
       << recv.rank << " " << r.description << " (" << elementTypeName(r.dtype)
       << ", " << r.bytes << " bytes, wire " << elementTypeName(r.wire) << ")";
    error = os.str();
    return false;
  }
  std::string copyError;
  if (s.bytes && !device)
    std::memcpy(r.recvData, s.sendData, s.bytes);
  else if (s.bytes &&
           !device->copyOnDevice(r.recvData, s.sendData, s.bytes, copyError)) {
    error = "rank " + std::to_string(send.rank) + " " + s.description +
            " to rank " + std::to_string(recv.rank) + ": " + copyError;
    return false;
  }
  send.op->completed = true;
  r.completed = true;
  countCompleted(send.rank, s);
  countCompleted(recv.rank, r);
  --remaining[send.rank];
  --remaining[recv.rank];
  return true;
}

void InProcessTransport::checkDeadlock() {
  if (aborted)
    return;
  bool anyWaiting = false;
  for (int64_t r = 0; r < ranks; ++r) {
    if (finished[r])
      continue;
    if (!waiting[r] || remaining[r] == 0)
      return;
    anyWaiting = true;
  }
  if (!anyWaiting)
    return;
  std::ostringstream os;
  os << "deadlock under rendezvous semantics:";
  for (int64_t r = 0; r < ranks; ++r) {
    if (finished[r] || !posted[r])
      continue;
    for (const TransportOp &op : *posted[r]) {
      if (op.completed)
        continue;
      os << "\n  rank " << r << " waits in " << op.description
         << (op.send ? " to" : " from") << " rank " << op.peer << " on channel "
         << op.channel << ": rank " << op.peer
         << (finished[op.peer] ? " has finished its list"
                               : " has not posted the matching op");
    }
  }
  aborted = true;
  abortReason = os.str();
  changed.notify_all();
}

bool InProcessTransport::exchange(int64_t rank, std::vector<TransportOp> &group,
                                  std::string &error) {
  std::unique_lock<std::mutex> lock(mutex);
  if (aborted) {
    error = abortReason;
    return false;
  }
  posted[rank] = &group;
  remaining[rank] += static_cast<int64_t>(group.size());
  for (TransportOp &op : group) {
    op.completed = false;
    if (op.peer < 0 || op.peer >= ranks || op.peer == rank) {
      error = op.description + ": peer " + std::to_string(op.peer) +
              " is not another rank of the grid";
      aborted = true;
      abortReason = "rank " + std::to_string(rank) + ": " + error;
      changed.notify_all();
      posted[rank] = nullptr;
      return false;
    }
    Key key = op.send ? Key{rank, op.peer, op.channel}
                      : Key{op.peer, rank, op.channel};
    auto &partners = op.send ? recvs[key] : sends[key];
    if (partners.empty()) {
      (op.send ? sends[key] : recvs[key]).push_back({rank, &op});
      continue;
    }
    Pending partner = partners.front();
    partners.pop_front();
    bool ok = op.send ? complete({rank, &op}, partner, error)
                      : complete(partner, {rank, &op}, error);
    if (!ok) {
      aborted = true;
      abortReason = error;
      changed.notify_all();
      posted[rank] = nullptr;
      return false;
    }
  }
  changed.notify_all();
  waiting[rank] = true;
  while (remaining[rank] > 0 && !aborted) {
    checkDeadlock();
    if (aborted)
      break;
    changed.wait(lock);
  }
  waiting[rank] = false;
  posted[rank] = nullptr;
  if (remaining[rank] > 0 || aborted) {
    error = abortReason;
    return false;
  }
  return true;
}

void InProcessTransport::finish(int64_t rank) {
  std::lock_guard<std::mutex> lock(mutex);
  finished[rank] = true;
  checkDeadlock();
  changed.notify_all();
}

void InProcessTransport::abort(const std::string &reason) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!aborted) {
    aborted = true;
    abortReason = reason;
  }
  changed.notify_all();
}
