//===- LowerCommand.h - `tandemc lower` -------------------------*- C++ -*-===//

#ifndef TANDEM_TOOLS_TANDEMC_LOWERCOMMAND_H
#define TANDEM_TOOLS_TANDEMC_LOWERCOMMAND_H

#include "mlir/IR/DialectRegistry.h"

namespace tandem::tandemc {

/// Creates the subcommand's target options; call after the targets are
/// registered and before the command line is parsed.
void registerLowerCommandOptions();

/// True when the command line selected the `lower` subcommand.
bool lowerCommandSelected();

/// Lowers a verified program (whole or split) to per-rank sources,
/// libraries and manifests; returns the exit code.
int runLowerCommand(const mlir::DialectRegistry &registry);

} // namespace tandem::tandemc

#endif // TANDEM_TOOLS_TANDEMC_LOWERCOMMAND_H
