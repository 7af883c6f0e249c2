//===- RankFiles.h - tandemc writes the per-rank modules --------*- C++ -*-===//
//
// mpmd-split-programs only splits; writing files is the driver's job (as
// it is for the pipeline and the native phase): DIR/rank<N>.mlir for every
// rank module the split made.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_TOOLS_TANDEMC_RANKFILES_H
#define TANDEM_TOOLS_TANDEMC_RANKFILES_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"

namespace tandem::tandemc {

/// Writes each module @rank<N> of `top` (mpmd-split-programs' output: its
/// program carries mpmd.split_rank = N) to `dir`/rank<N>.mlir, a standalone
/// module that parses and verifies. Errors are diagnostics on the module.
mlir::LogicalResult writeRankModules(mlir::ModuleOp top, llvm::StringRef dir);

} // namespace tandem::tandemc

#endif // TANDEM_TOOLS_TANDEMC_RANKFILES_H
