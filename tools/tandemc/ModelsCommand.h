//===- ModelsCommand.h - `tandemc models` -----------------------*- C++ -*-===//

#ifndef TANDEM_TOOLS_TANDEMC_MODELSCOMMAND_H
#define TANDEM_TOOLS_TANDEMC_MODELSCOMMAND_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace tandem::tandemc {

/// True when the command line selected the `models` subcommand.
bool modelsCommandSelected();

/// Generates the requested model and prints it; returns the exit code.
int runModelsCommand(const mlir::DialectRegistry &registry);

} // namespace tandem::tandemc

#endif // TANDEM_TOOLS_TANDEMC_MODELSCOMMAND_H
