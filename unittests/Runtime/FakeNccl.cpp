//===- FakeNccl.cpp - NCCL without GPUs or a network, for tests -----------===//
//
// Exports the NCCL entry points NcclLibrary resolves, so that the NCCL
// transport's logic runs here through the same dlopen path as on a GPU,
// for ranks that are threads of one process or processes of one machine
// (device memory is the fake CUDA driver's, that is host memory). The
// communicator is a folder, named by the unique id: a rank joins by making
// its file there, and the k-th message from rank a to rank b is the file
// msg-a-b-k, written whole by the sender and taken (read and removed) by
// the receiver's k-th receive from a. So, like NCCL, it has no tags:
// messages between two ranks pair in issue order. A send and the receive it
// meets must agree on element count and type, else both ranks'
// communicators fail with a message saying so (real NCCL would hang or
// corrupt the payload): that is how a misordered program shows here.
// Stricter than NCCL where that catches mistakes: communicators must be
// non-blocking, and an op is complete only once its partner has taken it
// (rendezvous); the communicator's state stays ncclInProgress until then,
// since the fake driver's streams are always idle.
//   TANDEM_FAKE_NCCL_VERSION  ncclGetVersion's value (default 22809)
//   TANDEM_FAKE_NCCL_DIR      where communicators' folders go (default
//                             TMPDIR, else /tmp)
//   TANDEM_FAKE_NCCL_DEVICE_ONLY  1: refuse a payload outside the fake CUDA
//                             driver's allocations (as a real GPU would
//                             fault on host memory)
//
//===----------------------------------------------------------------------===//

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <dlfcn.h>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace {

enum Result {
  kSuccess = 0,
  kSystemError = 2,
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

struct Op {
  bool send;
  int peer;
  const void *sendData;
  void *recvData;
  size_t count;
  int type;
  /// The message's number among this rank's messages with `peer` in this
  /// direction.
  uint64_t sequence;
};

struct Comm {
  std::string folder;
  int rank = 0, ranks = 0;
  bool formed = false;
  std::vector<uint64_t> sent, received;
  std::vector<Op> pending;
  int error = kSuccess;
  std::string lastError;
  std::mutex mutex;
};

/// The header of a message file.
struct Header {
  uint64_t count;
  int32_t type;
};

thread_local int groupDepth = 0;
thread_local std::vector<std::pair<Comm *, Op>> staged;

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

std::string describe(bool send, int rank, int peer, uint64_t count, int type) {
  return "rank " + std::to_string(rank) + "'s " +
         (send ? "send of " : "recv of ") + std::to_string(count) + " x " +
         typeName(type) + (send ? " to rank " : " from rank ") +
         std::to_string(peer);
}

bool exists(const std::string &path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0;
}

/// Writes `bytes` to `path` whole: a reader never sees a partial file.
bool writeWhole(const std::string &path, const void *first, size_t firstBytes,
                const void *second, size_t secondBytes) {
  std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary);
    out.write(static_cast<const char *>(first),
              static_cast<std::streamsize>(firstBytes));
    if (secondBytes)
      out.write(static_cast<const char *>(second),
                static_cast<std::streamsize>(secondBytes));
    if (!out)
      return false;
  }
  return std::rename(temporary.c_str(), path.c_str()) == 0;
}

std::string messagePath(const Comm &comm, int from, int to, uint64_t k) {
  return comm.folder + "/msg-" + std::to_string(from) + "-" +
         std::to_string(to) + "-" + std::to_string(k);
}

void fail(Comm &comm, int error, const std::string &message) {
  if (comm.error == kSuccess) {
    comm.error = error;
    comm.lastError = message;
  }
}

