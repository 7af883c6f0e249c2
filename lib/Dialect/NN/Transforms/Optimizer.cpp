//===- Optimizer.cpp - nn-optimizer (being written) ----------------------------------===//
//
// Placeholder so the pass registers while it is implemented; it reports an
// error instead of doing anything.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/NN/IR/NNOps.h"
#include "tandem/Dialect/NN/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace tandem::nn {
#define GEN_PASS_DEF_NNOPTIMIZER
#include "tandem/Dialect/NN/Transforms/Passes.h.inc"
} // namespace tandem::nn

namespace {
struct NNOptimizerPass : tandem::nn::impl::NNOptimizerBase<NNOptimizerPass> {
  using NNOptimizerBase::NNOptimizerBase;
  void runOnOperation() override {
    getOperation().emitError("nn-optimizer is not implemented yet");
    signalPassFailure();
  }
};
} // namespace
