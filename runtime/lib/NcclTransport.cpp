//===- NcclTransport.cpp - send/recv groups over NCCL ---------------------===//

#include "tandem/Runtime/NcclTransport.h"

#include "tandem/Runtime/Device.h"
#include "tandem/Runtime/DeviceTimeline.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

using namespace tandem::runtime;

namespace {

std::string seconds(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

std::string describe(int64_t rank, const TransportOp &op) {
  return "rank " + std::to_string(rank) + " " + op.description +
         (op.send ? " to rank " : " from rank ") + std::to_string(op.peer) +
         " (" + std::to_string(op.bytes) + " bytes)";
}

} // namespace

std::unique_ptr<NcclTransport>
NcclTransport::create(const NcclLibrary &nccl, Device &device,
                      const NcclUniqueId &id, int64_t rank, int64_t ranks,
                      double timeoutSeconds, std::string &error,
                      std::function<std::string()> peerCheck) {
  std::string where = "NCCL rank " + std::to_string(rank) + " of " +
                      std::to_string(ranks) + ": ";
  if (ranks < 1 || ranks > INT32_MAX || rank < 0 || rank >= ranks) {
    error = where + "not a rank of the communicator";
    return nullptr;
  }
  if (device.kind() != DeviceKind::Cuda) {
    error = where + "NCCL moves GPU memory, and the rank runs on " +
            device.describe();
    return nullptr;
  }
  if (!device.makeCurrent(error)) {
    error = where + error;
    return nullptr;
  }
  std::unique_ptr<NcclTransport> transport(
      new NcclTransport(nccl, device, rank, ranks, timeoutSeconds));
  transport->peerCheck = std::move(peerCheck);
  // Made once: recording an event again moves it to the new point, which
  // is all a group needs (the waits already issued keep the old one).
  transport->posted = DeviceEvent::create(device, error);
  if (transport->posted)
    transport->lastGroup = DeviceEvent::create(device, error);
  if (!transport->lastGroup ||
      !device.createStream(transport->transferStream, error)) {
    error = where + error;
    return nullptr;
  }
  // Non-blocking: initialization and every later call return at once, and
  // the communicator's state is polled, so a rank that never joins (or a
  // peer that never answers) is a timeout, not a hang.
  NcclConfig config;
  config.blocking = 0;
  // NCCL's environment overrides the config (NCCL_COMM_BLOCKING=1 makes
  // every call block), which would turn a silent peer into a hang.
  if (const char *blocking = std::getenv("NCCL_COMM_BLOCKING");
      blocking && std::string(blocking) != "0" && rank == 0)
    std::fprintf(stderr,
                 "tandem-run: NCCL_COMM_BLOCKING=%s makes NCCL's calls block: "
                 "--timeout cannot end a job whose peer is silent\n",
                 blocking);
  int result =
      nccl.api().commInitRankConfig(&transport->comm, static_cast<int>(ranks),
                                    id, static_cast<int>(rank), &config);
  if (result != kNcclSuccess && result != kNcclInProgress) {
    error =
        where + nccl.failure("ncclCommInitRankConfig", result, transport->comm);
    if (transport->comm)
      transport->abortCommunicator();
    return nullptr;
  }
  std::string failure = transport->pollDone(/*groups=*/false);
  if (!failure.empty()) {
    error = where + "the communicator did not form: " + failure;
    return nullptr;
  }
  return transport;
}

NcclTransport::~NcclTransport() {
  if (!aborted && comm) {
    std::string ignored;
    device.makeCurrent(ignored);
    // Finalize flushes what is still in flight; an error there leaves only
    // the abort, which also frees the communicator.
    int result = nccl.api().commFinalize(comm);
    if ((result == kNcclSuccess || result == kNcclInProgress) &&
        pollDone(/*groups=*/false).empty())
      nccl.api().commDestroy(comm);
    else if (!aborted)
      abortCommunicator();
  }
  posted.reset();
  lastGroup.reset();
  device.destroyStream(transferStream);
}

void NcclTransport::setRankStream(int64_t rank, void *stream,
                                  DeviceTimeline *timeline) {
  if (rank == this->rank) {
    rankStream = stream;
    this->timeline = timeline;
  }
}

std::string NcclTransport::orderAfterRank(const std::string &name) {
  std::string error;
  if (!device.recordEvent(posted->get(), rankStream, error) ||
      !device.waitForEvent(transferStream, posted->get(), error))
    return error;
  groupSpan = -1;
  if (timeline && (groupSpan = timeline->begin(transferStream, name,
                                               "device transfer", error)) < 0)
    return error;
  return "";
}

std::string NcclTransport::markGroup() {
  std::string error;
  if (groupSpan >= 0 && !timeline->end(groupSpan, transferStream, error))
    return error;
  groupSpan = -1;
  if (!device.recordEvent(lastGroup->get(), transferStream, error))
    return error;
  return "";
}

void NcclTransport::abortCommunicator() {
  if (!aborted && comm)
    nccl.api().commAbort(comm);
  aborted = true;
}

std::string NcclTransport::pollDone(bool groups) {
  auto start = std::chrono::steady_clock::now();
  auto pause = std::chrono::microseconds(1);
  // A peer's end is looked for every 50 ms: a system call, not worth
  // making on every poll of a wait that is about to end.
  auto nextPeerCheck = start + std::chrono::milliseconds(50);
  while (true) {
    int state = kNcclSuccess;
    int result = nccl.api().commGetAsyncError(comm, &state);
    if (result != kNcclSuccess ||
        (state != kNcclSuccess && state != kNcclInProgress)) {
      std::string failure =
          result != kNcclSuccess
              ? nccl.failure("ncclCommGetAsyncError", result, comm)
              : nccl.failure("NCCL", state, comm);
      abortCommunicator();
      return failure;
    }
    bool idle = state == kNcclSuccess;
    // An event not recorded yet is done: no group was posted.
    if (idle && groups) {
      std::string deviceError;
      if (!device.eventDone(lastGroup->get(), idle, deviceError)) {
        abortCommunicator();
        return deviceError;
      }
    }
    if (idle)
      return "";
    auto now = std::chrono::steady_clock::now();
    if (peerCheck && now >= nextPeerCheck) {
      nextPeerCheck = now + std::chrono::milliseconds(50);
      std::string ended = peerCheck();
      if (!ended.empty()) {
        abortCommunicator();
        return ended;
      }
    }
    double waited = std::chrono::duration<double>(now - start).count();
    if (waited > timeoutSeconds) {
      abortCommunicator();
      return "no progress for " + seconds(timeoutSeconds) +
             " s (the --timeout)";
    }
    // Back off to at most 1 ms between polls, as the MPI transport does.
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
}

std::string NcclTransport::abortedError(const std::string &what) const {
  return abortReason.empty() ? what + ": the NCCL communicator was aborted"
                             : abortReason;
}

bool NcclTransport::post(int64_t rank, std::vector<TransportOp> &group,
                         std::string &error) {
  if (aborted) {
    error = abortedError("rank " + std::to_string(this->rank));
    return false;
  }
  if (rank != this->rank) {
    error = "rank " + std::to_string(rank) +
            " exchanged through the NCCL transport of rank " +
            std::to_string(this->rank);
    return false;
  }
  struct Call {
    int type;
    size_t count;
  };
  std::vector<Call> calls;
  for (TransportOp &op : group) {
    op.completed = false;
    size_t elementBytes = 1;
    int type = ncclDataTypeOf(op.dtype, elementBytes);
    if (op.wire != op.dtype) {
      error = describe(rank, op) + ": wire conversion is not supported";
      return false;
    }
    if (op.peer < 0 || op.peer >= ranks || op.peer == rank) {
      error = describe(rank, op) + ": peer " + std::to_string(op.peer) +
              " is not another rank of the communicator";
      return false;
    }
    if (op.bytes % elementBytes) {
      error = describe(rank, op) + ": not a whole number of " +
              elementTypeName(op.dtype) + " elements";
      return false;
    }
    calls.push_back({type, static_cast<size_t>(op.bytes / elementBytes)});
  }
  if (group.empty())
    return true;

  auto failed = [&](const std::string &failure) {
    error = "rank " + std::to_string(rank) + ": " + failure + "; the group:";
    for (const TransportOp &op : group)
      error += "\n  " + describe(rank, op);
    return false;
  };
  if (!device.makeCurrent(error))
    return failed(error);
  std::string name;
  for (const TransportOp &op : group)
    name += (name.empty() ? "" : ", ") + op.description +
            (op.send ? " to " : " from ") + std::to_string(op.peer);
  std::string ordered = orderAfterRank(name);
  if (!ordered.empty())
    return failed(ordered);
  const NcclApi &api = nccl.api();
  int result = api.groupStart();
  if (result != kNcclSuccess)
    return failed(nccl.failure("ncclGroupStart", result, comm));
  for (size_t i = 0; i < group.size(); ++i) {
    TransportOp &op = group[i];
    int peer = static_cast<int>(op.peer);
    result = op.send ? api.send(op.sendData, calls[i].count, calls[i].type,
                                peer, comm, transferStream)
                     : api.recv(op.recvData, calls[i].count, calls[i].type,
                                peer, comm, transferStream);
    if (result != kNcclSuccess && result != kNcclInProgress) {
      api.groupEnd();
      abortCommunicator();
      return failed(
          nccl.failure(op.send ? "ncclSend" : "ncclRecv", result, comm));
    }
  }
  result = api.groupEnd();
  if (result != kNcclSuccess && result != kNcclInProgress) {
    std::string failure = nccl.failure("ncclGroupEnd", result, comm);
    abortCommunicator();
    return failed(failure);
  }
  // A non-blocking communicator takes no further call until the group is
  // enqueued (nor may its stream be waited for before); the transfers
  // themselves go on on the stream.
  std::string failure = pollDone(/*groups=*/false);
  if (failure.empty())
    failure = markGroup();
  if (!failure.empty())
    return failed(failure);
  for (TransportOp &op : group)
    inFlight.push_back(&op);
  return true;
}

bool NcclTransport::wait(int64_t rank, const std::vector<TransportOp *> &ops,
                         std::string &error) {
  if (aborted) {
    error = abortedError("rank " + std::to_string(this->rank));
    return false;
  }
  if (std::all_of(ops.begin(), ops.end(),
                  [](const TransportOp *op) { return op->completed; }))
    return true;
  // The stream runs the groups in order: once the last is done, every
  // posted op is; the rank's later work waits for them too.
  std::string failure = pollDone(/*groups=*/true);
  if (failure.empty())
    device.waitForEvent(rankStream, lastGroup->get(), failure);
  if (!failure.empty()) {
    error = "rank " + std::to_string(rank) + ": " + failure + "; waiting for:";
    for (const TransportOp *op : inFlight)
      error += "\n  " + describe(rank, *op);
    return false;
  }
  completeInFlight();
  return true;
}

void NcclTransport::completeInFlight() {
  for (TransportOp *op : inFlight) {
    op->completed = true;
    countCompleted(rank, *op);
  }
  inFlight.clear();
}

void NcclTransport::abort(const std::string &reason) {
  if (abortReason.empty())
    abortReason = reason;
  // The ops in flight end with the communicator (their memory may go).
  inFlight.clear();
  std::string ignored;
  device.makeCurrent(ignored);
  abortCommunicator();
}

bool NcclTransport::collective(int64_t rank, CollectiveOp &op,
                               std::string &error) {
  std::string what = "rank " + std::to_string(rank) + " " + op.description;
  if (aborted) {
    error = abortedError(what);
    return false;
  }
  std::vector<int64_t> members;
  if (!collectiveMembers(rank, ranks, op, members, error))
    return false;
  size_t elementBytes = 1;
  int type = ncclDataTypeOf(op.dtype, elementBytes);
  if (op.bytes % elementBytes) {
    error = what + ": not a whole number of " + elementTypeName(op.dtype) +
            " elements";
    return false;
  }
  size_t count = static_cast<size_t>(op.bytes / elementBytes);
  bool broadcast = op.kind == CollectiveOp::Kind::Broadcast;
  // Each message is its header (bytes) and then its value, to every member
  // that needs it: all of them for an all-reduce, the root's for a
  // broadcast. Messages between two ranks pair in issue order, so the
  // collectives take their places in the ranks' one order per pair
  // (TransferOrder.h counts them there).
  CollectiveHeader header = CollectiveHeader::of(op);
  std::vector<int64_t> peers;
  for (int64_t member : members)
    if (member != rank && (!broadcast || rank == op.root || member == op.root))
      peers.push_back(member);
  std::vector<CollectiveHeader> headers(peers.size());
  // The members' values land in device memory; an all-reduce folds them on
  // the host in group order (the runtime has no kernels of its own).
  std::vector<DeviceAllocation> values;
  if (!broadcast)
    for (size_t k = 0; k < peers.size(); ++k) {
      values.emplace_back(device, op.bytes ? op.bytes : 1, kMaxDeviceAlignment,
                          error);
      if (!values.back())
        return false;
    }
  std::vector<DeviceAllocation> headerCopies;
  DeviceAllocation mine(device, sizeof header, kMaxDeviceAlignment, error);
  if (!mine || !device.copyToDevice(mine.data(), &header, sizeof header, error))
    return false;
  for (size_t k = 0; k < peers.size(); ++k) {
    headerCopies.emplace_back(device, sizeof header, kMaxDeviceAlignment,
                              error);
    if (!headerCopies.back())
      return false;
  }
  auto failed = [&](const std::string &failure) {
    error = what + ": " + failure;
    return false;
  };
  if (!device.makeCurrent(error))
    return failed(error);
  // The header's upload and the new buffers' zeroing went on the legacy
  // stream; the rank's stream is a blocking one, whose later work the
  // legacy stream's precedes, so the event the transfer stream waits for
  // (recorded on the rank's stream) comes after them too.
  std::string ordered = orderAfterRank(op.description);
  if (!ordered.empty())
    return failed(ordered);
  const NcclApi &api = nccl.api();
  const int kUint8 = 1;
  int result = api.groupStart();
  if (result != kNcclSuccess)
    return failed(nccl.failure("ncclGroupStart", result, comm));
  for (size_t k = 0; k < peers.size() && result == kNcclSuccess; ++k) {
    int peer = static_cast<int>(peers[k]);
    bool sends = !broadcast || rank == op.root;
    bool receives = !broadcast || peers[k] == op.root;
    if (sends) {
      result = api.send(mine.data(), sizeof header, kUint8, peer, comm,
                        transferStream);
      if (result == kNcclSuccess || result == kNcclInProgress)
        result = api.send(op.data, count, type, peer, comm, transferStream);
    }
    if (receives && (result == kNcclSuccess || result == kNcclInProgress)) {
      result = api.recv(headerCopies[k].data(), sizeof header, kUint8, peer,
                        comm, transferStream);
      if (result == kNcclSuccess || result == kNcclInProgress)
        result = api.recv(broadcast ? op.data : values[k].data(), count, type,
                          peer, comm, transferStream);
    }
    if (result == kNcclInProgress)
      result = kNcclSuccess;
  }
  int ended = api.groupEnd();
  if (result != kNcclSuccess ||
      (ended != kNcclSuccess && ended != kNcclInProgress)) {
    std::string failure = nccl.failure(
        result != kNcclSuccess ? "ncclSend/ncclRecv" : "ncclGroupEnd",
        result != kNcclSuccess ? result : ended, comm);
    abortCommunicator();
    return failed(failure);
  }
  // Enqueued, then done: the host reads the headers and values next.
  std::string failure = pollDone(/*groups=*/false);
  if (failure.empty())
    failure = markGroup();
  if (failure.empty())
    failure = pollDone(/*groups=*/true);
  if (!failure.empty())
    return failed(failure);
  completeInFlight();
  for (size_t k = 0; k < peers.size(); ++k) {
    if (broadcast && peers[k] != op.root)
      continue;
    CollectiveHeader theirs;
    if (!device.copyToHost(&theirs, headerCopies[k].data(), sizeof theirs,
                           error))
      return failed(error);
    if (!(theirs == header)) {
      std::string group;
      for (int64_t m : members)
        group += (group.empty() ? "" : ", ") + std::to_string(m);
      error = "collective mismatch: rank " + std::to_string(rank) + "'s " +
              op.description + " and rank " + std::to_string(peers[k]) +
              "'s collective over ranks {" + group + "} differ in " +
              header.differenceFrom(theirs);
      return false;
    }
  }
  if (broadcast || !op.bytes)
    return true;
  std::vector<uint8_t> sum(op.bytes), value(op.bytes);
  auto read = [&](int64_t member, void *into) {
    if (member == rank)
      return device.copyToHost(into, op.data, op.bytes, error);
    size_t k = static_cast<size_t>(
        std::find(peers.begin(), peers.end(), member) - peers.begin());
    return device.copyToHost(into, values[k].data(), op.bytes, error);
  };
  if (!read(op.group.front(), sum.data()))
    return failed(error);
  for (size_t k = 1; k < op.group.size(); ++k)
    if (!read(op.group[k], value.data()) ||
        !foldCollective(op.reduction, op.dtype, sum.data(), value.data(),
                        op.bytes, error))
      return failed(error);
  if (!device.copyToDevice(op.data, sum.data(), op.bytes, error))
    return failed(error);
  return true;
}