/// Tries to finish `op`: a send is done once its file has been taken, a
/// receive once its file was there to take. Called with the comm's lock.
bool progress(Comm &comm, const Op &op) {
  if (op.send) {
    std::string path = messagePath(comm, comm.rank, op.peer, op.sequence);
    if (exists(path))
      return false;
    // The receiver writes its complaint before it removes the message.
    std::ifstream bad(path + ".bad");
    if (bad) {
      std::string text((std::istreambuf_iterator<char>(bad)),
                       std::istreambuf_iterator<char>());
      fail(comm, kInvalidUsage, text);
    }
    return true;
  }
  std::string path = messagePath(comm, op.peer, comm.rank, op.sequence);
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  Header header{};
  in.read(reinterpret_cast<char *>(&header), sizeof header);
  if (!in) {
    fail(comm, kSystemError, path + ": a truncated message");
    return true;
  }
  if (header.count != op.count || header.type != op.type) {
    std::string text =
        describe(true, op.peer, comm.rank, header.count, header.type) +
        " met " + describe(false, comm.rank, op.peer, op.count, op.type) +
        ": messages between two ranks match in issue order, so the two "
        "ranks' programs order their transfers differently";
    writeWhole(path + ".bad", text.data(), text.size(), nullptr, 0);
    std::remove(path.c_str());
    fail(comm, kInvalidUsage, text);
    return true;
  }
  in.read(static_cast<char *>(op.recvData),
          static_cast<std::streamsize>(op.count * typeBytes(op.type)));
  if (!in)
    fail(comm, kSystemError, path + ": a truncated message");
  in.close();
  std::remove(path.c_str());
  return true;
}

int post(Comm &comm, Op op) {
  std::lock_guard<std::mutex> lock(comm.mutex);
  if (comm.error != kSuccess)
    return comm.error;
  if (op.send) {
    op.sequence = comm.sent[op.peer]++;
    Header header{op.count, op.type};
    if (!writeWhole(messagePath(comm, comm.rank, op.peer, op.sequence), &header,
                    sizeof header, op.sendData,
                    op.count * typeBytes(op.type))) {
      fail(comm, kSystemError, "cannot write a message in " + comm.folder);
      return comm.error;
    }
  } else {
    op.sequence = comm.received[op.peer]++;
  }
  comm.pending.push_back(op);
  return kSuccess;
}

/// Under TANDEM_FAKE_NCCL_DEVICE_ONLY, whether the fake driver (loaded
/// globally by the runtime) owns [data, data + bytes).
bool deviceMemory(const void *data, size_t bytes) {
  const char *only = std::getenv("TANDEM_FAKE_NCCL_DEVICE_ONLY");
  if (!only || std::strcmp(only, "1") != 0)
    return true;
  using IsDevice = int (*)(const void *, size_t);
  auto isDevice = reinterpret_cast<IsDevice>(
      dlsym(RTLD_DEFAULT, "tandem_fake_cuda_is_device"));
  return isDevice && isDevice(data, bytes);
}

int queue(Comm *comm, bool send, const void *sendData, void *recvData,
          size_t count, int type, int peer) {
  if (!comm || !typeBytes(type) || peer < 0 || peer >= comm->ranks)
    return kInvalidArgument;
  const void *data = send ? sendData : recvData;
  if (!deviceMemory(data, count * typeBytes(type))) {
    std::lock_guard<std::mutex> lock(comm->mutex);
    fail(*comm, kInvalidArgument,
         std::string(send ? "ncclSend" : "ncclRecv") +
             ": the buffer is not GPU memory (the fake CUDA driver's)");
    return kInvalidArgument;
  }
  Op op{send, peer, sendData, recvData, count, type, 0};
  if (groupDepth > 0) {
    staged.push_back({comm, op});
    return kSuccess;
  }
  int result = post(*comm, op);
  return result == kSuccess ? kInProgress : result;
}

std::string baseFolder() {
  for (const char *name : {"TANDEM_FAKE_NCCL_DIR", "TMPDIR"})
    if (const char *value = std::getenv(name); value && *value)
      return value;
  return "/tmp";
}

