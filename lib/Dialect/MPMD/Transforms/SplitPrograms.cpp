//===- SplitPrograms.cpp - mpmd-split-programs (being written)
//-----------------------------===//
//
// Placeholder so the pass registers while it is implemented; it reports an
// error instead of doing anything.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/MPMD/IR/MPMDOps.h"
#include "tandem/Dialect/MPMD/Transforms/Passes.h"

namespace tandem::mpmd {
#define GEN_PASS_DEF_MPMDSPLITPROGRAMS
#include "tandem/Dialect/MPMD/Transforms/Passes.h.inc"
} // namespace tandem::mpmd

namespace {
struct MPMDSplitProgramsPass
    : tandem::mpmd::impl::MPMDSplitProgramsBase<MPMDSplitProgramsPass> {
  using MPMDSplitProgramsBase::MPMDSplitProgramsBase;
  void runOnOperation() override {
    getOperation().emitError("mpmd-split-programs is not implemented yet");
    signalPassFailure();
  }
};
} // namespace
