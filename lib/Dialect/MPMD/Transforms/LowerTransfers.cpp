//===- LowerTransfers.cpp - mpmd-lower-transfers (being written)
//-----------------------------===//
//
// Placeholder so the pass registers while it is implemented; it reports an
// error instead of doing anything.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/MPMD/IR/MPMDOps.h"
#include "tandem/Dialect/MPMD/Transforms/Passes.h"

namespace tandem::mpmd {
#define GEN_PASS_DEF_MPMDLOWERTRANSFERS
#include "tandem/Dialect/MPMD/Transforms/Passes.h.inc"
} // namespace tandem::mpmd

namespace {
struct MPMDLowerTransfersPass
    : tandem::mpmd::impl::MPMDLowerTransfersBase<MPMDLowerTransfersPass> {
  using MPMDLowerTransfersBase::MPMDLowerTransfersBase;
  void runOnOperation() override {
    getOperation().emitError("mpmd-lower-transfers is not implemented yet");
    signalPassFailure();
  }
};
} // namespace
