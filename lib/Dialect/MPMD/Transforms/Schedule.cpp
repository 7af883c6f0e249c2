//===- Schedule.cpp - mpmd-schedule (being written)
//-----------------------------===//
//
// Placeholder so the pass registers while it is implemented; it reports an
// error instead of doing anything.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/MPMD/IR/MPMDOps.h"
#include "tandem/Dialect/MPMD/Transforms/Passes.h"

namespace tandem::mpmd {
#define GEN_PASS_DEF_MPMDSCHEDULE
#include "tandem/Dialect/MPMD/Transforms/Passes.h.inc"
} // namespace tandem::mpmd

namespace {
struct MPMDSchedulePass
    : tandem::mpmd::impl::MPMDScheduleBase<MPMDSchedulePass> {
  using MPMDScheduleBase::MPMDScheduleBase;
  void runOnOperation() override {
    getOperation().emitError("mpmd-schedule is not implemented yet");
    signalPassFailure();
  }
};
} // namespace
