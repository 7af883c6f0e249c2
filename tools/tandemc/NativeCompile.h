//===- NativeCompile.h - tandemc's native phase -----------------*- C++ -*-===//
//
// --target T (and `tandemc lower`): lowers every rank to a source and a
// manifest through T's backend (tandem::lowering::lowerRanks), then compiles
// the ranks' sources into libraries as a step of its own, so that --timing
// reports emission and compilation apart and the compilations can run in
// parallel.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_TOOLS_TANDEMC_NATIVECOMPILE_H
#define TANDEM_TOOLS_TANDEMC_NATIVECOMPILE_H

#include "tandem/Lowering/TargetBackend.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"

#include <string>

namespace tandem::tandemc {

struct NativeOptions {
  /// Where each rank's source, library and manifest go.
  std::string outputDir;
  /// Compilations run at once; 0: one per core.
  unsigned jobs = 0;
  /// The target, configured with its options (--cpu-arch, ...).
  lowering::TargetBackend *backend = nullptr;
  /// What starts every diagnostic ("tandemc", "tandemc lower").
  std::string toolName = "tandemc";
};

/// Writes the source (rank<N>.cpp for the CPU) and rank<N>.json for every
/// rank of the module's program (timed as `emit <language>` under `phase`),
/// then the library (rank<N>.so; timed as `<language> compile`): each
/// distinct source is compiled once, through the backend (for the CPU, the
/// compile cache: $TANDEM_CPU_CACHE, $TANDEM_CXX; docs/cpu-backend.md), and
/// ranks with the same source share the library.
/// Reports one remark per rank and a summary remark
/// ("C++: R ranks, L libraries: C compiled, H cached"); errors are
/// diagnostics on the module.
mlir::LogicalResult compileNative(mlir::ModuleOp module,
                                  const NativeOptions &options,
                                  mlir::TimingScope &phase);

} // namespace tandem::tandemc

#endif // TANDEM_TOOLS_TANDEMC_NATIVECOMPILE_H
