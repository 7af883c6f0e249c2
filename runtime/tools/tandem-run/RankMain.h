//===- RankMain.h - one rank of a tandem-run job ----------------*- C++ -*-===//

#ifndef TANDEM_TOOLS_TANDEM_RUN_RANKMAIN_H
#define TANDEM_TOOLS_TANDEM_RUN_RANKMAIN_H

#include "Options.h"

#include "tandem/Runtime/Launcher.h"

namespace tandem::run {

/// Runs as the rank `launch` names: MPI_Init, load, train, report, and
/// MPI_Finalize. Returns the exit status (errors end the job through
/// MPI_Abort).
int runRank(const Options &options, const runtime::LaunchInfo &launch);

} // namespace tandem::run

#endif // TANDEM_TOOLS_TANDEM_RUN_RANKMAIN_H
