//===- LowerCPUPass.cpp - tandem-lower-cpu --------------------------------===//

#include "tandem/Lowering/RankLowering.h"
#include "tandem/Target/CPU/CPUBackend.h"
#include "tandem/Target/CPU/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"

namespace tandem::cpu {
#define GEN_PASS_DEF_TANDEMLOWERCPU
#include "tandem/Target/CPU/Passes.h.inc"
} // namespace tandem::cpu

using namespace mlir;

namespace {

struct LowerCPUPass
    : public tandem::cpu::impl::TandemLowerCPUBase<LowerCPUPass> {
  using TandemLowerCPUBase::TandemLowerCPUBase;

  void runOnOperation() override {
    tandem::cpu::CompileOptions compile;
    compile.compiler = compiler;
    compile.arch = cpuArch;
    compile.cacheDir = cacheDir;
    std::unique_ptr<tandem::lowering::TargetBackend> backend =
        tandem::cpu::createCPUBackend(compile);
    tandem::lowering::LowerRanksOptions options;
    options.outputDir = outputDir;
    options.diagnosticPrefix = "tandem-lower-cpu";
    FailureOr<std::vector<tandem::lowering::LoweredRank>> ranks =
        tandem::lowering::lowerRanks(getOperation(), *backend, options);
    if (failed(ranks))
      return signalPassFailure();
    for (const tandem::lowering::LoweredRank &rank : *ranks)
      mlir::emitRemark(getOperation().getLoc(), "tandem-lower-cpu: rank ")
          << rank.rank << ": " << rank.libraryPath << ", " << rank.manifestPath
          << (rank.cached ? " (cached library)" : "");
  }
};

} // namespace
