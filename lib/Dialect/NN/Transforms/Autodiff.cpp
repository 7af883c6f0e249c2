//===- Autodiff.cpp - nn-autodiff (being written) ----------------------------------===//
//
// Placeholder so the pass registers while it is implemented; it reports an
// error instead of doing anything.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/NN/IR/NNOps.h"
#include "tandem/Dialect/NN/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace tandem::nn {
#define GEN_PASS_DEF_NNAUTODIFF
#include "tandem/Dialect/NN/Transforms/Passes.h.inc"
} // namespace tandem::nn

namespace {
struct NNAutodiffPass : tandem::nn::impl::NNAutodiffBase<NNAutodiffPass> {
  using NNAutodiffBase::NNAutodiffBase;
  void runOnOperation() override {
    getOperation().emitError("nn-autodiff is not implemented yet");
    signalPassFailure();
  }
};
} // namespace
