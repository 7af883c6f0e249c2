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
// hanging. Library TandemRuntimeMPI; built when CMake finds MPI.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_MPITRANSPORT_H
#define TANDEM_RUNTIME_MPITRANSPORT_H

#include "tandem/Runtime/Transport.h"

#include <mpi.h>

namespace tandem::runtime {

class MPITransport final : public Transport {
public:
  /// `timeoutSeconds`: how long one group may wait before the step fails.
  MPITransport(MPI_Comm comm, double timeoutSeconds);

  bool exchange(int64_t rank, std::vector<TransportOp> &group,
                std::string &error) override;
  void finish(int64_t rank) override {}
  /// Prints `reason` and ends every rank of the job (MPI_Abort): the other
  /// ranks may be blocked on this one.
  void abort(const std::string &reason) override;
  /// Text put before the reason in abort messages (tandem-run: "step 3: ").
  void setContext(std::string text) { context = std::move(text); }

private:
  std::string context;
  MPI_Comm comm;
  double timeoutSeconds;
  int tagUpperBound = 32767;
};

} // namespace tandem::runtime

#endif // TANDEM_RUNTIME_MPITRANSPORT_H
