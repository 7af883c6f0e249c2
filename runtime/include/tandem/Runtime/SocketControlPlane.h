//===- SocketControlPlane.h - a control plane over sockets ------*- C++ -*-===//
//
// Ranks that are processes with no MPI between them: processes of one
// machine which tandem-run started itself (--launcher local, as on a GPU
// machine without MPI), or processes srun or mpirun started on any hosts
// that meet at a TCP address (--rendezvous HOST:PORT, where rank 0 runs).
// Rank 0 is the hub: every other rank holds one stream socket to it (for
// local processes a Unix-domain socket under an abstract name, so no file
// is left behind), and every call goes through the hub as length-prefixed
// messages. A rank connecting says its rank, the job's size and the
// launcher's name for the job; the hub refuses a rank of another job and
// ignores a connection that is no rank at all. The local launcher creates
// the listening socket before it starts the ranks and hands it to rank 0,
// so no rank can connect before the hub listens; at a --rendezvous address
// the ranks try again until rank 0 listens. A closed connection (a rank
// that died or failed) ends this rank too, quietly while its launcher
// lives (the launcher reports the cause and stops the others), else with
// a message naming the peer. No MPI.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_SOCKETCONTROLPLANE_H
#define TANDEM_RUNTIME_SOCKETCONTROLPLANE_H

#include "tandem/Runtime/ControlPlane.h"

namespace tandem::runtime {

/// A listening socket under a fresh abstract name (returned in `name`);
/// the descriptor, or -1 with `error`.
int listenControlSocket(std::string &name, std::string &error);

/// A TCP socket listening on `port` of every interface (port 0 takes a
/// free one, see controlPort), once `host` proved to name this machine;
/// the descriptor, or -1 with `error`.
int listenControlTcp(const std::string &host, const std::string &port,
                     std::string &error);

/// The TCP port `listener` listens on, or -1.
int controlPort(int listener);

/// Where the ranks meet rank 0: a local launcher's abstract socket `name`,
/// or, when `host` is set, the TCP address `host`:`port`. `job` is the
/// launcher's name for the job (LaunchInfo::job), which every rank must
/// share.
struct ControlAddress {
  std::string name;
  std::string host, port;
  std::string job;
};

class SocketControlPlane final : public ControlPlane {
public:
  /// Joins the job's control plane as `rank` of `size`: rank 0 accepts the
  /// other ranks on `listener` (from listenControlSocket or
  /// listenControlTcp; -1: rank 0 listens on `hub`'s TCP address itself),
  /// the others connect to `hub`. Waits at most `timeoutSeconds` for the
  /// connections; nullptr with `error`. `launcher`: the process that
  /// started this rank and reports its peers' failures (see
  /// endOnClosedConnection), or 0.
  static std::unique_ptr<SocketControlPlane>
  join(const ControlAddress &hub, int listener, int64_t rank, int64_t size,
       double timeoutSeconds, std::string &error, int launcher = 0);
  ~SocketControlPlane() override;
  SocketControlPlane(const SocketControlPlane &) = delete;
  SocketControlPlane &operator=(const SocketControlPlane &) = delete;

  int64_t rank() const override { return self; }
  int64_t size() const override { return ranks; }
  bool ranksAreProcesses() const override { return true; }
  void barrier() override;
  int64_t maxOf(int64_t value) override;
  std::vector<std::string> gather(const std::string &bytes,
                                  int64_t root) override;
  void broadcast(void *data, size_t size, int64_t root) override;
  [[noreturn]] void abortJob(const std::string &message) override;
  /// A connection the peer has shut with nothing left unread (a rank that
  /// ends normally has sent its last message first): the hub sees any
  /// rank's, a rank the hub's.
  std::string peerEnded() override;

private:
  SocketControlPlane(int64_t rank, int64_t size) : self(rank), ranks(size) {}
  /// One message to / from rank `peer` (the hub's connection to it, or a
  /// rank's connection to the hub when `peer` is 0); ends the job when the
  /// connection fails.
  void send(int64_t peer, const std::string &bytes);
  /// On the hub, `watchFrom` > 0: while it waits for `peer`, a rank from
  /// `watchFrom` on whose process ends without a word ends the job too.
  std::string receive(int64_t peer, int64_t watchFrom = 0);
  /// On the hub every rank's `bytes` in rank order; elsewhere sends them
  /// to the hub and returns nothing.
  std::vector<std::string> collect(const std::string &bytes);

  int64_t self, ranks;
  /// The launcher that started this rank, or 0.
  int launcher = 0;
  /// By rank: the hub's connections (index 0 unused), or a rank's one
  /// connection to the hub at index 0.
  std::vector<int> sockets;
};

} // namespace tandem::runtime

#endif // TANDEM_RUNTIME_SOCKETCONTROLPLANE_H
