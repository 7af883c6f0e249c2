//===- FakeNccl.cpp - NCCL without GPUs or a network, for tests -----------===//
//
// Exports the NCCL entry points NcclLibrary resolves, for ranks that are
// threads of one process (device memory is the fake CUDA driver's, that
// is host memory): the NCCL transport's logic runs here through the same
// dlopen path as on a GPU. Like NCCL it has no tags: messages from one rank
// to another match in issue order, and a send and the receive it meets
// must agree on element count and type, else both ranks' communicators
// fail with a message saying so (real NCCL would hang or corrupt the
// payload), which is how a misordered program shows here. Stricter than
// NCCL where that catches mistakes: communicators must be non-blocking,
// and a send and receive are only complete once both are posted
// (rendezvous); the communicator's state stays ncclInProgress until then,
// since the fake driver's streams are always idle.
//   TANDEM_FAKE_NCCL_VERSION  ncclGetVersion's value (default 22809)
//
//===----------------------------------------------------------------------===//

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace {

enum Result {
  kSuccess = 0,
  kInternalError = 3,
  kInvalidArgument = 4,
  kInvalidUsage = 5,
  kInProgress = 7,
};

struct UniqueId {
  char internal[128];
};

/// The prefix of ncclConfig_t every version has.
struct Config {
  size_t size;
  unsigned magic;
  unsigned version;
  int blocking;
};

struct Comm;

struct Op {
  Comm *comm;
  bool send;
  int peer;
  const void *sendData;
  void *recvData;
  size_t count;
  int type;
};

/// The ranks of one unique id.
struct Clique {
  int ranks = 0;
  std::vector<Comm *> members;
  /// Ranks that joined, and those of them still members: the
  /// communicator has formed once every rank has joined, whoever leaves
  /// later.
  int joined = 0, alive = 0;
  /// Posted, unmatched ops by (source, destination).
  std::map<std::pair<int, int>, std::deque<Op>> sends, recvs;
};

struct Comm {
  Clique *clique;
  int rank;
  int pending = 0;
  int error = kSuccess;
  std::string lastError;
};

std::mutex mutex;
std::map<std::string, std::unique_ptr<Clique>> cliques;
thread_local int groupDepth = 0;
thread_local std::vector<Op> staged;

size_t typeBytes(int type) {
  switch (type) {
  case 0: // int8
  case 1: // uint8
    return 1;
  case 2: // int32
  case 3: // uint32
  case 7: // float32
    return 4;
  case 4: // int64
  case 5: // uint64
  case 8: // float64
    return 8;
  case 6: // float16
  case 9: // bfloat16
    return 2;
  }
  return 0;
}

const char *typeName(int type) {
  static const char *names[] = {"int8",    "uint8",   "int32",   "uint32",
                                "int64",   "uint64",  "float16", "float32",
                                "float64", "bfloat16"};
  return type >= 0 && type < 10 ? names[type] : "an unknown type";
}

void fail(Comm *comm, int error, const std::string &message) {
  if (comm->error == kSuccess) {
    comm->error = error;
    comm->lastError = message;
  }
}

std::string describe(const Op &op, int rank) {
  return "rank " + std::to_string(rank) + "'s " +
         (op.send ? "send of " : "recv of ") + std::to_string(op.count) +
         " x " + typeName(op.type) + (op.send ? " to rank " : " from rank ") +
         std::to_string(op.peer);
}

/// Pairs the fronts of (source, destination)'s queues while both have
/// one. Called with the lock held.
void match(Clique &clique, std::pair<int, int> key) {
  auto &sends = clique.sends[key];
  auto &recvs = clique.recvs[key];
  while (!sends.empty() && !recvs.empty()) {
    Op send = sends.front(), recv = recvs.front();
    sends.pop_front();
    recvs.pop_front();
    if (send.count != recv.count || send.type != recv.type) {
      std::string message =
          describe(send, key.first) + " met " + describe(recv, key.second) +
          ": messages between two ranks match in issue order, so the two "
          "ranks' programs order their transfers differently";
      fail(send.comm, kInvalidUsage, message);
      fail(recv.comm, kInvalidUsage, message);
      continue;
    }
    if (send.count)
      std::memcpy(recv.recvData, send.sendData,
                  send.count * typeBytes(send.type));
    --send.comm->pending;
    --recv.comm->pending;
  }
}

int post(const Op &op) {
  std::lock_guard<std::mutex> lock(mutex);
  Comm *comm = op.comm;
  if (comm->error != kSuccess)
    return comm->error;
  Clique &clique = *comm->clique;
  ++comm->pending;
  std::pair<int, int> key = op.send ? std::make_pair(comm->rank, op.peer)
                                    : std::make_pair(op.peer, comm->rank);
  (op.send ? clique.sends : clique.recvs)[key].push_back(op);
  match(clique, key);
  return kSuccess;
}

/// Removes `comm` from its clique and its unmatched ops from the queues.
/// Called with the lock held.
void leave(Comm *comm) {
  Clique *clique = comm->clique;
  for (auto *queues : {&clique->sends, &clique->recvs})
    for (auto &[key, queue] : *queues)
      for (auto it = queue.begin(); it != queue.end();)
        it = it->comm == comm ? queue.erase(it) : std::next(it);
  clique->members[comm->rank] = nullptr;
  if (--clique->alive == 0)
    for (auto it = cliques.begin(); it != cliques.end(); ++it)
      if (it->second.get() == clique) {
        cliques.erase(it);
        break;
      }
  delete comm;
}

int queue(Comm *comm, bool send, const void *sendData, void *recvData,
          size_t count, int type, int peer) {
  if (!comm)
    return kInvalidArgument;
  if (!typeBytes(type) || peer < 0 || peer >= comm->clique->ranks)
    return kInvalidArgument;
  Op op{comm, send, peer, sendData, recvData, count, type};
  if (groupDepth > 0) {
    staged.push_back(op);
    return kSuccess;
  }
  int result = post(op);
  return result == kSuccess ? kInProgress : result;
}

} // namespace

