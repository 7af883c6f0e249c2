//===- RankLowering.h - per-rank sources, libraries, manifests --*- C++ -*-===//
//
// The target-neutral rank lowering: takes a scheduled, lowered and verified
// mpmd program (whole, or in the per-rank form of mpmd-split-programs) and,
// through a TargetBackend, writes one source, one library and one manifest
// per rank: what a runtime without MLIR needs to execute the rank's action
// list. It analyzes each rank (the fragments it runs, their bindings, data
// availability along its list), asks the backend for code, decides the
// in-place updates, plans the rank's memory and fills the manifest
// (tandem/Runtime/Manifest.h, docs/manifest.md). docs/targets.md.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_LOWERING_RANKLOWERING_H
#define TANDEM_LOWERING_RANKLOWERING_H

#include "tandem/Lowering/TargetBackend.h"

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tandem::lowering {

struct LowerRanksOptions {
  /// Where rank<N><source extension>, rank<N><library extension> and
  /// rank<N>.json go (created if needed).
  std::string outputDir;
  /// False: write the sources and manifests but leave compiling the
  /// libraries to the caller (tandemc times it apart from the emission and
  /// compiles the ranks in parallel).
  bool compileLibraries = true;
  /// What starts every error message ("tandemc lower").
  std::string diagnosticPrefix = "rank lowering";
};

/// What was written for one rank.
struct LoweredRank {
  int64_t rank = 0;
  std::string sourcePath;
  std::string libraryPath;
  std::string manifestPath;
  /// True when the library came from the backend's cache.
  bool cached = false;
};

/// Lowers every rank of the module's program through `backend`. Reports
/// problems (no program, an unscheduled or unlowered one, slots a run reads
/// that the rank neither produces nor receives, tensors the manifest cannot
/// describe, what the backend cannot emit or compile) as errors on the ops
/// involved and fails.
mlir::FailureOr<std::vector<LoweredRank>>
lowerRanks(mlir::ModuleOp module, TargetBackend &backend,
           const LowerRanksOptions &options);

} // namespace tandem::lowering

#endif // TANDEM_LOWERING_RANKLOWERING_H
