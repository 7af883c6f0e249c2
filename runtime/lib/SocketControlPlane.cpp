//===- SocketControlPlane.cpp - the control plane of local processes ------===//

#include "tandem/Runtime/SocketControlPlane.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
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

/// Milliseconds left until `deadline`, at least 0.
int millisecondsUntil(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                  deadline - std::chrono::steady_clock::now())
                  .count();
  return static_cast<int>(std::clamp<long long>(left, 0, INT32_MAX));
}

using TimePoint = std::chrono::steady_clock::time_point;

/// `size` bytes from `fd`, waiting at most until `deadline` (by default
/// for as long as it takes).
bool readAll(int fd, void *data, size_t size,
             TimePoint deadline = TimePoint::max()) {
  char *at = static_cast<char *>(data);
  while (size > 0) {
    if (deadline != TimePoint::max()) {
      pollfd wait = {fd, POLLIN, 0};
      int ready = poll(&wait, 1, millisecondsUntil(deadline));
      if (ready < 0 && errno == EINTR)
        continue;
      if (ready <= 0)
        return false;
    }
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

namespace {

/// What a rank sends the hub when it connects: the magic, its rank, the
/// job's size and the launcher's name for the job. The hub answers with a
/// message: empty when it took the rank, else why not.
constexpr char kMagic[8] = {'t', 'n', 'd', 'm', 'c', 't', 'l', '1'};

/// A length-prefixed message of at most `limit` bytes, by `deadline`.
bool readMessageBy(int fd, std::string &bytes, size_t limit,
                   TimePoint deadline) {
  uint64_t length = 0;
  if (!readAll(fd, &length, sizeof length, deadline) || length > limit)
    return false;
  bytes.assign(length, '\0');
  return readAll(fd, bytes.data(), bytes.size(), deadline);
}

bool writeMessage(int fd, const std::string &bytes) {
  uint64_t length = bytes.size();
  return writeAll(fd, &length, sizeof length) &&
         writeAll(fd, bytes.data(), bytes.size());
}

/// Small messages (barriers, the id) go out at once.
void sendPromptly(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/// `host`:`port` for messages, an IPv6 address in brackets.
std::string endpointText(const std::string &host, const std::string &port) {
  if (host.find(':') != std::string::npos)
    return "[" + host + "]:" + port;
  return host + ":" + port;
}

/// The addresses `host`:`port` names, or null with `error`.
addrinfo *resolve(const std::string &host, const std::string &port,
                  bool listening, std::string &error) {
  addrinfo hints;
  std::memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | (listening ? AI_PASSIVE : 0);
  addrinfo *found = nullptr;
  int status = getaddrinfo(host.c_str(), port.c_str(), &hints, &found);
  if (status != 0) {
    error = "cannot resolve " + endpointText(host, port) + ": " +
            gai_strerror(status);
    return nullptr;
  }
  return found;
}

/// One connection attempt to `address`, given up at `deadline`; the
/// descriptor (blocking again), or -1 with errno set.
int connectBy(const addrinfo &address,
              std::chrono::steady_clock::time_point deadline) {
  int fd = socket(address.ai_family,
                  address.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                  address.ai_protocol);
  if (fd < 0)
    return -1;
  int status = connect(fd, address.ai_addr, address.ai_addrlen);
  if (status != 0 && errno == EINPROGRESS) {
    pollfd wait = {fd, POLLOUT, 0};
    int ready;
    do
      ready = poll(&wait, 1, millisecondsUntil(deadline));
    while (ready < 0 && errno == EINTR);
    int failure = ETIMEDOUT;
    socklen_t length = sizeof failure;
    if (ready > 0)
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &failure, &length);
    status = failure == 0 ? 0 : -1;
    errno = failure;
  }
  if (status != 0) {
    int failure = errno;
    close(fd);
    errno = failure;
    return -1;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

} // namespace

int tandem::runtime::listenControlTcp(const std::string &host,
                                      const std::string &port,
                                      std::string &error) {
  addrinfo *found = resolve(host, port, /*listening=*/false, error);
  if (!found)
    return -1;
  // `host` must name this machine: one of its addresses binds here.
  int failure = EADDRNOTAVAIL;
  int family = -1;
  for (addrinfo *at = found; at && family < 0; at = at->ai_next) {
    int probe = socket(at->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (probe < 0) {
      failure = errno;
      continue;
    }
    sockaddr_storage address;
    std::memcpy(&address, at->ai_addr, at->ai_addrlen);
    if (at->ai_family == AF_INET)
      reinterpret_cast<sockaddr_in &>(address).sin_port = 0;
    else if (at->ai_family == AF_INET6)
      reinterpret_cast<sockaddr_in6 &>(address).sin6_port = 0;
    if (bind(probe, reinterpret_cast<sockaddr *>(&address), at->ai_addrlen) ==
        0)
      family = at->ai_family;
    else if (errno != EADDRNOTAVAIL || failure == EADDRNOTAVAIL)
      failure = errno;
    close(probe);
  }
  freeaddrinfo(found);
  auto cannot = [&](int why) {
    error = "rank 0 cannot listen on " + endpointText(host, port) + ": " +
            std::strerror(why);
    if (why == EADDRNOTAVAIL)
      error += " (the address is not this host's: --rendezvous names the "
               "host of rank 0)";
    else if (why == EADDRINUSE)
      error += " (another process holds the port: choose another)";
    return -1;
  };
  if (family != AF_INET && family != AF_INET6)
    return cannot(failure);
  // Rank 0 listens on every interface: the host's own name may resolve to
  // a loopback address there (Debian's /etc/hosts gives it 127.0.1.1)
  // while the other hosts reach it by another. IPv6 and IPv4 both where
  // the machine has IPv6 (IPv4 peers arrive as mapped addresses), since a
  // peer may resolve the name to either; else IPv4.
  const uint16_t number = htons(static_cast<uint16_t>(std::atoi(port.c_str())));
  int why = 0;
  for (int wildcard : {AF_INET6, AF_INET}) {
    int fd = socket(wildcard, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      why = errno;
      continue;
    }
    // A job that just ended leaves the port in TIME_WAIT; the next one may
    // take it.
    int one = 1, zero = 0;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_storage any;
    std::memset(&any, 0, sizeof any);
    socklen_t length = 0;
    if (wildcard == AF_INET6) {
      setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
      auto &v6 = reinterpret_cast<sockaddr_in6 &>(any);
      v6.sin6_family = AF_INET6;
      v6.sin6_addr = in6addr_any;
      v6.sin6_port = number;
      length = sizeof v6;
    } else {
      auto &v4 = reinterpret_cast<sockaddr_in &>(any);
      v4.sin_family = AF_INET;
      v4.sin_addr.s_addr = htonl(INADDR_ANY);
      v4.sin_port = number;
      length = sizeof v4;
    }
    if (bind(fd, reinterpret_cast<sockaddr *>(&any), length) == 0 &&
        listen(fd, SOMAXCONN) == 0)
      return fd;
    why = errno;
    close(fd);
    // A port in use is in use for both.
    if (why == EADDRINUSE)
      break;
  }
  return cannot(why);
}

int tandem::runtime::controlPort(int listener) {
  sockaddr_storage address;
  socklen_t length = sizeof address;
  if (getsockname(listener, reinterpret_cast<sockaddr *>(&address), &length) !=
      0)
    return -1;
  if (address.ss_family == AF_INET)
    return ntohs(reinterpret_cast<sockaddr_in &>(address).sin_port);
  if (address.ss_family == AF_INET6)
    return ntohs(reinterpret_cast<sockaddr_in6 &>(address).sin6_port);
  return -1;
}

/// Connects to the hub: once to a local launcher's socket, which listens
/// before any rank starts (a refusal means it is gone); to a --rendezvous
/// address again and again until the deadline, since rank 0 may start
/// listening after the others start.
static int connectToHub(const ControlAddress &hub,
                        std::chrono::steady_clock::time_point deadline,
                        const std::string &waited, std::string &error) {
  if (hub.host.empty()) {
    sockaddr_un address;
    socklen_t length = 0;
    if (!addressOf(hub.name, address, length)) {
      error = "the control socket's name '" + hub.name + "' is not usable";
      return -1;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 ||
        connect(fd, reinterpret_cast<sockaddr *>(&address), length) != 0) {
      error = std::string("cannot reach rank 0's control socket: ") +
              std::strerror(errno);
      if (fd >= 0)
        close(fd);
      return -1;
    }
    return fd;
  }
  std::string lastError = "no address";
  auto pause = std::chrono::milliseconds(10);
  for (;;) {
    addrinfo *found =
        resolve(hub.host, hub.port, /*listening=*/false, lastError);
    for (addrinfo *at = found; at; at = at->ai_next) {
      // An address whose packets are dropped must not take the whole
      // --timeout from the others.
      int fd =
          connectBy(*at, std::min(deadline, std::chrono::steady_clock::now() +
                                                std::chrono::seconds(2)));
      if (fd >= 0) {
        freeaddrinfo(found);
        sendPromptly(fd);
        return fd;
      }
      lastError = std::strerror(errno);
    }
    if (found)
      freeaddrinfo(found);
    if (std::chrono::steady_clock::now() + pause >= deadline)
      break;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(500));
  }
  error = "cannot reach rank 0 at " + endpointText(hub.host, hub.port) + " " +
          waited + ": " + lastError;
  return -1;
}

std::unique_ptr<SocketControlPlane>
SocketControlPlane::join(const ControlAddress &hub, int listener, int64_t rank,
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
    int fd = connectToHub(hub, deadline, waited, error);
    if (fd < 0)
      return nullptr;
    plane->sockets.assign(1, fd);
    std::string hello(kMagic, sizeof kMagic);
    hello.append(reinterpret_cast<const char *>(&rank), sizeof rank);
    hello.append(reinterpret_cast<const char *>(&size), sizeof size);
    std::string answer;
    if (!writeAll(fd, hello.data(), hello.size()) ||
        !writeMessage(fd, hub.job) ||
        !readMessageBy(fd, answer, 16384, deadline)) {
      error = "rank 0 closed the control connection before taking this rank";
      return nullptr;
    }
    if (!answer.empty()) {
      error = "rank 0 refused this rank: " + answer;
      return nullptr;
    }
    return plane;
  }
  int ownListener = -1;
  if (listener < 0) {
    if (hub.host.empty()) {
      error = "rank 0 has no control socket to listen on";
      return nullptr;
    }
    listener = ownListener = listenControlTcp(hub.host, hub.port, error);
    if (listener < 0)
      return nullptr;
  }
  plane->sockets.assign(size, -1);
  int64_t joined = 1;
  while (joined < size) {
    pollfd wait = {listener, POLLIN, 0};
    int ready = poll(&wait, 1, millisecondsUntil(deadline));
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready <= 0) {
      std::string missing;
      for (int64_t r = 1; r < size; ++r)
        if (plane->sockets[r] < 0)
          missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      error = "rank" + std::string(size - joined > 1 ? "s " : " ") + missing +
              " did not join the control plane " + waited;
      break;
    }
    int fd = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0 && (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
                   errno == ENOMEM)) {
      error = std::string("rank 0 cannot take a connection: ") +
              std::strerror(errno);
      break;
    }
    if (fd < 0)
      continue;
    if (!hub.host.empty())
      sendPromptly(fd);
    // A connection that does not say it is a rank within a few seconds is
    // something else (a port scan, a health check) and is dropped.
    auto helloBy = std::min(deadline, std::chrono::steady_clock::now() +
                                          std::chrono::seconds(5));
    char magic[sizeof kMagic];
    int64_t peer = -1, peerSize = -1;
    std::string job;
    if (!readAll(fd, magic, sizeof magic, helloBy) ||
        std::memcmp(magic, kMagic, sizeof kMagic) != 0 ||
        !readAll(fd, &peer, sizeof peer, helloBy) ||
        !readAll(fd, &peerSize, sizeof peerSize, helloBy) ||
        !readMessageBy(fd, job, 4096, helloBy)) {
      close(fd);
      continue;
    }
    // A rank of another job that was pointed at the same address is told
    // so and dropped; this job's ranks may still come.
    if (job != hub.job) {
      writeMessage(fd, "rank 0 belongs to job '" + hub.job +
                           "', this rank to job '" + job + "'");
      close(fd);
      continue;
    }
    std::string refusal;
    if (peerSize != size)
      refusal = "rank " + std::to_string(peer) + " says the job has " +
                std::to_string(peerSize) + " ranks, rank 0 says " +
                std::to_string(size);
    else if (peer <= 0 || peer >= size)
      refusal = "rank " + std::to_string(peer) + " is not a rank of " +
                std::to_string(size);
    else if (plane->sockets[peer] >= 0)
      refusal = "rank " + std::to_string(peer) + " joined twice";
    if (!refusal.empty()) {
      writeMessage(fd, refusal);
      close(fd);
      error = refusal;
      break;
    }
    if (!writeMessage(fd, "")) {
      close(fd);
      continue;
    }
    plane->sockets[peer] = fd;
    ++joined;
  }
  if (ownListener >= 0)
    close(ownListener);
  if (joined < size)
    return nullptr;
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
[[noreturn]] static void endOnClosedConnection(int64_t self, int64_t peer,
                                               pid_t launcher) {
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
    endOnClosedConnection(self, self == 0 ? peer : 0, launcher);
}

/// Whether `fd`'s peer has shut the connection with nothing left unread:
/// it will never send again. (With unread bytes, its messages come first;
/// they end in the closed connection when read.)
static bool closedEmpty(int fd) {
  char byte;
  ssize_t got;
  do
    got = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  while (got < 0 && errno == EINTR);
  return got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

std::string SocketControlPlane::receive(int64_t peer, int64_t watchFrom) {
  int fd = sockets[self == 0 ? peer : 0];
  // The hub, collecting from the ranks in order, waits for `peer` while
  // ranks watchFrom... will send in this same call: one of those whose
  // process ends meanwhile is named at once, not when its turn comes.
  if (self == 0 && watchFrom > 0) {
    std::vector<pollfd> watched = {{fd, POLLIN | POLLRDHUP, 0}};
    std::vector<int64_t> peers = {peer};
    for (int64_t r = watchFrom; r < ranks; ++r) {
      watched.push_back({sockets[r], POLLRDHUP, 0});
      peers.push_back(r);
    }
    while (!(watched[0].revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR))) {
      int ready = poll(watched.data(), watched.size(), -1);
      if (ready < 0 && errno != EINTR)
        break;
      for (size_t i = 1; i < watched.size(); ++i) {
        if (!(watched[i].revents & (POLLRDHUP | POLLHUP | POLLERR)))
          continue;
        if (closedEmpty(watched[i].fd))
          endOnClosedConnection(self, peers[i], launcher);
        // Its message is there; it is read in its turn.
        watched[i].fd = -1;
      }
    }
  }
  uint64_t length = 0;
  std::string bytes;
  bool ok = readAll(fd, &length, sizeof length);
  if (ok) {
    bytes.resize(length);
    ok = readAll(fd, bytes.data(), bytes.size());
  }
  if (!ok)
    endOnClosedConnection(self, self == 0 ? peer : 0, launcher);
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
    all[r] = receive(r, r + 1);
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

std::string SocketControlPlane::peerEnded() {
  std::vector<pollfd> watched;
  std::vector<int64_t> peers;
  for (size_t i = 0; i < sockets.size(); ++i) {
    if (sockets[i] < 0)
      continue;
    watched.push_back({sockets[i], POLLRDHUP, 0});
    peers.push_back(self == 0 ? static_cast<int64_t>(i) : 0);
  }
  if (watched.empty() || poll(watched.data(), watched.size(), 0) <= 0)
    return "";
  for (size_t i = 0; i < watched.size(); ++i)
    if ((watched[i].revents & (POLLRDHUP | POLLHUP | POLLERR)) &&
        closedEmpty(watched[i].fd))
      return "rank " + std::to_string(peers[i]) +
             "'s process ended (its control connection closed)";
  return "";
}

void SocketControlPlane::abortJob(const std::string &message) {
  std::fprintf(stderr, "tandem-run: error: %s\n", message.c_str());
  std::fflush(stdout);
  std::fflush(stderr);
  // tandem-run's launcher sees the status and stops the other ranks.
  std::_Exit(1);
}
