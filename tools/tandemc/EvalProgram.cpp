//===- EvalProgram.cpp - the forward-only program for held-out loss -------===//

#include "EvalProgram.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace tandem::tandemc;

std::string tandem::tandemc::evalPipeline(const CompileOptions &o) {
  int64_t chunks = o.chunks                           ? o.chunks
                   : o.schedule == "interleaved-1f1b" ? 2
                                                      : 1;
  std::string partition = "mpmd-partition{function=" + o.function +
                          " program=eval stages=" + std::to_string(o.stages) +
                          " chunks=" + std::to_string(chunks) +
                          " microbatches=" + std::to_string(o.microbatches) +
                          "}";
  if (!o.partitioner.empty())
    partition = o.partitioner + "," + partition;
  // A target without fused attention needs it decomposed; autodiff did it
  // for the training step, whose forward part this must compute alike.
  if (!o.fusedAttention)
    partition = "nn-decompose-attention," + partition;
  // Forward only: GPipe's order, or the interleaved one for chunks.
  std::string schedule = chunks > 1 ? "interleaved-1f1b" : "gpipe";
  return partition + ",mpmd-schedule{schedule=" + schedule +
         "},mpmd-lower-transfers,mpmd-verify";
}

LogicalResult tandem::tandemc::compileEvalProgram(ModuleOp trained,
                                                  const CompileOptions &o,
                                                  const NativeOptions &native,
                                                  TimingScope &phase) {
  MLIRContext *context = trained.getContext();
  PassManager pm(context, ModuleOp::getOperationName());
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  if (failed(parsePassPipeline(evalPipeline(o), pm, os)))
    return emitError(trained.getLoc())
           << "tandemc: the eval program's pipeline: " << diagnostics;
  {
    TimingScope scope = phase.nest("eval program");
    pm.enableTiming(scope);
    // A user's partitioner may place only the training step (its options
    // name the function): then there is no eval program, which is worth a
    // warning, not a failed compile.
    std::string firstError;
    LogicalResult result = success();
    {
      ScopedDiagnosticHandler handler(context, [&](Diagnostic &diagnostic) {
        if (diagnostic.getSeverity() == DiagnosticSeverity::Error &&
            firstError.empty())
          firstError = diagnostic.str();
        return success();
      });
      result = pm.run(trained);
    }
    if (failed(result)) {
      if (o.partitioner.empty())
        return emitError(trained.getLoc())
               << "tandemc: the eval program (@" << o.function
               << " for the held-out loss): " << firstError;
      emitWarning(trained.getLoc())
          << "tandemc: no eval program for the held-out loss (tandem-run "
             "--eval-every needs one): the partitioner did not place @"
          << o.function << ": " << firstError;
      return success();
    }
  }
  NativeOptions evalNative = native;
  evalNative.outputDir = native.outputDir + "/eval";
  TimingScope scope = phase.nest("eval native");
  return compileNative(trained, evalNative, scope);
}
