//===- SocketRank.cpp - a rank whose control plane is a socket ------------===//
//
// Ranks with no MPI between them (SocketControlPlane.h) that exchange over
// NCCL, the one transport between processes that needs no MPI: processes
// tandem-run --launcher local started (Launch.h), which join the socket
// their launcher set up, and processes srun or mpirun started, which meet
// rank 0 at the --rendezvous address.
//
//===----------------------------------------------------------------------===//

#include "Launch.h"
#include "RankMain.h"

#include "tandem/Runtime/SocketControlPlane.h"

#include <unistd.h>

#include <cstdlib>

using namespace tandem;
using namespace tandem::run;
using namespace tandem::runtime;

int tandem::run::runLocalRank(const Options &o, const LaunchInfo &launch) {
  const char *name = std::getenv(kControlVariable);
  const char *listener = std::getenv(kControlFdVariable);
  if (!name)
    return fail("TANDEM_RUN_LOCAL_RANK is set but " +
                std::string(kControlVariable) +
                " is not: only tandem-run --launcher local starts such ranks");
  std::string error;
  std::unique_ptr<SocketControlPlane> control = SocketControlPlane::join(
      ControlAddress{name, "", "", ""}, listener ? std::atoi(listener) : -1,
      launch.rank, launch.size, o.timeout, error,
      // The launcher reports a peer's failure.
      getppid());
  if (!control)
    return fail("rank " + std::to_string(launch.rank) + ": " + error);
  if (o.transport != "nccl")
    control->abortJob("rank " + std::to_string(launch.rank) +
                      ": --launcher local starts processes that exchange "
                      "over NCCL: give --transport nccl");
  RankEnvironment env(*control);
  env.localRank = launch.localRank;
  env.launcher = launch.launcher;
  return runRank(o, env);
}

int tandem::run::runRendezvousRank(const Options &o, const LaunchInfo &launch) {
  ControlAddress hub{"", o.rendezvousHost, o.rendezvousPort, launch.job};
  std::string error;
  std::unique_ptr<SocketControlPlane> control = SocketControlPlane::join(
      hub, /*listener=*/-1, launch.rank, launch.size, o.timeout, error);
  if (!control)
    return fail("rank " + std::to_string(launch.rank) + ": " + error);
  RankEnvironment env(*control);
  env.localRank = launch.localRank;
  env.launcher = launch.launcher;
  // srun and mpirun may leave the other ranks running when one dies; a
  // rank that sees it ends the job instead of waiting for the --timeout.
  env.watchPeers = true;
  return runRank(o, env);
}
