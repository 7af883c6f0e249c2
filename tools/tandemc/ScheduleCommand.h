//===- ScheduleCommand.h - `tandemc schedule` -------------------*- C++ -*-===//

#ifndef TANDEM_TOOLS_TANDEMC_SCHEDULECOMMAND_H
#define TANDEM_TOOLS_TANDEMC_SCHEDULECOMMAND_H

namespace tandem::tandemc {

/// True when the command line selected the `schedule` subcommand.
bool scheduleCommandSelected();

/// Builds or reads the schedule, validates and simulates it, prints the
/// report and writes the requested pictures; returns the exit code.
int runScheduleCommand();

} // namespace tandem::tandemc

#endif // TANDEM_TOOLS_TANDEMC_SCHEDULECOMMAND_H
