//===- Trainer.h - the reference training loop ------------------*- C++ -*-===//
//
// Drives a training-step function (docs/training.md), or a pipelined
// mpmd.program (docs/pipeline-eval.md): step k runs it on
// batch k of the training part of a token stream (windows shuffled by the
// seed, so batch k is known without replaying earlier batches), checks its
// `nn.updates` contract (a program's: output 0 is the loss, `mpmd.update`
// results are the new values) and writes the new values back into the
// interpreter's parameters. The held-out loss is the mean loss of an
// evaluation function over the first batches of the held-out tail, in
// order, so it is the same measurement at every step. Everything is a pure
// function of the module, the initial parameters, the data and the seed.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_EVAL_TRAINER_H
#define TANDEM_EVAL_TRAINER_H

#include "tandem/Eval/Interpreter.h"
#include "tandem/Eval/Pipeline.h"
#include "tandem/Runtime/ArrayData.h"
#include "tandem/Runtime/TokenData.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tandem::eval {

struct TrainerOptions {
  /// The training-step function (loss, new values...) with nn.updates.
  std::string stepFunction = "train_step";
  /// When set, the mpmd.program that runs each step instead of
  /// `stepFunction` (all ranks in-process, see Pipeline.h).
  std::string stepProgram;
  /// The function whose rank-0 result 0 is the held-out loss.
  std::string evalFunction = "forward";
  /// Fraction of the token stream, at its end, held out from training.
  double heldOutFraction = 0.1;
  /// Seed of the training batches' order and of generated float inputs.
  uint64_t seed = 0;
  /// What data errors call the token stream (usually its file name).
  std::string dataName = "token data";
  /// Arrays only (a token stream always keeps its tail apart): whether the
  /// trainer measures held-out losses, which holds out the file's last
  /// batches (data::splitArrays); without it every batch trains and
  /// heldOutLoss fails.
  bool arraysHoldOut = false;
};

/// Checks `function` against the training-step contract: result 0 is a
/// rank-0 float loss and `nn.updates` names, for each further result, a
/// distinct nn.parameter of the module of exactly the result's type.
/// Returns the updated parameters' names (without '@'), in result order.
llvm::Expected<std::vector<std::string>>
verifyTrainStep(mlir::func::FuncOp function);

/// The argument numbers of `function`'s two integer B x T inputs (tokens,
/// targets), which batches of token data fill.
llvm::Expected<std::pair<unsigned, unsigned>>
findTokenInputs(mlir::func::FuncOp function);
/// The same for inputs of `types`; `owner` names them in errors
/// ("function 'f'", "program 'p'").
llvm::Expected<std::pair<unsigned, unsigned>>
findTokenInputs(llvm::ArrayRef<mlir::RankedTensorType> types,
                const std::string &owner);

/// One batch of token data bound to a function's inputs: the two integer
/// inputs come from a sampler, every other input from the deterministic
/// generator (Inputs.h).
class BatchInputs {
public:
  /// `what` names the part of the data in errors ("training part").
  static llvm::Expected<BatchInputs> create(mlir::func::FuncOp function,
                                            std::vector<int32_t> tokens,
                                            uint64_t seed, bool shuffle,
                                            llvm::StringRef what);
  /// The same for inputs of `types` (the integer inputs' generated values
  /// bounded by `vocabularies`), as a program's step inputs.
  static llvm::Expected<BatchInputs>
  create(llvm::ArrayRef<mlir::RankedTensorType> types,
         llvm::ArrayRef<std::optional<int64_t>> vocabularies,
         const std::string &owner, std::vector<int32_t> tokens, uint64_t seed,
         bool shuffle, llvm::StringRef what);

  /// Every input from an arrays file (ArrayData.h): batch k is batch k
  /// mod c of the c batches of the inputs' `types` (input i: `input.<i>`)
  /// in file step batches [first, first + count).
  static llvm::Expected<BatchInputs>
  fromArrays(llvm::ArrayRef<mlir::RankedTensorType> types,
             const std::string &owner, const tandem::data::ArrayData &arrays,
             int64_t first, int64_t count, const std::string &part);

  /// The function's inputs for batch `index`.
  std::vector<Tensor> get(uint64_t index);

