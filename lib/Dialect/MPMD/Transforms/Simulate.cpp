//===- Simulate.cpp - mpmd-simulate (being written)
//-----------------------------===//
//
// Placeholder so the pass registers while it is implemented; it reports an
// error instead of doing anything.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/MPMD/IR/MPMDOps.h"
#include "tandem/Dialect/MPMD/Transforms/Passes.h"

namespace tandem::mpmd {
#define GEN_PASS_DEF_MPMDSIMULATE
#include "tandem/Dialect/MPMD/Transforms/Passes.h.inc"
} // namespace tandem::mpmd

namespace {
struct MPMDSimulatePass
    : tandem::mpmd::impl::MPMDSimulateBase<MPMDSimulatePass> {
  using MPMDSimulateBase::MPMDSimulateBase;
  void runOnOperation() override {
    getOperation().emitError("mpmd-simulate is not implemented yet");
    signalPassFailure();
  }
};
} // namespace
