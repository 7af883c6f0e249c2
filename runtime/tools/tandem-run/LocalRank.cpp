//===- LocalRank.cpp - a rank that tandem-run started itself --------------===//
//
// --launcher local (Launch.h): the rank joins the socket control plane its
// launcher set up and exchanges over NCCL, the one transport between
// processes that needs no MPI.
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
  std::unique_ptr<SocketControlPlane> control =
      SocketControlPlane::join(name, listener ? std::atoi(listener) : -1,
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
