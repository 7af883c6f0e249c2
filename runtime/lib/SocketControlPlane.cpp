//===- SocketControlPlane.cpp - the control plane of local processes ------===//

#include "tandem/Runtime/SocketControlPlane.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>

using namespace tandem::runtime;

namespace {

/// The abstract address of `name` (a leading NUL: no file).
bool addressOf(const std::string &name, sockaddr_un &address,
               socklen_t &length) {
  std::memset(&address, 0, sizeof address);
  address.sun_family = AF_UNIX;
  if (name.empty() || name.size() + 1 > sizeof address.sun_path)
    return false;
  std::memcpy(address.sun_path + 1, name.data(), name.size());
  length =
      static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  return true;
}

bool writeAll(int fd, const void *data, size_t size) {
  const char *at = static_cast<const char *>(data);
  while (size > 0) {
    ssize_t wrote = ::send(fd, at, size, MSG_NOSIGNAL);
    if (wrote < 0 && errno == EINTR)
      continue;
    if (wrote <= 0)
      return false;
    at += wrote;
    size -= static_cast<size_t>(wrote);
  }
  return true;
}

bool readAll(int fd, void *data, size_t size) {
  char *at = static_cast<char *>(data);
  while (size > 0) {
    ssize_t got = ::recv(fd, at, size, 0);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      return false;
    at += got;
    size -= static_cast<size_t>(got);
  }
  return true;
}

/// Milliseconds left until `deadline`, at least 0.
int millisecondsUntil(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                  deadline - std::chrono::steady_clock::now())
                  .count();
  return static_cast<int>(std::clamp<long long>(left, 0, INT32_MAX));
}

std::string secondsText(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

} // namespace

int tandem::runtime::listenControlSocket(std::string &name,
                                         std::string &error) {
  std::random_device entropy;
  for (int attempt = 0; attempt < 8; ++attempt) {
    char text[64];
    std::snprintf(text, sizeof text, "tandem-run-%d-%08x", int(getpid()),
                  unsigned(entropy()));
    name = text;
    sockaddr_un address;
    socklen_t length = 0;
    addressOf(name, address, length);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) {
      error = std::string("cannot create the control socket: ") +
              std::strerror(errno);
      return -1;
    }
    if (bind(fd, reinterpret_cast<sockaddr *>(&address), length) == 0 &&
        listen(fd, SOMAXCONN) == 0)
      return fd;
    int failure = errno;
    close(fd);
    if (failure != EADDRINUSE) {
      error = std::string("cannot listen on the control socket: ") +
              std::strerror(failure);
      return -1;
    }
  }
  error = "cannot find a free name for the control socket";
  return -1;
}

std::unique_ptr<SocketControlPlane>
SocketControlPlane::join(const std::string &name, int listener, int64_t rank,
                         int64_t size, double timeoutSeconds,
                         std::string &error, int launcher) {
  if (size < 1 || rank < 0 || rank >= size) {
    error = "rank " + std::to_string(rank) + " of " + std::to_string(size) +
            " ranks";
    return nullptr;
  }
  std::unique_ptr<SocketControlPlane> plane(new SocketControlPlane(rank, size));
  plane->launcher = launcher;
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::duration<double>(timeoutSeconds));
  const std::string waited =
      "within " + secondsText(timeoutSeconds) + " s (the --timeout)";
  if (rank != 0) {
    sockaddr_un address;
    socklen_t length = 0;
    if (!addressOf(name, address, length)) {
      error = "the control socket's name '" + name + "' is not usable";
      return nullptr;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    // The hub listens before any rank starts: a refusal means it is gone.
    if (fd < 0 ||
        connect(fd, reinterpret_cast<sockaddr *>(&address), length) != 0) {
      error = std::string("cannot reach rank 0's control socket: ") +
              std::strerror(errno);
      if (fd >= 0)
        close(fd);
      return nullptr;
    }
    plane->sockets.assign(1, fd);
    if (!writeAll(fd, &rank, sizeof rank)) {
      error = "rank 0 closed the control connection";
      return nullptr;
    }
    return plane;
  }
  plane->sockets.assign(size, -1);
  for (int64_t joined = 1; joined < size; ++joined) {
    pollfd wait = {listener, POLLIN, 0};
    int ready = poll(&wait, 1, millisecondsUntil(deadline));
    if (ready <= 0) {
      std::string missing;
      for (int64_t r = 1; r < size; ++r)
        if (plane->sockets[r] < 0)
          missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      error = "rank" + std::string(size - joined > 1 ? "s " : " ") + missing +
              " did not join the control plane " + waited;
      return nullptr;
    }
    int fd = accept(listener, nullptr, nullptr);
    int64_t peer = -1;
    if (fd < 0 || !readAll(fd, &peer, sizeof peer) || peer <= 0 ||
        peer >= size || plane->sockets[peer] >= 0) {
      error = "a process that is no rank of this job (or a rank twice) "
              "joined the control plane";
      if (fd >= 0)
        close(fd);
      return nullptr;
    }
    plane->sockets[peer] = fd;
  }
  return plane;
}

