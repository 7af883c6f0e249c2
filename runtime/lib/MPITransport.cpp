//===- MPITransport.cpp - send/recv groups over MPI -----------------------===//

#include "tandem/Runtime/MPITransport.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <thread>

using namespace tandem::runtime;

/// Nanoseconds of the monotonic clock (CLOCK_MONOTONIC on Linux: one clock
/// for every process of the machine).
static int64_t monotonicNanoseconds() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

MPITransport::MPITransport(MPI_Comm comm, double timeoutSeconds,
                           double delaySeconds)
    : comm(comm), timeoutSeconds(timeoutSeconds),
      // tandem-run caps the delay at an hour: the nanoseconds fit easily.
      delayNanoseconds(static_cast<int64_t>(
          (delaySeconds > 0 ? std::min(delaySeconds, 3600.0) : 0.0) * 1e9)) {
  // Errors come back as codes, reported with the op that failed, instead
  // of MPI's default of aborting with its own message.
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  // Collectives travel on a communicator of their own, so that their
  // messages never meet a channel's.
  MPI_Comm_dup(comm, &collectiveComm);
  MPI_Comm_set_errhandler(collectiveComm, MPI_ERRORS_RETURN);
  // Send times likewise: the n-th stamp between two ranks on a channel
  // belongs to the n-th message.
  if (delayNanoseconds > 0) {
    MPI_Comm_dup(comm, &stampComm);
    MPI_Comm_set_errhandler(stampComm, MPI_ERRORS_RETURN);
  }
  int *bound = nullptr, found = 0;
  MPI_Comm_get_attr(comm, MPI_TAG_UB, &bound, &found);
  if (found && bound)
    tagUpperBound = *bound;
}

MPITransport::~MPITransport() {
  // A transport may outlive MPI_Finalize (tandem-run's lives to the end of
  // the rank's main), after which no MPI call is allowed.
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && collectiveComm != MPI_COMM_NULL)
    MPI_Comm_free(&collectiveComm);
  if (!finalized && stampComm != MPI_COMM_NULL)
    MPI_Comm_free(&stampComm);
}

std::string MPITransport::timeoutText() const {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%g", timeoutSeconds);
  return std::string("no progress for ") + seconds + " s (the --timeout)";
}

int MPITransport::poll(std::vector<MPI_Request> &requests,
                       std::vector<MPI_Status> &statuses) {
  auto start = std::chrono::steady_clock::now();
  auto pause = std::chrono::microseconds(1);
  while (true) {
    int done = 0;
    int code = MPI_Testall(static_cast<int>(requests.size()), requests.data(),
                           &done, statuses.data());
    if (code != MPI_SUCCESS || done)
      return code;
    double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (waited > timeoutSeconds)
      return kTimedOut;
    // Back off to at most 1 ms between polls: ranks often share cores.
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
}

static std::string mpiError(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, length);
}

static std::string describe(int64_t rank, const TransportOp &op) {
  return "rank " + std::to_string(rank) + " " + op.description +
         (op.send ? " to rank " : " from rank ") + std::to_string(op.peer) +
         " on channel " + std::to_string(op.channel);
}

bool MPITransport::post(int64_t rank, std::vector<TransportOp> &group,
                        std::string &error) {
  for (TransportOp &op : group) {
    op.completed = false;
    if (op.wire != op.dtype) {
      error = describe(rank, op) + ": wire conversion is not supported";
      return false;
    }
    if (op.channel < 0 || op.channel > tagUpperBound) {
      error = describe(rank, op) + ": the channel exceeds MPI_TAG_UB (" +
              std::to_string(tagUpperBound) + ")";
      return false;
    }
    if (op.bytes > static_cast<uint64_t>(INT32_MAX)) {
      error = describe(rank, op) + ": " + std::to_string(op.bytes) +
              " bytes exceed one MPI message";
      return false;
    }
  }
  for (TransportOp &op : group) {
    MPI_Request request = MPI_REQUEST_NULL;
    int count = static_cast<int>(op.bytes);
    int tag = static_cast<int>(op.channel), peer = static_cast<int>(op.peer);
    // Synchronous sends: complete only once the receive is posted, the
    // rendezvous every transport gives.
    int code = op.send ? MPI_Issend(op.sendData, count, MPI_BYTE, peer, tag,
                                    comm, &request)
                       : MPI_Irecv(op.recvData, count, MPI_BYTE, peer, tag,
                                   comm, &request);
    if (code != MPI_SUCCESS) {
      error = describe(rank, op) + ": " + mpiError(code);
      return false;
    }
    posted[&op] = request;
    if (stampComm == MPI_COMM_NULL)
      continue;
    Stamp &stamp = stamps[&op];
    stamp.nanoseconds = monotonicNanoseconds();
    code = op.send ? MPI_Isend(&stamp.nanoseconds, 1, MPI_INT64_T, peer, tag,
                               stampComm, &stamp.request)
                   : MPI_Irecv(&stamp.nanoseconds, 1, MPI_INT64_T, peer, tag,
                               stampComm, &stamp.request);
    if (code != MPI_SUCCESS) {
      error = describe(rank, op) + ": its send time: " + mpiError(code);
      return false;
    }
  }
  return true;
}

