//===- RankLowering.h - per-rank CPU libraries and manifests ----*- C++ -*-===//
//
// Lowers a scheduled, lowered and verified mpmd program (whole, or in the
// per-rank form of mpmd-split-programs) to one C++ source, one shared
// library and one JSON manifest per rank: what a runtime without MLIR needs
// to execute the rank's action list. The manifest is the runtime's schema
// (tandem/Runtime/Manifest.h, docs/manifest.md), written with its writer.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_TARGET_CPU_RANKLOWERING_H
#define TANDEM_TARGET_CPU_RANKLOWERING_H

#include "tandem/Target/CPU/Compiler.h"

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tandem::cpu {

struct LowerRanksOptions {
  /// Where rank<N>.cpp, rank<N>.so and rank<N>.json go (created if needed).
  std::string outputDir;
  CompileOptions compile;
  /// False: write rank<N>.cpp and rank<N>.json but leave compiling
  /// rank<N>.so to the caller (tandemc times it apart from the emission and
  /// compiles the ranks in parallel).
  bool compileLibraries = true;
};

/// What was written for one rank.
struct LoweredRank {
  int64_t rank = 0;
  std::string sourcePath;
  std::string libraryPath;
  std::string manifestPath;
  /// True when the library came from the compile cache.
  bool cached = false;
};

/// Lowers every rank of the module's program. Reports problems (no
/// program, an unscheduled or unlowered one, slots a run reads that the rank
/// neither produces nor receives, ops or types the emitter does not
/// support, compiler errors) as errors on the ops involved and fails.
mlir::FailureOr<std::vector<LoweredRank>>
lowerRanks(mlir::ModuleOp module, const LowerRanksOptions &options);

} // namespace tandem::cpu

#endif // TANDEM_TARGET_CPU_RANKLOWERING_H
