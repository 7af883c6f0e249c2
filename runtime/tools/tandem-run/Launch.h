//===- Launch.h - starting the ranks: mpirun, or local processes -*- C++
//-*-===//

#ifndef TANDEM_TOOLS_TANDEM_RUN_LAUNCH_H
#define TANDEM_TOOLS_TANDEM_RUN_LAUNCH_H

#include "Options.h"

namespace tandem::run {

/// The environment variable naming the folder where each rank records the
/// step it is in (`rank<r>`), and, when the launcher stops it, that it was
/// stopped (`rank<r>.stopped`): after a failed job, the rank that was in a
/// step and never stopped is the one that died.
constexpr const char *kStatusDirVariable = "TANDEM_RUN_STATUS_DIR";

/// tandem-run's local launcher hands rank 0 the control plane's listening
/// socket in this variable (a descriptor number), and every rank its name
/// (SocketControlPlane.h).
/// Set by --restart-on-failure for a restarted job: the attempt (0 for the
/// first, which has no variable) and the step the run ends before, which
/// the ranks run up to from the checkpoint they resume.
constexpr const char *kAttemptVariable = "TANDEM_RUN_ATTEMPT";
constexpr const char *kEndStepVariable = "TANDEM_RUN_END_STEP";

constexpr const char *kControlVariable = "TANDEM_RUN_CONTROL";
constexpr const char *kControlFdVariable = "TANDEM_RUN_CONTROL_FD";

/// Not started by a launcher: checks that every rank can start, runs
/// `mpirun -np S` on this executable and waits for it. When the job fails
/// without a rank having reported an error, names the rank that died and
/// its step. Returns the exit status.
int launch(const Options &options);

/// --launcher local: checks that every rank can start, starts one process
/// per rank on this machine (this executable, with TANDEM_RUN_LOCAL_RANK
/// and _SIZE, and the control plane's socket) and waits for them. The
/// first to fail stops the others; one that died is named with its step.
/// Returns the exit status.
int launchLocal(const Options &options);

} // namespace tandem::run

#endif // TANDEM_TOOLS_TANDEM_RUN_LAUNCH_H
