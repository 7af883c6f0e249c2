//===- FormKernelsPass.cpp - tandem-form-kernels --------------------------===//

#include "tandem/Dialect/MPMD/IR/MPMDOps.h"
#include "tandem/Lowering/Kernels.h"
#include "tandem/Lowering/Passes.h"
#include "tandem/Lowering/TargetBackend.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringExtras.h"

namespace tandem::lowering {
#define GEN_PASS_DEF_TANDEMFORMKERNELS
#include "tandem/Lowering/Passes.h.inc"
} // namespace tandem::lowering

using namespace mlir;

namespace {

struct FormKernelsPass
    : public tandem::lowering::impl::TandemFormKernelsBase<FormKernelsPass> {
  using TandemFormKernelsBase::TandemFormKernelsBase;

  void runOnOperation() override {
    tandem::lowering::FusionPolicy policy;
    policy.fuseReductions = fuseReductions;
    policy.fuseGemmEpilogues = fuseGemmEpilogues;
    policy.mergeGroups = mergeGroups;
    if (!target.empty()) {
      std::unique_ptr<tandem::lowering::TargetBackend> backend =
          tandem::lowering::createTargetBackend(target);
      if (!backend) {
        getOperation().emitError()
            << "tandem-form-kernels: unknown target '" << target << "' (known: "
            << llvm::join(tandem::lowering::registeredTargetBackends(), ", ")
            << ")";
        return signalPassFailure();
      }
      policy = backend->fusionPolicy();
    }
    getOperation().walk([&](Operation *op) {
      if (isa<func::FuncOp, tandem::mpmd::FragmentOp>(op))
        tandem::lowering::recordKernels(
            op, tandem::lowering::formKernels(op, policy));
    });
  }
};

} // namespace
