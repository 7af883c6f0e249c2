//===- Pipeline.h - one training step of an mpmd program --------*- C++ -*-===//
//
// Runs one step of an `mpmd.program` the way the runtime will: every rank
// of the grid walks its `mpmd.rank` action list on its own thread, with a
// slot table of its own, and ranks exchange slots through a Transport under
// rendezvous semantics. Fragments run through the Interpreter's kernels, so
// a pipelined step is bitwise comparable with the one-stage evaluation of
// the same math in the same order. Results never depend on thread timing:
// every value is a pure function of the action lists. docs/pipeline-eval.md
// describes the semantics.
//
// The program is either unsplit (`mpmd.program @NAME` in the top module) or
// split by mpmd-split-programs (one `builtin.module @rankN` per rank, each
// holding a program @NAME with `mpmd.split_rank = N`).
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_EVAL_PIPELINE_H
#define TANDEM_EVAL_PIPELINE_H

#include "tandem/Eval/Interpreter.h"
#include "tandem/Eval/Transport.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tandem::eval {

struct PipelinePlan;

/// What one step produced. Nothing is written back: the caller decides.
struct PipelineStep {
  /// Step outputs 0..n-1 (`mpmd.output`).
  std::vector<Tensor> outputs;
  /// New parameter values (`mpmd.update`), by parameter name.
  ParameterMap updates;
};

class PipelineExecutor {
public:
  /// Finds program `name` in `module` (unsplit or split form) and checks
  /// what a step needs: every step input bound with one type that can be
  /// sliced along dim 0, outputs numbered 0..n-1 without gaps.
  static llvm::Expected<std::unique_ptr<PipelineExecutor>>
  create(mlir::ModuleOp module, llvm::StringRef name);
  ~PipelineExecutor();

  int64_t getNumRanks() const;
  int64_t getNumMicrobatches() const;
  /// Full-batch types of the step inputs: a microbatch's type with dim 0
  /// multiplied by the number of microbatches.
  llvm::ArrayRef<mlir::RankedTensorType> getInputTypes() const;
  /// For each step input, the smallest vocabulary (embedding rows,
  /// cross-entropy classes) a fragment argument bound to it indexes.
  llvm::ArrayRef<std::optional<int64_t>> getInputVocabularies() const;
  /// Types of the step outputs.
  llvm::ArrayRef<mlir::RankedTensorType> getOutputTypes() const;
  /// The parameters a step updates, sorted by name.
  llvm::ArrayRef<std::string> getUpdatedParameters() const;

  /// Runs one step on full-batch `inputs` with the interpreter's parameters
  /// and options, all ranks in this process. The interpreter's parameters
  /// must not change while it runs.
  llvm::Expected<PipelineStep> run(Interpreter &interpreter,
                                   llvm::ArrayRef<Tensor> inputs);
  /// The same over `transport`, which must serve getNumRanks() ranks and
  /// not have been used for another step.
  llvm::Expected<PipelineStep> run(Interpreter &interpreter,
                                   llvm::ArrayRef<Tensor> inputs,
                                   Transport &transport);

private:
  explicit PipelineExecutor(std::unique_ptr<PipelinePlan> plan);
  std::unique_ptr<PipelinePlan> plan;
};

} // namespace tandem::eval

#endif // TANDEM_EVAL_PIPELINE_H
