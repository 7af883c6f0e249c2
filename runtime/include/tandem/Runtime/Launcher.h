//===- Launcher.h - which rank a launcher started us as ----------*- C++
//-*-===//
//
// tandem-run either starts the ranks itself (through mpirun, or as local
// processes) or, started by mpirun or srun, runs as the rank the launcher's
// environment names. This reads that environment: tandem-run's own local
// launcher (TANDEM_RUN_LOCAL_RANK/SIZE), Open MPI (OMPI_COMM_WORLD_RANK/SIZE),
// PMIx (PMIX_RANK with OMPI or SLURM sizes), MPICH/Hydra and other PMI
// launchers (PMI_RANK/PMI_SIZE), and Slurm (SLURM_PROCID/SLURM_NTASKS). No
// MLIR, no MPI.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_LAUNCHER_H
#define TANDEM_RUNTIME_LAUNCHER_H

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace tandem::runtime {

struct LaunchInfo {
  /// "tandem-run", "openmpi", "pmi" or "slurm".
  std::string launcher;
  int64_t rank = 0, size = 0;
  /// The rank's index among the job's ranks on its host (what picks its
  /// GPU), or -1 when the launcher does not say.
  int64_t localRank = -1;
  /// The launcher's name for the job, the same on each of its ranks
  /// (Slurm's `JOB.STEP`, Open MPI's PMIx namespace), or empty: ranks
  /// meeting at a --rendezvous address compare it, so that a rank of
  /// another job is not taken for one of this job's.
  std::string job;
};

/// The launcher's rank and size from `getenv` (the process environment by
/// default), or nothing when no launcher started this process. A variable
/// that is set but not a number, or a rank outside [0, size), is an error.
std::optional<LaunchInfo> detectLauncher(
    std::string &error,
    const std::function<const char *(const char *)> &getenv = nullptr);

} // namespace tandem::runtime

#endif // TANDEM_RUNTIME_LAUNCHER_H
