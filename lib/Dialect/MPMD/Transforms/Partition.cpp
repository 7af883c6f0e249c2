//===- Partition.cpp - mpmd-partition -------------------------------------===//
//
// Turns a training-step function into an mpmd.program (docs/mpmd.md,
// "mpmd-partition"). The function is written for one microbatch; a step
// runs it on m microbatches. Working on a clone of the function:
//
//  1. Every op gets a phase: sources (nn.param, nn.constant: copied into
//     whichever fragment needs them), forward, backward (`nn.grad`), or once
//     per step (`nn.optimizer`, and the `nn.grad_sum` adds that combine the
//     contributions of several reads of one parameter).
//  2. Each per-microbatch value the step phase (or the function's result)
//     needs gets an accumulation node: the sum over microbatches in
//     increasing order, on the stage that produced it. The step then sees
//     the mean: the sum divided by m, after any `nn.grad_sum` combination,
//     so a tied parameter's contributions are each summed on their own
//     stage and added once, in the same order for every stage count.
//  3. Forward ops get virtual stages from the nn.stage_end markers (or the
//     `mpmd.stage` annotations of a user's partitioning pass), backward ops
//     the stage of the forward op they differentiate, step ops the stage of
//     the parameter they update (consumers first; shared ones, such as the
//     global gradient norm, the latest stage among their operands).
//  4. Groups (virtual stage, kind) and (stage, level) become fragments,
//     where a step op's level counts the stage changes on its longest input
//     path, so the fragment graph is acyclic; every value crossing groups
//     becomes a transfer.
//
//===----------------------------------------------------------------------===//
#include "Partitioner.h"

#include "tandem/Dialect/MPMD/Transforms/Passes.h"

namespace tandem::mpmd {
#define GEN_PASS_DEF_MPMDPARTITION
#include "tandem/Dialect/MPMD/Transforms/Passes.h.inc"
} // namespace tandem::mpmd

using namespace mlir;
using namespace tandem::mpmd;
using namespace tandem::mpmd::partition;

LogicalResult Partitioner::run() {
  if (failed(checkInputs()) || failed(classify()) ||
      failed(insertAccumulation()) || failed(placeForward()) ||
      failed(placeBackward()) || failed(placeStep()))
    return failure();
  formGroups();
  return build();
}

namespace {

struct MPMDPartitionPass
    : public tandem::mpmd::impl::MPMDPartitionBase<MPMDPartitionPass> {
  using MPMDPartitionBase::MPMDPartitionBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fail = [&](const Twine &message) {
      module.emitError("mpmd-partition: ") << message;
      signalPassFailure();
    };
    if (stages < 1 || chunks < 1 || microbatches < 1)
      return fail("stages, chunks and microbatches must be at least 1, "
                  "found stages=" +
                  Twine(stages) + " chunks=" + Twine(chunks) +
                  " microbatches=" + Twine(microbatches));
    auto function = module.lookupSymbol<func::FuncOp>(this->function);
    if (!function)
      return fail("no function @" + this->function + " to partition");
    if (module.lookupSymbol(program))
      return fail("the module already has a symbol @" + program);
    Partitioner partitioner(module, function, program,
                            {stages, chunks, microbatches, splitBackward});
    if (failed(partitioner.run()))
      signalPassFailure();
  }
};

} // namespace