extern "C" {

int ncclGetVersion(int *version) {
  const char *value = std::getenv("TANDEM_FAKE_NCCL_VERSION");
  *version = value && *value ? std::atoi(value) : 22809;
  return kSuccess;
}

const char *ncclGetErrorString(int result) {
  switch (result) {
  case kSuccess:
    return "no error";
  case kInternalError:
    return "internal error";
  case kInvalidArgument:
    return "invalid argument";
  case kInvalidUsage:
    return "invalid usage";
  case kInProgress:
    return "NCCL operation in progress";
  }
  return "unknown result code";
}

const char *ncclGetLastError(Comm *comm) {
  std::lock_guard<std::mutex> lock(mutex);
  return comm ? comm->lastError.c_str() : "";
}

int ncclGetUniqueId(UniqueId *id) {
  static int next = 0;
  std::lock_guard<std::mutex> lock(mutex);
  std::memset(id->internal, 0, sizeof id->internal);
  std::snprintf(id->internal, sizeof id->internal, "fake-nccl-%d", next++);
  return kSuccess;
}

int ncclCommInitRankConfig(Comm **out, int ranks, UniqueId id, int rank,
                           Config *config) {
  *out = nullptr;
  if (!config || config->blocking != 0)
    return kInvalidUsage; // The fake serves non-blocking communicators.
  if (ranks < 1 || rank < 0 || rank >= ranks)
    return kInvalidArgument;
  std::lock_guard<std::mutex> lock(mutex);
  std::string key(id.internal, sizeof id.internal);
  std::unique_ptr<Clique> &clique = cliques[key];
  if (!clique) {
    clique = std::make_unique<Clique>();
    clique->ranks = ranks;
    clique->members.assign(ranks, nullptr);
  }
  if (clique->ranks != ranks || clique->members[rank])
    return kInvalidUsage;
  Comm *comm = new Comm{clique.get(), rank, 0, kSuccess, ""};
  clique->members[rank] = comm;
  ++clique->joined;
  ++clique->alive;
  *out = comm;
  return kInProgress;
}

int ncclCommGetAsyncError(Comm *comm, int *state) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!comm)
    return kInvalidArgument;
  *state = comm->error != kSuccess                      ? comm->error
           : comm->clique->joined < comm->clique->ranks ? kInProgress
           : comm->pending > 0                          ? kInProgress
                                                        : kSuccess;
  return kSuccess;
}

int ncclCommFinalize(Comm *comm) { return comm ? kSuccess : kInvalidArgument; }

int ncclCommDestroy(Comm *comm) {
  if (!comm)
    return kInvalidArgument;
  std::lock_guard<std::mutex> lock(mutex);
  leave(comm);
  return kSuccess;
}

int ncclCommAbort(Comm *comm) { return ncclCommDestroy(comm); }

int ncclGroupStart() {
  ++groupDepth;
  return kSuccess;
}

int ncclGroupEnd() {
  if (groupDepth == 0)
    return kInvalidUsage;
  if (--groupDepth > 0)
    return kSuccess;
  std::vector<Op> ops;
  ops.swap(staged);
  int result = kSuccess;
  for (const Op &op : ops)
    if (int posted = post(op); posted != kSuccess && result == kSuccess)
      result = posted;
  return result == kSuccess && !ops.empty() ? kInProgress : result;
}

int ncclSend(const void *data, size_t count, int type, int peer, Comm *comm,
             void *) {
  return queue(comm, true, data, nullptr, count, type, peer);
}

int ncclRecv(void *data, size_t count, int type, int peer, Comm *comm, void *) {
  return queue(comm, false, nullptr, data, count, type, peer);
}

} // extern "C"