bool MPITransport::wait(int64_t rank, const std::vector<TransportOp *> &ops,
                        std::string &error) {
  std::vector<MPI_Request> requests;
  for (TransportOp *op : ops) {
    auto found = posted.find(op);
    if (found == posted.end()) {
      error = describe(rank, *op) + ": waited for but not posted";
      return false;
    }
    requests.push_back(found->second);
  }
  // The send times travel beside the payloads; a timeout or an error on
  // one is the op's.
  std::vector<TransportOp *> owners(ops);
  if (stampComm != MPI_COMM_NULL)
    for (TransportOp *op : ops) {
      requests.push_back(stamps[op].request);
      owners.push_back(op);
    }
  std::vector<MPI_Status> statuses(requests.size());
  int code = poll(requests, statuses);
  // MPI_Testall freed the completed requests (set to MPI_REQUEST_NULL).
  for (size_t i = 0; i < ops.size(); ++i)
    posted[ops[i]] = requests[i];
  for (size_t i = ops.size(); i < requests.size(); ++i)
    stamps[owners[i]].request = requests[i];
  if (code != MPI_SUCCESS && code != kTimedOut) {
    for (size_t i = 0; i < requests.size(); ++i)
      if (code != MPI_ERR_IN_STATUS ||
          (statuses[i].MPI_ERROR != MPI_SUCCESS &&
           statuses[i].MPI_ERROR != MPI_ERR_PENDING)) {
        int opCode = code == MPI_ERR_IN_STATUS ? statuses[i].MPI_ERROR : code;
        error = describe(rank, *owners[i]) +
                (i < ops.size() ? ": " : ": its send time: ") +
                mpiError(opCode) +
                (opCode == MPI_ERR_TRUNCATE
                     ? " (the sender's message is larger than the " +
                           std::to_string(owners[i]->bytes) + " bytes expected)"
                     : "");
        return false;
      }
    error = "rank " + std::to_string(rank) + ": " + mpiError(code);
    return false;
  }
  if (code == kTimedOut) {
    error = timeoutText() + "; still waiting:";
    for (size_t i = 0; i < requests.size(); ++i) {
      int flag = 0;
      MPI_Request_get_status(requests[i], &flag, MPI_STATUS_IGNORE);
      if (!flag)
        error += "\n  " + describe(rank, *owners[i]) +
                 (i < ops.size() ? "" : " (its send time)");
    }
    return false;
  }
  // Hold what arrived until it would have over a long link.
  if (stampComm != MPI_COMM_NULL) {
    int64_t until = 0;
    for (TransportOp *op : ops) {
      if (!op->send)
        until = std::max(until, stamps[op].nanoseconds + delayNanoseconds);
      stamps.erase(op);
    }
    int64_t now = monotonicNanoseconds();
    if (until > now)
      std::this_thread::sleep_for(std::chrono::nanoseconds(until - now));
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    TransportOp &op = *ops[i];
    posted.erase(&op);
    if (!op.send) {
      int received = 0;
      MPI_Get_count(&statuses[i], MPI_BYTE, &received);
      if (static_cast<uint64_t>(received) != op.bytes) {
        error = describe(rank, op) + ": received " + std::to_string(received) +
                " bytes, expected " + std::to_string(op.bytes);
        return false;
      }
    }
    op.completed = true;
    countCompleted(rank, op);
  }
  return true;
}

void MPITransport::abort(const std::string &reason) {
  std::fprintf(stderr, "tandem-run: error: %s%s\n", context.c_str(),
               reason.c_str());
  std::fflush(stderr);
  MPI_Abort(comm, 1);
}

