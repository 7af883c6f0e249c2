//===- Memory.h - Per-rank memory of a scheduled mpmd program ---*- C++ -*-===//
//
// Peak bytes each rank of a scheduled mpmd.program holds over one training
// step, by category, from a walk over the rank's action list. The lifetimes
// are defined in docs/mpmd.md, "Memory analysis".
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_DIALECT_MPMD_ANALYSIS_MEMORY_H
#define TANDEM_DIALECT_MPMD_ANALYSIS_MEMORY_H

#include "tandem/Dialect/MPMD/IR/MPMDOps.h"

#include "mlir/IR/Types.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>

namespace tandem::mpmd {

/// Peak bytes of one rank over one training step, by category.
struct RankMemory {
  int64_t rank = 0;
  /// nn.parameters this rank binds (mpmd.param), not optimizer state.
  int64_t parameters = 0;
  /// Parameter values held beside the masters: low-precision copies made by
  /// step_prologue fragments, parameters received from their owner stage.
  int64_t parameterCopies = 0;
  /// Gradient accumulation buffers: per-microbatch -> once-per-step
  /// transfers summed on this rank.
  int64_t gradients = 0;
  /// Parameters only optimizer fragments read (e.g. @opt.*).
  int64_t optimizerState = 0;
  /// Bytes of one microbatch's values kept from its forward runs until its
  /// last backward run on this rank.
  int64_t stashPerMicrobatch = 0;
  /// Most microbatches stashed at once (from the action list).
  int64_t peakInFlight = 0;
  /// Peak bytes of stashed values over the action list walk.
  int64_t stash = 0;
  /// Largest transient working set inside one fragment run (values live at
  /// once inside the body, excluding its arguments and results).
  int64_t temporaries = 0;
  /// Peak of everything live at once during the walk (persistent + stash +
  /// received/sent slots in flight + temporaries).
  int64_t peak = 0;
};

/// Requires a scheduled program (mpmd.rank lists, with or without
/// send/recv). Walks each rank's action list: slot lifetimes from first
/// production/reception to last use. One entry per rank of the grid, in
/// rank order (a rank without a list holds nothing); for a per-rank program
/// of mpmd-split-programs (`mpmd.split_rank`), one entry per rank list it
/// holds. Emits an error on `program` and fails if it has no rank list.
llvm::FailureOr<llvm::SmallVector<RankMemory>> analyzeMemory(ProgramOp program);

/// Bytes of a statically shaped tensor (or scalar) type: elements times the
/// element width in bytes (bf16/f16: 2, f8: 1, f32/i32: 4, i1: 1, index:
/// 8); 0 for a type without a static shape.
int64_t memoryBytesOf(mlir::Type type);

/// The largest set of values live at once inside `fragment`'s body, in
/// bytes: each value an op of the body defines, except those it yields,
/// lives from its op to its last use in op order. 0 for a declaration.
int64_t fragmentTemporaries(FragmentOp fragment);

/// Writes `memory` in the one-line form the mpmd-memory remarks use:
/// "rank R: peak P bytes; parameters A, copies B, gradients C, optimizer
/// state D, stash X (N x S in flight), temporaries T".
void printRankMemory(const RankMemory &memory, llvm::raw_ostream &os);

} // namespace tandem::mpmd

#endif // TANDEM_DIALECT_MPMD_ANALYSIS_MEMORY_H
