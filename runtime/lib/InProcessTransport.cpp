//===- InProcessTransport.cpp - ranks as threads, rendezvous --------------===//

#include "tandem/Runtime/Transport.h"

#include "tandem/Runtime/Device.h"

#include <algorithm>
#include <cstring>
#include <sstream>

using namespace tandem::runtime;

InProcessTransport::InProcessTransport(int64_t ranks, Device *device)
    : ranks(ranks),
      device(device && device->kind() != DeviceKind::Host ? device : nullptr),
      finished(ranks, false), waiting(ranks, false), remaining(ranks, 0),
      posted(ranks, nullptr), inCollective(ranks, nullptr) {}

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

namespace {

std::string membersText(const std::vector<int64_t> &members) {
  std::string text;
  for (int64_t member : members)
    text += (text.empty() ? "" : ", ") + std::to_string(member);
  return text;
}

} // namespace

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
    if (Instance *instance = inCollective[r]) {
      os << "\n  rank " << r << " waits in " << instance->first.description
         << " over ranks {" << membersText(instance->first.group)
         << "}: not reached by";
      for (int64_t member : instance->first.group)
        if (!instance->arrived.count(member))
          os << " rank " << member
             << (finished[member] ? " (finished its list)" : "");
    }
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

void InProcessTransport::reset() {
  std::lock_guard<std::mutex> lock(mutex);
  finished.assign(ranks, false);
  waiting.assign(ranks, false);
  remaining.assign(ranks, 0);
  posted.assign(ranks, nullptr);
  inCollective.assign(ranks, nullptr);
  sends.clear();
  recvs.clear();
  collectives.clear();
  entered.clear();
  aborted = false;
  abortReason.clear();
}

void InProcessTransport::abort(const std::string &reason) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!aborted) {
    aborted = true;
    abortReason = reason;
  }
  changed.notify_all();
}

void InProcessTransport::abortLocked(const std::string &reason) {
  if (!aborted) {
    aborted = true;
    abortReason = reason;
  }
  changed.notify_all();
}

bool InProcessTransport::completeCollective(Instance &instance,
                                            std::string &error) {
  const CollectiveOp &op = instance.first;
  uint64_t bytes = op.bytes;
  if (!bytes)
    return true;
  if (op.kind == CollectiveOp::Kind::Broadcast) {
    const void *source = instance.arrived.at(op.root)->data;
    for (auto &[member, theirs] : instance.arrived) {
      if (member == op.root)
        continue;
      if (!device)
        std::memcpy(theirs->data, source, bytes);
      else if (!device->copyOnDevice(theirs->data, source, bytes, error))
        return false;
    }
    return true;
  }
  // In group order, on the host (a device's values are copied out and the
  // result back: the runtime has no kernels of its own).
  std::vector<uint8_t> result(bytes), value(bytes);
  auto read = [&](int64_t member, void *into) {
    const void *from = instance.arrived.at(member)->data;
    if (!device) {
      std::memcpy(into, from, bytes);
      return true;
    }
    return device->copyToHost(into, from, bytes, error);
  };
  if (!read(op.group.front(), result.data()))
    return false;
  for (size_t k = 1; k < op.group.size(); ++k)
    if (!read(op.group[k], value.data()) ||
        !foldCollective(op.reduction, op.dtype, result.data(), value.data(),
                        bytes, error))
      return false;
  for (auto &[member, theirs] : instance.arrived) {
    if (!device)
      std::memcpy(theirs->data, result.data(), bytes);
    else if (!device->copyToDevice(theirs->data, result.data(), bytes, error))
      return false;
  }
  return true;
}

bool InProcessTransport::collective(int64_t rank, CollectiveOp &op,
                                    std::string &error) {
  std::unique_lock<std::mutex> lock(mutex);
  if (aborted) {
    error = abortReason;
    return false;
  }
  std::vector<int64_t> members;
  if (!collectiveMembers(rank, ranks, op, members, error)) {
    abortLocked(error);
    return false;
  }
  auto &sequence = collectives[members];
  size_t index = entered[{rank, members}]++;
  if (index == sequence.size()) {
    sequence.push_back(std::make_unique<Instance>());
    sequence.back()->first = op;
    sequence.back()->firstRank = rank;
  }
  Instance &instance = *sequence[index];
  const CollectiveOp &first = instance.first;
  std::string differ;
  if (first.kind != op.kind)
    differ = "kind";
  else if (first.group != op.group)
    differ = "group order";
  else if (first.dtype != op.dtype || first.bytes != op.bytes)
    differ = "type";
  else if (op.kind == CollectiveOp::Kind::AllReduce &&
           first.reduction != op.reduction)
    differ = "reduction";
  else if (op.kind == CollectiveOp::Kind::Broadcast && first.root != op.root)
    differ = "root";
  if (!differ.empty()) {
    error = "collective mismatch: rank " + std::to_string(rank) + "'s " +
            op.description + " and rank " + std::to_string(instance.firstRank) +
            "'s " + first.description + " are collective #" +
            std::to_string(index) + " over ranks {" + membersText(members) +
            "} but differ in " + differ;
    abortLocked(error);
    return false;
  }
  instance.arrived[rank] = &op;
  inCollective[rank] = &instance;
  ++remaining[rank];
  if (instance.arrived.size() == members.size()) {
    std::string failure;
    if (!completeCollective(instance, failure)) {
      error = "rank " + std::to_string(rank) + ": " + op.description + ": " +
              failure;
      inCollective[rank] = nullptr;
      abortLocked(error);
      return false;
    }
    // Every member's wait ends now, before any of them wakes: a rank that
    // moves on must not find the others still counted as blocked.
    instance.complete = true;
    for (auto &[member, theirs] : instance.arrived) {
      --remaining[member];
      inCollective[member] = nullptr;
    }
    changed.notify_all();
  }
  waiting[rank] = true;
  while (!instance.complete && !aborted) {
    checkDeadlock();
    if (aborted)
      break;
    changed.wait(lock);
  }
  waiting[rank] = false;
  inCollective[rank] = nullptr;
  if (!instance.complete) {
    error = abortReason;
    return false;
  }
  return true;
}