bool MPITransport::collective(int64_t rank, CollectiveOp &op,
                              std::string &error) {
  std::string what = "rank " + std::to_string(rank) + " " + op.description;
  int size = 0;
  MPI_Comm_size(comm, &size);
  std::vector<int64_t> members;
  if (!collectiveMembers(rank, size, op, members, error))
    return false;
  if (op.bytes > static_cast<uint64_t>(INT32_MAX) - sizeof(CollectiveHeader)) {
    error = what + ": " + std::to_string(op.bytes) +
            " bytes exceed one MPI message";
    return false;
  }
  CollectiveHeader header = CollectiveHeader::of(op);
  // One tag per member set: collectives over one set pair in entry order.
  int tag = static_cast<int>(hashMembers(members) %
                             (static_cast<uint64_t>(tagUpperBound) + 1));
  size_t messageBytes = sizeof header + op.bytes;
  std::vector<uint8_t> mine(messageBytes);
  std::memcpy(mine.data(), &header, sizeof header);
  if (op.bytes)
    std::memcpy(mine.data() + sizeof header, op.data, op.bytes);

  bool broadcast = op.kind == CollectiveOp::Kind::Broadcast;
  std::vector<int64_t> sendTo, receiveFrom;
  for (int64_t member : members) {
    if (member == rank)
      continue;
    if (!broadcast || rank == op.root)
      sendTo.push_back(member);
    if (!broadcast || member == op.root)
      receiveFrom.push_back(member);
  }
  std::map<int64_t, std::vector<uint8_t>> theirs;
  std::vector<MPI_Request> requests;
  for (int64_t member : receiveFrom) {
    std::vector<uint8_t> &into = theirs[member];
    into.resize(messageBytes);
    requests.emplace_back();
    MPI_Irecv(into.data(), static_cast<int>(messageBytes), MPI_BYTE,
              static_cast<int>(member), tag, collectiveComm, &requests.back());
  }
  for (int64_t member : sendTo) {
    requests.emplace_back();
    MPI_Issend(mine.data(), static_cast<int>(messageBytes), MPI_BYTE,
               static_cast<int>(member), tag, collectiveComm, &requests.back());
  }
  std::vector<MPI_Status> statuses(requests.size());
  int code = poll(requests, statuses);
  if (code == kTimedOut) {
    error = what + ": " + timeoutText() + "; still waiting for ranks";
    for (size_t i = 0; i < receiveFrom.size(); ++i) {
      int flag = 0;
      MPI_Request_get_status(requests[i], &flag, MPI_STATUS_IGNORE);
      if (!flag)
        error += " " + std::to_string(receiveFrom[i]);
    }
    return false;
  }
  if (code != MPI_SUCCESS) {
    error = what + ": " + mpiError(code) +
            " (a member's value differs in size: collective mismatch)";
    return false;
  }
  for (auto &[member, message] : theirs) {
    CollectiveHeader other;
    std::memcpy(&other, message.data(), sizeof other);
    if (!(other == header)) {
      error = "collective mismatch: rank " + std::to_string(rank) + "'s " +
              op.description + " and rank " + std::to_string(member) +
              "'s collective over ranks {" +
              [&] {
                std::string text;
                for (int64_t m : members)
                  text += (text.empty() ? "" : ", ") + std::to_string(m);
                return text;
              }() +
              "} differ in " + header.differenceFrom(other);
      return false;
    }
  }
  if (broadcast) {
    if (rank != op.root && op.bytes)
      std::memcpy(op.data, theirs.at(op.root).data() + sizeof header, op.bytes);
    return true;
  }
  std::vector<uint8_t> result(op.bytes);
  for (size_t k = 0; k < op.group.size(); ++k) {
    int64_t member = op.group[k];
    const uint8_t *value = member == rank
                               ? mine.data() + sizeof header
                               : theirs.at(member).data() + sizeof header;
    if (k == 0) {
      std::memcpy(result.data(), value, op.bytes);
      continue;
    }
    std::string foldError;
    if (!foldCollective(op.reduction, op.dtype, result.data(), value, op.bytes,
                        foldError)) {
      error = what + ": " + foldError;
      return false;
    }
  }
  if (op.bytes)
    std::memcpy(op.data, result.data(), op.bytes);
  return true;
}
