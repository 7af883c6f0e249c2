//===- EvalProgram.h - the forward-only program for held-out loss -*- C++
//-*-===//
//
// With --target cpu, tandemc also compiles the model's forward function
// (after the precision phase, so it computes what training computes) into
// an mpmd.program @eval partitioned like the training step: the same
// stages, chunks, microbatches and partitioner, so every rank holds the
// parameters it reads. Its ranks go to DIR/eval/rank<N>.{mlir,cpp,so,json};
// tandem-run --eval-every runs them for the held-out loss (docs/runtime.md).
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_TOOLS_TANDEMC_EVALPROGRAM_H
#define TANDEM_TOOLS_TANDEMC_EVALPROGRAM_H

#include "CompilePipeline.h"
#include "NativeCompile.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"

#include <string>

namespace tandem::tandemc {

/// The pass pipeline from the trained module to the verified @eval program.
std::string evalPipeline(const CompileOptions &options);

/// Runs evalPipeline on `trained` (a copy of the module after the train
/// phase, which it consumes) and compiles the result into
/// `native.outputDir`/eval.
mlir::LogicalResult compileEvalProgram(mlir::ModuleOp trained,
                                       const CompileOptions &options,
                                       const NativeOptions &native,
                                       mlir::TimingScope &phase);

} // namespace tandem::tandemc

#endif // TANDEM_TOOLS_TANDEMC_EVALPROGRAM_H
