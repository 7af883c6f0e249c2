//===- MPITransport.h - send/recv groups over MPI ----------------*- C++
//-*-===//
//
// The runtime's transport for ranks that are MPI processes (tandem-run).
// A group's sends are synchronous-mode (MPI_Issend: complete only once the
// matching receive has started, the rendezvous semantics mpmd-verify
// assumes), its receives MPI_Irecv, all posted at once; the message tag is
// the channel, and MPI's non-overtaking rule pairs messages between two
// ranks on one channel in posting order, as the compiled sequence numbers
// expect. Completion is polled, so a group that waits longer than the
// timeout fails with a message naming every op still pending instead of
// hanging. With a propagation delay, every send also carries its send
// time (the monotonic clock, one for all processes of a machine, so the
// ranks of network-namespace hosts share it) on a communicator of its
// own, and a wait holds the received messages until their send time plus
// the delay: the link behaves as a long one, and no sender sleeps.
// Library TandemRuntimeMPI; built when CMake finds MPI.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_MPITRANSPORT_H
#define TANDEM_RUNTIME_MPITRANSPORT_H

#include "tandem/Runtime/Transport.h"

#include <mpi.h>

#include <map>

namespace tandem::runtime {

class MPITransport final : public Transport {
public:
  /// `timeoutSeconds`: how long one group may wait before the step fails.
  /// `delaySeconds` > 0: every send/recv message arrives that long after it
  /// was sent (at most an hour; not the collectives; collective over
  /// `comm`: every rank must pass the same).
  MPITransport(MPI_Comm comm, double timeoutSeconds, double delaySeconds = 0.0);
  ~MPITransport() override;
  MPITransport(const MPITransport &) = delete;
  MPITransport &operator=(const MPITransport &) = delete;

  /// Each op a non-blocking MPI call (MPI_Issend, MPI_Irecv), a channel
  /// its tag.
  bool post(int64_t rank, std::vector<TransportOp> &group,
            std::string &error) override;
  /// No: messages move only inside MPI calls.
  bool postedOpsMoveAlone() const override { return false; }
  /// Tests the ops' requests until they complete or the timeout passes.
  bool wait(int64_t rank, const std::vector<TransportOp *> &ops,
            std::string &error) override;
  /// Every member sends its value (with a header the others check) to
  /// every other member on a communicator of the collectives' own, and
  /// folds them in group order itself; a broadcast's root sends to the
  /// others. Host memory.
  bool collective(int64_t rank, CollectiveOp &op, std::string &error) override;
  void finish(int64_t rank) override {}
  /// Prints `reason` and ends every rank of the job (MPI_Abort): the other
  /// ranks may be blocked on this one.
  void abort(const std::string &reason) override;
  /// Text put before the reason in abort messages (tandem-run: "step 3: ").
  void setContext(std::string text) { context = std::move(text); }

private:
  /// poll's answer when the timeout passed first.
  static constexpr int kTimedOut = -1;
  /// Tests `requests` until all complete: MPI_SUCCESS, an MPI error code
  /// (`statuses` filled), or kTimedOut.
  int poll(std::vector<MPI_Request> &requests,
           std::vector<MPI_Status> &statuses);
  /// "no progress for T s (the --timeout)".
  std::string timeoutText() const;

  std::string context;
  /// The request of every posted op not yet waited for.
  std::map<const TransportOp *, MPI_Request> posted;
  /// With a delay: each posted op's send time (nanoseconds of the
  /// monotonic clock; sent, or received into) and its request.
  struct Stamp {
    int64_t nanoseconds = 0;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  std::map<const TransportOp *, Stamp> stamps;
  MPI_Comm comm, collectiveComm = MPI_COMM_NULL, stampComm = MPI_COMM_NULL;
  double timeoutSeconds;
  /// The propagation delay (at most an hour; 0: none).
  int64_t delayNanoseconds;
  int tagUpperBound = 32767;
};

} // namespace tandem::runtime

#endif // TANDEM_RUNTIME_MPITRANSPORT_H
