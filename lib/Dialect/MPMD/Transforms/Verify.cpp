//===- Verify.cpp - mpmd-verify (being written)
//-----------------------------===//
//
// Placeholder so the pass registers while it is implemented; it reports an
// error instead of doing anything.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/MPMD/IR/MPMDOps.h"
#include "tandem/Dialect/MPMD/Transforms/Passes.h"

namespace tandem::mpmd {
#define GEN_PASS_DEF_MPMDVERIFY
#include "tandem/Dialect/MPMD/Transforms/Passes.h.inc"
} // namespace tandem::mpmd

namespace {
struct MPMDVerifyPass : tandem::mpmd::impl::MPMDVerifyBase<MPMDVerifyPass> {
  using MPMDVerifyBase::MPMDVerifyBase;
  void runOnOperation() override {
    getOperation().emitError("mpmd-verify is not implemented yet");
    signalPassFailure();
  }
};
} // namespace
