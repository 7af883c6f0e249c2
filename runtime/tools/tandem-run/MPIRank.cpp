//===- MPIRank.cpp - a rank that is an MPI process ------------------------===//
//
// Built with MPI (TANDEM_RUN_HAS_MPI): MPI_Init, the MPI control plane and
// transport, the rank main, MPI_Finalize. Without MPI, a clear error.
//
//===----------------------------------------------------------------------===//

#include "RankMain.h"

#ifdef TANDEM_RUN_HAS_MPI

#include "tandem/Runtime/MPIControlPlane.h"
#include "tandem/Runtime/MPITransport.h"

#include <mpi.h>

#include <vector>

using namespace tandem;
using namespace tandem::run;
using namespace tandem::runtime;

/// Opens MPI's paths to every other rank before the rank main measures its
/// memory baseline: a collective, and one message each way with every peer,
/// large enough to take the rendezvous protocol. The transport's per-peer
/// buffers and queues, sized by MPI and not by the program, then land in
/// the baseline like MPI's own start-up.
static void warmUpTransport(int rank, int size) {
  int one = 1, sum = 0;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  const int bytes = 256 * 1024;
  std::vector<char> out(bytes, 0), in(bytes);
  for (int shift = 1; shift < size; ++shift)
    MPI_Sendrecv(out.data(), bytes, MPI_CHAR, (rank + shift) % size, 0,
                 in.data(), bytes, MPI_CHAR, (rank - shift + size) % size, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Barrier(MPI_COMM_WORLD);
}

int tandem::run::runMPIRank(const Options &o, const LaunchInfo &launch) {
  MPI_Init(nullptr, nullptr);
  int status = 0;
  {
    MPIControlPlane control(MPI_COMM_WORLD);
    if (control.rank() != launch.rank)
      control.abortJob("the launcher says rank " + std::to_string(launch.rank) +
                       " but MPI says " + std::to_string(control.rank()));
    MPITransport mpi(MPI_COMM_WORLD, o.timeout, o.linkDelayMs / 1000.0);
    warmUpTransport(static_cast<int>(control.rank()),
                    static_cast<int>(control.size()));
    RankEnvironment env(control);
    env.localRank = launch.localRank;
    env.launcher = launch.launcher;
    env.transport = &mpi;
    env.setContext = [&](const std::string &text) { mpi.setContext(text); };
    status = runRank(o, env);
  }
  MPI_Finalize();
  return status;
}

#else

int tandem::run::runMPIRank(const Options &o,
                            const runtime::LaunchInfo &launch) {
  return fail("this tandem-run was built without MPI, but " + launch.launcher +
              " started it as rank " + std::to_string(launch.rank) +
              ": run it directly with --transport inproc (every rank a "
              "thread of one process), or build it where MPI is installed");
}

#endif
