//===- InProcessTransport.cpp - ranks as threads, rendezvous --------------===//

#include "tandem/Runtime/Transport.h"

#include "tandem/Runtime/Device.h"
#include "tandem/Runtime/DeviceTimeline.h"

#include <algorithm>
#include <cstring>
#include <sstream>

using namespace tandem::runtime;

InProcessTransport::InProcessTransport(int64_t ranks, Device *device)
    : ranks(ranks),
      device(device && device->kind() != DeviceKind::Host ? device : nullptr),
      rankStreams(ranks, nullptr), timelines(ranks, nullptr),
      finished(ranks, false), waitingFor(ranks, nullptr), incomplete(ranks),
      inCollective(ranks, nullptr) {}

InProcessTransport::~InProcessTransport() {
  copied.clear();
  if (copyStream)
    device->destroyStream(copyStream);
}

void InProcessTransport::setRankStream(int64_t rank, void *stream,
                                       DeviceTimeline *timeline) {
  std::lock_guard<std::mutex> lock(mutex);
  if (rank >= 0 && rank < ranks) {
    rankStreams[rank] = stream;
    timelines[rank] = timeline;
  }
}

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
  else if (device && !copyOnStream(send, recv, copyError)) {
    error = "rank " + std::to_string(send.rank) + " " + s.description +
            " to rank " + std::to_string(recv.rank) + ": " + copyError;
    return false;
  }
  for (Pending done : {send, recv}) {
    done.op->completed = true;
    countCompleted(done.rank, *done.op);
    std::vector<TransportOp *> &ops = incomplete[done.rank];
    ops.erase(std::find(ops.begin(), ops.end(), done.op));
  }
  return true;
}

bool InProcessTransport::copyOnStream(const Pending &send, const Pending &recv,
                                      std::string &error) {
  // A device without streams (the host's kind) gives null: its copies are
  // done when issued.
  if (!copyStream && !device->createStream(copyStream, error))
    return false;
  // After what both ranks issued before posting: the sender's producer of
  // the payload, the receiver's last reader of the buffer it lands in.
  std::shared_ptr<DeviceEvent> done = DeviceEvent::create(*device, error);
  if (!done || !device->waitForEvent(copyStream, send.posted->get(), error) ||
      !device->waitForEvent(copyStream, recv.posted->get(), error))
    return false;
  // The receiver's timeline shows the copy (the sender's shows its wait).
  DeviceTimeline *timeline = timelines[recv.rank];
  int64_t span = -1;
  if (timeline && (span = timeline->begin(copyStream,
                                          recv.op->description + " from " +
                                              std::to_string(send.rank),
                                          "device transfer", error)) < 0)
    return false;
  if (!device->copyOnDeviceAsync(recv.op->recvData, send.op->sendData,
                                 send.op->bytes, copyStream, error) ||
      (timeline && !timeline->end(span, copyStream, error)) ||
      !device->recordEvent(done->get(), copyStream, error))
    return false;
  copied[send.op] = done;
  copied[recv.op] = done;
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
  auto blocked = [&](int64_t r) {
    if (inCollective[r])
      return true;
    if (!waitingFor[r])
      return false;
    for (const TransportOp *op : *waitingFor[r])
      if (!op->completed)
        return true;
    return false;
  };
  bool anyBlocked = false;
  for (int64_t r = 0; r < ranks; ++r) {
    if (finished[r])
      continue;
    if (!blocked(r))
      return;
    anyBlocked = true;
  }
  if (!anyBlocked)
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
    if (finished[r] || !waitingFor[r])
      continue;
    for (const TransportOp *op : *waitingFor[r]) {
      if (op->completed)
        continue;
      os << "\n  rank " << r << " waits in " << op->description
         << (op->send ? " to" : " from") << " rank " << op->peer
         << " on channel " << op->channel << ": rank " << op->peer
         << (finished[op->peer] ? " has finished its list"
                                : " has not posted the matching op");
    }
  }
  aborted = true;
  abortReason = os.str();
  changed.notify_all();
}

bool InProcessTransport::refuse(const std::string &error) {
  abortLocked(error);
  return false;
}

bool InProcessTransport::post(int64_t rank, std::vector<TransportOp> &group,
                              std::string &error) {
  std::lock_guard<std::mutex> lock(mutex);
  if (aborted) {
    error = abortReason;
    return false;
  }
  // On a device one event marks the rank's work before the group, which
  // every copy of the group waits for.
  std::shared_ptr<DeviceEvent> posted;
  if (device && !group.empty()) {
    std::string eventError;
    posted = DeviceEvent::create(*device, eventError);
    if (!posted ||
        !device->recordEvent(posted->get(), rankStreams[rank], eventError))
      return refuse("rank " + std::to_string(rank) + ": " + eventError);
  }
  for (TransportOp &op : group) {
    op.completed = false;
    if (op.peer < 0 || op.peer >= ranks || op.peer == rank) {
      error = op.description + ": peer " + std::to_string(op.peer) +
              " is not another rank of the grid";
      return refuse("rank " + std::to_string(rank) + ": " + error);
    }
    incomplete[rank].push_back(&op);
    Key key = op.send ? Key{rank, op.peer, op.channel}
                      : Key{op.peer, rank, op.channel};
    auto &partners = op.send ? recvs[key] : sends[key];
    Pending mine{rank, &op, posted};
    if (partners.empty()) {
      (op.send ? sends[key] : recvs[key]).push_back(mine);
      continue;
    }
    Pending partner = partners.front();
    partners.pop_front();
    bool ok = op.send ? complete(mine, partner, error)
                      : complete(partner, mine, error);
    if (!ok)
      return refuse(error);
  }
  changed.notify_all();
  return true;
}

bool InProcessTransport::wait(int64_t rank,
                              const std::vector<TransportOp *> &ops,
                              std::string &error) {
  std::unique_lock<std::mutex> lock(mutex);
  auto done = [&] {
    return std::all_of(ops.begin(), ops.end(),
                       [](const TransportOp *op) { return op->completed; });
  };
  waitingFor[rank] = &ops;
  while (!done() && !aborted) {
    checkDeadlock();
    if (aborted)
      break;
    changed.wait(lock);
  }
  waitingFor[rank] = nullptr;
  if (!done()) {
    error = abortReason;
    return false;
  }
  // The rank's later work waits for the copies, the host does not.
  for (const TransportOp *op : ops) {
    auto found = copied.find(op);
    if (found == copied.end())
      continue;
    std::string eventError;
    if (!device->waitForEvent(rankStreams[rank], found->second->get(),
                              eventError)) {
      error = "rank " + std::to_string(rank) + " " + op->description + ": " +
              eventError;
      abortLocked(error);
      return false;
    }
    copied.erase(found);
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
  waitingFor.assign(ranks, nullptr);
  incomplete.assign(ranks, {});
  inCollective.assign(ranks, nullptr);
  sends.clear();
  recvs.clear();
  copied.clear();
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
    for (auto &[member, theirs] : instance.arrived)
      inCollective[member] = nullptr;
    changed.notify_all();
  }
  while (!instance.complete && !aborted) {
    checkDeadlock();
    if (aborted)
      break;
    changed.wait(lock);
  }
  inCollective[rank] = nullptr;
  if (!instance.complete) {
    error = abortReason;
    return false;
  }
  return true;
}
