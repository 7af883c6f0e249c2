//===- TransportConformanceMPI.cpp - the conformance body over MPI --------===//
//
// TransportConformance.h's bodies with two MPI processes over MPITransport,
// and ControlPlaneConformance.h's over MPIControlPlane
// (ctest runs this under mpirun -np 2): each process runs its rank's side
// on a fresh communicator per test, with a short timeout for the silent
// peer. Both ranks print gtest's report (interleaved); a failure on either
// fails the job's exit status.
//
//===----------------------------------------------------------------------===//

#include "ControlPlaneConformance.h"
#include "TransportConformance.h"

#include "tandem/Runtime/MPIControlPlane.h"
#include "tandem/Runtime/MPITransport.h"

#include <mpi.h>

#include <cstdio>

using namespace tandem::runtime;

namespace {

int worldRank = 0;

/// Runs `body` on this process's rank; then, once every rank is through,
/// `drain` (a message a body left unmatched on purpose must be received
/// before MPI_Finalize).
void runOverMpi(void (*body)(Transport &, int64_t), double timeout = 30.0,
                void (*drain)(MPI_Comm) = nullptr) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  {
    MPITransport transport(comm, timeout);
    body(transport, worldRank);
  }
  MPI_Barrier(comm);
  if (drain)
    drain(comm);
  MPI_Barrier(comm);
  MPI_Comm_free(&comm);
}

/// The silent peer's probe, received late so that its synchronous send
/// completes; polled against a deadline, so a probe that never comes
/// fails the test instead of hanging it.
void drainProbe(MPI_Comm comm) {
  if (worldRank != 1)
    return;
  double deadline = MPI_Wtime() + 10.0;
  int arrived = 0;
  while (!arrived && MPI_Wtime() < deadline)
    MPI_Iprobe(0, 5, comm, &arrived, MPI_STATUS_IGNORE);
  ASSERT_TRUE(arrived) << "rank 0's probe never arrived on channel 5";
  int32_t value = 0;
  MPI_Recv(&value, sizeof value, MPI_BYTE, 0, 5, comm, MPI_STATUS_IGNORE);
}

} // namespace

TANDEM_TRANSPORT_CONFORMANCE_TESTS(MPITransportConformance, runOverMpi, 0.5,
                                   drainProbe)

TEST(MPIControlPlane, Conformance) {
  MPIControlPlane plane(MPI_COMM_WORLD);
  EXPECT_TRUE(plane.ranksAreProcesses());
  EXPECT_EQ(plane.rank(), worldRank);
  tandem::runtime::testing::checkControlPlane(plane);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  ::testing::InitGoogleTest(&argc, argv);
  if (size != 2) {
    if (worldRank == 0)
      std::fprintf(stderr, "run under mpirun -np 2 (this job has %d)\n", size);
    MPI_Finalize();
    return 1;
  }
  int failed = RUN_ALL_TESTS();
  int anyFailed = 0;
  MPI_Allreduce(&failed, &anyFailed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return anyFailed;
}