SocketControlPlane::~SocketControlPlane() {
  for (int fd : sockets)
    if (fd >= 0)
      close(fd);
}

/// A rank whose connection closed: the peer's process ended, and said why
/// (or its launcher will, if it died). While the launcher that started
/// this rank lives, it reports and stops the job, so the rank ends quietly
/// (status 1, which the launcher does not report); a rank left alone says
/// what happened.
[[noreturn]] static void peerEnded(int64_t self, int64_t peer, pid_t launcher) {
  if (launcher <= 1 || getppid() != launcher)
    std::fprintf(stderr,
                 "tandem-run: error: rank %lld: the control connection to "
                 "rank %lld closed (its process ended)\n",
                 static_cast<long long>(self), static_cast<long long>(peer));
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(1);
}

void SocketControlPlane::send(int64_t peer, const std::string &bytes) {
  int fd = sockets[self == 0 ? peer : 0];
  uint64_t length = bytes.size();
  if (!writeAll(fd, &length, sizeof length) ||
      !writeAll(fd, bytes.data(), bytes.size()))
    peerEnded(self, self == 0 ? peer : 0, launcher);
}

std::string SocketControlPlane::receive(int64_t peer) {
  int fd = sockets[self == 0 ? peer : 0];
  uint64_t length = 0;
  std::string bytes;
  bool ok = readAll(fd, &length, sizeof length);
  if (ok) {
    bytes.resize(length);
    ok = readAll(fd, bytes.data(), bytes.size());
  }
  if (!ok)
    peerEnded(self, self == 0 ? peer : 0, launcher);
  return bytes;
}

std::vector<std::string> SocketControlPlane::collect(const std::string &bytes) {
  std::vector<std::string> all;
  if (self != 0) {
    send(0, bytes);
    return all;
  }
  all.resize(ranks);
  all[0] = bytes;
  for (int64_t r = 1; r < ranks; ++r)
    all[r] = receive(r);
  return all;
}

void SocketControlPlane::barrier() {
  collect("");
  if (self != 0) {
    receive(0);
    return;
  }
  for (int64_t r = 1; r < ranks; ++r)
    send(r, "");
}

int64_t SocketControlPlane::maxOf(int64_t value) {
  std::string mine(sizeof value, '\0');
  std::memcpy(mine.data(), &value, sizeof value);
  std::vector<std::string> all = collect(mine);
  if (self != 0) {
    std::string most = receive(0);
    std::memcpy(&value, most.data(), std::min(most.size(), sizeof value));
    return value;
  }
  for (const std::string &theirs : all) {
    int64_t v = 0;
    std::memcpy(&v, theirs.data(), std::min(theirs.size(), sizeof v));
    value = std::max(value, v);
  }
  std::memcpy(mine.data(), &value, sizeof value);
  for (int64_t r = 1; r < ranks; ++r)
    send(r, mine);
  return value;
}

std::vector<std::string> SocketControlPlane::gather(const std::string &bytes,
                                                    int64_t root) {
  std::vector<std::string> all = collect(bytes);
  if (root == 0)
    return all;
  if (self == 0) {
    // On to the root: the count, then each part as a message.
    send(root, std::to_string(all.size()));
    for (const std::string &part : all)
      send(root, part);
    return {};
  }
  if (self != root)
    return {};
  std::string count = receive(0);
  all.resize(std::strtoull(count.c_str(), nullptr, 10));
  for (std::string &part : all)
    part = receive(0);
  return all;
}

void SocketControlPlane::broadcast(void *data, size_t size, int64_t root) {
  std::string bytes(static_cast<const char *>(data), size);
  if (root != 0) {
    if (self == root)
      send(0, bytes);
    else if (self == 0)
      bytes = receive(root);
  }
  if (self == 0) {
    for (int64_t r = 1; r < ranks; ++r)
      if (r != root)
        send(r, bytes);
  } else if (self != root) {
    bytes = receive(0);
  }
  std::memcpy(data, bytes.data(), std::min(size, bytes.size()));
}

void SocketControlPlane::abortJob(const std::string &message) {
  std::fprintf(stderr, "tandem-run: error: %s\n", message.c_str());
  std::fflush(stdout);
  std::fflush(stderr);
  // tandem-run's launcher sees the status and stops the other ranks.
  std::_Exit(1);
}
