//===- NativeCompile.h - tandemc's native phase -----------------*- C++ -*-===//
//
// --target cpu: lowers every rank to C++ and a manifest (tandem::cpu::
// lowerRanks, what tandem-lower-cpu runs), then compiles the ranks' sources
// into libraries as a step of its own, so that --timing reports emission and
// C++ compilation apart and the compilations can run in parallel.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_TOOLS_TANDEMC_NATIVECOMPILE_H
#define TANDEM_TOOLS_TANDEMC_NATIVECOMPILE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"

#include <string>

namespace tandem::tandemc {

struct NativeOptions {
  /// Where rank<N>.{cpp,so,json} go.
  std::string outputDir;
  /// C++ compilations run at once; 0: one per core.
  unsigned jobs = 0;
  /// -march of the libraries; empty: $TANDEM_CPU_ARCH, else native.
  std::string arch;
};

/// Writes rank<N>.cpp and rank<N>.json for every rank of the module's
/// program (timed as `emit C++` under `phase`), then rank<N>.so (timed as
/// `C++ compile` under `phase`): each distinct source is compiled once,
/// through the compile cache ($TANDEM_CPU_CACHE, $TANDEM_CXX; docs/
/// cpu-backend.md), and ranks with the same source share the library.
/// Reports one remark per rank and a summary remark
/// ("C++: R ranks, L libraries: C compiled, H cached"); errors are
/// diagnostics on the module.
mlir::LogicalResult compileNative(mlir::ModuleOp module,
                                  const NativeOptions &options,
                                  mlir::TimingScope &phase);

} // namespace tandem::tandemc

#endif // TANDEM_TOOLS_TANDEMC_NATIVECOMPILE_H
