//===- CppEmitter.h - C++ source for the CPU target -------------*- C++ -*-===//
//
// Turns functions of nn ops (an mpmd.fragment, or a func.func for tests and
// single-rank programs) into C++ source: one extern "C" entry point per
// function, every op written out as a loop nest, matmuls calling
// cblas_sgemm/cblas_dgemm, and chains of elementwise ops fused into one loop
// nest whose intermediate values stay in registers. docs/cpu-backend.md
// describes the ABI and the fusion rule.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_TARGET_CPU_CPPEMITTER_H
#define TANDEM_TARGET_CPU_CPPEMITTER_H

#include "tandem/Runtime/Manifest.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tandem::cpu {

/// What the emitter produced for one function: the entry point's symbol and
/// the meaning of its argument and result slots.
struct EmittedFunction {
  /// The IR symbol (`train_step`, `s0.fwd`).
  std::string name;
  /// The C symbol of the entry point (`tandem_train_step`).
  std::string symbol;
  /// args[0 .. argumentTypes.size()) are the function's arguments.
  std::vector<mlir::RankedTensorType> argumentTypes;
  /// Then one slot per parameter read with nn.param (name without '@'), in
  /// the order of first use in the body.
  std::vector<std::pair<std::string, mlir::RankedTensorType>> parameters;
  /// results[i] receives result i.
  std::vector<mlir::RankedTensorType> resultTypes;
  /// Bytes of scratch memory the entry point needs (also returned by the
  /// generated `<symbol>_scratch_bytes()`).
  uint64_t scratchBytes = 0;
  /// Loop nests and library calls the body runs, fused groups counted once
  /// per call; a GEMM and its epilogue count as one.
  unsigned numKernels = 0;
  /// Calls of fused functions that fold elementwise ops (elementwise groups,
  /// reductions with a prologue or epilogue, GEMM epilogues), before
  /// deduplication.
  unsigned numFusedGroups = 0;
  /// Elementwise ops folded into those groups.
  unsigned numFusedOps = 0;
  /// Reductions whose elementwise producers (prologue) or consumers
  /// (epilogue) run inside the reduction's loop nest.
  unsigned numFusedReductions = 0;
  /// Matmuls whose elementwise consumers (bias, activation, residual) run as
  /// one in-place pass over the GEMM's output right after the BLAS call.
  unsigned numGemmEpilogues = 0;
  /// Results of an mpmd.fragment that may share memory with an argument:
  /// (result, argument) pairs where the result updates the parameter the
  /// argument binds, one elementwise loop reads that argument only at the
  /// index it writes, and nothing else reads it. The runtime may bind both
  /// to the parameter's buffer, so the update happens in place.
  std::vector<std::pair<unsigned, unsigned>> inPlaceResults;
};

/// Which fusions the emitter applies. Turning one off gives the unfused
/// code path, which computes bitwise the same values (tests compare both).
struct EmitOptions {
  /// Fold elementwise producers and consumers into reductions.
  bool fuseReductions = true;
  /// Run elementwise consumers of a matmul in place over its output.
  bool fuseGemmEpilogues = true;
  /// Unite the elementwise groups an op reads into one loop.
  bool mergeGroups = true;
};

/// The emitted translation unit and what it contains.
struct EmitResult {
  std::string source;
  std::vector<EmittedFunction> functions;
  /// Distinct kernel functions written (elementwise groups, reductions, GEMM
  /// epilogues; identical ones share one).
  unsigned numUniqueGroups = 0;
  /// Calls to those functions over all entry points.
  unsigned numGroupCalls = 0;
  /// The index checks the code reports, by number (IndexChecks.h).
  std::vector<tandem::runtime::IndexCheckInfo> indexChecks;
};

/// Emits one translation unit for `functions` (each an mpmd.fragment with a
/// body or a func.func). Reports unsupported ops and types as errors at the
/// op and fails; never emits code it cannot stand behind.
mlir::FailureOr<EmitResult> emitCpp(llvm::ArrayRef<mlir::Operation *> functions,
                                    const EmitOptions &options = {});

/// The ops the emitter writes code for, sorted ("nn.add", ...).
std::vector<std::string> supportedOps();

/// nn ops the emitter deliberately does not handle, each with what to do
/// instead (e.g. nn.attention: run nn-decompose-attention first).
std::vector<std::pair<std::string, std::string>> opsHandledElsewhere();

} // namespace tandem::cpu

#endif // TANDEM_TARGET_CPU_CPPEMITTER_H