/// Removes the communicator's folder once every rank that joined has left
/// (a rank that never joined cannot join later: its peers gave up).
void removeIfEmpty(const Comm &comm) {
  for (int r = 0; r < comm.ranks; ++r) {
    std::string suffix = std::to_string(r);
    if (exists(comm.folder + "/joined-" + suffix) &&
        !exists(comm.folder + "/left-" + suffix))
      return;
  }
  if (DIR *dir = opendir(comm.folder.c_str())) {
    while (dirent *entry = readdir(dir))
      if (std::strcmp(entry->d_name, ".") && std::strcmp(entry->d_name, ".."))
        std::remove((comm.folder + "/" + entry->d_name).c_str());
    closedir(dir);
  }
  rmdir(comm.folder.c_str());
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
  case kSystemError:
    return "unhandled system error";
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
  return comm ? comm->lastError.c_str() : "";
}

int ncclGetUniqueId(UniqueId *id) {
  std::string pattern = baseFolder() + "/tandem-fake-nccl-XXXXXX";
  std::vector<char> folder(pattern.begin(), pattern.end());
  folder.push_back(0);
  if (!mkdtemp(folder.data()) || folder.size() > sizeof id->internal)
    return kSystemError;
  std::memset(id->internal, 0, sizeof id->internal);
  std::memcpy(id->internal, folder.data(), folder.size());
  return kSuccess;
}

int ncclCommInitRankConfig(Comm **out, int ranks, UniqueId id, int rank,
                           Config *config) {
  *out = nullptr;
  if (!config || config->blocking != 0)
    return kInvalidUsage; // The fake serves non-blocking communicators.
  if (ranks < 1 || rank < 0 || rank >= ranks)
    return kInvalidArgument;
  auto comm = new Comm();
  comm->folder.assign(id.internal, strnlen(id.internal, sizeof id.internal));
  comm->rank = rank;
  comm->ranks = ranks;
  comm->sent.assign(ranks, 0);
  comm->received.assign(ranks, 0);
  std::string joined = comm->folder + "/joined-" + std::to_string(rank);
  if (exists(joined) || !writeWhole(joined, "", 0, nullptr, 0)) {
    delete comm;
    return kInvalidUsage; // Joined twice, or not a communicator's folder.
  }
  *out = comm;
  return kInProgress;
}

int ncclCommGetAsyncError(Comm *comm, int *state) {
  if (!comm)
    return kInvalidArgument;
  std::lock_guard<std::mutex> lock(comm->mutex);
  if (!comm->formed) {
    comm->formed = true;
    for (int r = 0; r < comm->ranks; ++r)
      comm->formed &= exists(comm->folder + "/joined-" + std::to_string(r));
  }
  if (comm->formed && comm->error == kSuccess)
    for (auto it = comm->pending.begin(); it != comm->pending.end();)
      it = progress(*comm, *it) ? comm->pending.erase(it) : std::next(it);
  *state = comm->error != kSuccess                   ? comm->error
           : !comm->formed || !comm->pending.empty() ? kInProgress
                                                     : kSuccess;
  return kSuccess;
}

int ncclCommFinalize(Comm *comm) { return comm ? kSuccess : kInvalidArgument; }

int ncclCommDestroy(Comm *comm) {
  if (!comm)
    return kInvalidArgument;
  // What this rank sent and nobody took goes with it.
  for (const Op &op : comm->pending)
    if (op.send)
      std::remove(messagePath(*comm, comm->rank, op.peer, op.sequence).c_str());
  writeWhole(comm->folder + "/left-" + std::to_string(comm->rank), "", 0,
             nullptr, 0);
  removeIfEmpty(*comm);
  delete comm;
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
  std::vector<std::pair<Comm *, Op>> ops;
  ops.swap(staged);
  int result = kSuccess;
  for (auto &[comm, op] : ops)
    if (int posted = post(*comm, op); posted != kSuccess && result == kSuccess)
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
