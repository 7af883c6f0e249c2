//===- SocketControlPlane.h - the control plane of local processes -*- C++
//-*-===//
//
// Ranks that are processes of one machine which tandem-run started itself
// (--launcher local: no mpirun, no MPI, as on a GPU machine without MPI).
// Rank 0 is the hub: every other rank holds one Unix-domain stream socket
// to it (an abstract name, so no file is left behind), and every call goes
// through the hub as length-prefixed messages. The launcher creates the
// listening socket before it starts the ranks and hands it to rank 0, so
// no rank can connect before the hub listens. A closed connection (a rank
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

class SocketControlPlane final : public ControlPlane {
public:
  /// Joins the job's control plane as `rank` of `size`: rank 0 accepts the
  /// other ranks on `listener` (from listenControlSocket), the others
  /// connect to `name`. Waits at most `timeoutSeconds` for the connections;
  /// nullptr with `error`. `launcher`: the process that started this rank
  /// and reports its peers' failures (see peerEnded), or 0.
  static std::unique_ptr<SocketControlPlane>
  join(const std::string &name, int listener, int64_t rank, int64_t size,
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

private:
  SocketControlPlane(int64_t rank, int64_t size) : self(rank), ranks(size) {}
  /// One message to / from rank `peer` (the hub's connection to it, or a
  /// rank's connection to the hub when `peer` is 0); ends the job when the
  /// connection fails.
  void send(int64_t peer, const std::string &bytes);
  std::string receive(int64_t peer);
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