  /// Inputs `base` whose inputs `tokensArg` and `targetsArg` come from
  /// `sampler`.
  static BatchInputs fromParts(std::vector<Tensor> base, unsigned tokensArg,
                               unsigned targetsArg,
                               tandem::data::BatchSampler sampler) {
    return BatchInputs(std::move(base), tokensArg, targetsArg,
                       std::move(sampler));
  }

private:
  BatchInputs(std::vector<Tensor> base, unsigned tokensArg, unsigned targetsArg,
              tandem::data::BatchSampler sampler)
      : base(std::move(base)), tokensArg(tokensArg), targetsArg(targetsArg),
        sampler(std::move(sampler)) {}
  BatchInputs(std::vector<Tensor> base, std::vector<st::DType> dtypes,
              tandem::data::ArrayBatches arrays)
      : base(std::move(base)), dtypes(std::move(dtypes)),
        arrays(std::move(arrays)) {}

  std::vector<Tensor> base;
  unsigned tokensArg = 0, targetsArg = 0;
  std::optional<tandem::data::BatchSampler> sampler;
  /// Arrays: every input's batches and its file dtype.
  std::vector<st::DType> dtypes;
  std::optional<tandem::data::ArrayBatches> arrays;
};

/// What one training step did.
struct StepResult {
  /// Result 0 of the step function (output 0 of a program).
  double loss = 0.0;
  /// The inputs it ran on.
  std::vector<Tensor> inputs;
};

class Trainer {
public:
  /// Checks the step (function or program) and the evaluation function and
  /// splits `tokens` into the training part and
  /// the held-out tail. The interpreter (with its parameters) must outlive
  /// the trainer.
  static llvm::Expected<std::unique_ptr<Trainer>>
  create(Interpreter &interpreter, const std::vector<int32_t> &tokens,
         const TrainerOptions &options = {});
  /// The same on an arrays file (ArrayData.h; `options.dataName` names it):
  /// the step's inputs are checked against it; step k trains on batch k mod
  /// c of its c training batches, in file order; the held-out loss (with
  /// options.arraysHoldOut) runs the evaluation function on batches of its
  /// own shape over the held-out step batches.
  static llvm::Expected<std::unique_ptr<Trainer>>
  create(Interpreter &interpreter, st::File arrays,
         const TrainerOptions &options = {});

  /// Runs step `index` on training batch `index` and writes the updated
  /// values back into the parameters. On an error the parameters are
  /// unchanged.
  llvm::Expected<StepResult> step(uint64_t index);

  /// The mean of the evaluation function's loss over held-out batches
  /// 0 .. numBatches-1 (batches past the end of the held-out part wrap
  /// around to its start). Does not change the parameters. Fails without
  /// held-out batches (arrays without options.arraysHoldOut).
  llvm::Expected<double> heldOutLoss(unsigned numBatches);

  /// The parameter each result 1..n of the step function replaces (for a
  /// program: the parameters it updates, sorted).
  const std::vector<std::string> &getUpdates() const { return updates; }
  /// Null when a program runs the step.
  mlir::func::FuncOp getStepFunction() const { return stepFunction; }
  /// Null when a function runs the step.
  PipelineExecutor *getStepProgram() const { return stepProgram.get(); }
  mlir::func::FuncOp getEvalFunction() const { return evalFunction; }

private:
  static llvm::Expected<std::unique_ptr<Trainer>>
  create(Interpreter &interpreter, const std::vector<int32_t> *tokens,
         std::optional<st::File> arrays, const TrainerOptions &options);
  Trainer(Interpreter &interpreter, mlir::func::FuncOp stepFunction,
          std::unique_ptr<PipelineExecutor> stepProgram,
          mlir::func::FuncOp evalFunction, std::vector<std::string> updates,
          BatchInputs train, std::optional<BatchInputs> heldOut)
      : interpreter(interpreter), stepFunction(stepFunction),
        stepProgram(std::move(stepProgram)), evalFunction(evalFunction),
        updates(std::move(updates)), train(std::move(train)),
        heldOut(std::move(heldOut)) {}

  Interpreter &interpreter;
  mlir::func::FuncOp stepFunction;
  std::unique_ptr<PipelineExecutor> stepProgram;
  mlir::func::FuncOp evalFunction;
  std::vector<std::string> updates;
  BatchInputs train;
  std::optional<BatchInputs> heldOut;
};

} // namespace tandem::eval

#endif // TANDEM_EVAL_TRAINER_H
