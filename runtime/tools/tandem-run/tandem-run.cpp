//===- tandem-run.cpp - multi-process pipeline training over MPI ----------===//
//
// tandem-run DIR (--data | --arrays | --inputs) FILE [--steps N]
//            [--first-step K] [--seed N]
//            [--device cpu|cuda[:N]] [--transport mpi|nccl|inproc]
//            [--launcher mpirun|local|threads]
//            [--params FILE] [--save-params FILE] [--held-out-fraction F]
//            [--timeout SECONDS] [--threads T] [--trace FILE]
//            [--mpirun PATH] [--print-command] [--rendezvous HOST:PORT]
//            [--ranks-per-host N [--hosts H1,H2,...]] (--help: all options)
//
// Trains what `tandemc` wrote to DIR with one process per rank
// (docs/runtime.md). Started by mpirun or srun (their environment names the
// rank, Launcher.h), it runs as that rank (RankMain.h). Started directly, it
// runs `mpirun -np S` on itself, all ranks on this machine or N per host
// (Hosts.h), and reports which rank died if the job fails (Launch.h); with
// --launcher local it starts the ranks as processes itself, with a socket
// control plane and NCCL between them (no MPI); ranks srun or mpirun
// started meet over TCP at --rendezvous HOST:PORT instead of over MPI.
// With --launcher threads (implied by --transport inproc) every rank is a
// thread of this process instead, over the in-process transport or one
// NCCL communicator.
//
//===----------------------------------------------------------------------===//

#include "Launch.h"
#include "Options.h"
#include "RankMain.h"

using namespace tandem;
using namespace tandem::run;

int main(int argc, char **argv) {
  Options options;
  std::string error;
  if (!parseOptions(argc, argv, options, error))
    return fail(error);
  std::optional<runtime::LaunchInfo> launcher = runtime::detectLauncher(error);
  if (!launcher && !error.empty())
    return fail(error);
  const bool threads = options.launcher == "threads";
  // A rank process, or every rank as a thread: a stop signal from now on
  // waits for the step (a launcher passes it on instead, Launch.cpp).
  if (launcher || threads)
    catchStopSignals();
  if (launcher && launcher->launcher == "tandem-run")
    return runLocalRank(options, *launcher);
  if (!options.rendezvousHost.empty()) {
    if (!launcher)
      return fail("--rendezvous is where ranks that srun or mpirun started "
                  "meet, but no launcher started this process (none of "
                  "SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK is set): "
                  "--launcher local starts processes on this machine");
    return runRendezvousRank(options, *launcher);
  }
  if (threads) {
    if (launcher && launcher->size > 1)
      return fail(threadsRequest(options) +
                  " runs every rank as a thread of one process, but " +
                  launcher->launcher + " started " +
                  std::to_string(launcher->size) + " processes");
    return runRanksInProcess(options);
  }
  if (!launcher && options.launcher == "local")
    return launchLocal(options);
#ifndef TANDEM_RUN_HAS_MPI
  return fail("--transport " + options.transport + " under " +
              (launcher ? launcher->launcher : std::string("mpirun")) +
              " needs MPI, which this tandem-run was built without: "
              "under srun or mpirun, --rendezvous HOST:PORT connects the "
              "ranks without it (--transport nccl); --launcher local starts "
              "the ranks as local processes, --transport inproc runs them as "
              "threads");
#endif
  if (!launcher)
    return launch(options);
  return runMPIRank(options, *launcher);
}
