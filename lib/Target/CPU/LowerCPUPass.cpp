//===- LowerCPUPass.cpp - tandem-lower-cpu --------------------------------===//

#include "tandem/Target/CPU/Passes.h"
#include "tandem/Target/CPU/RankLowering.h"

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
    tandem::cpu::LowerRanksOptions options;
    options.outputDir = outputDir;
    options.compile.compiler = compiler;
    options.compile.arch = cpuArch;
    options.compile.cacheDir = cacheDir;
    FailureOr<std::vector<tandem::cpu::LoweredRank>> ranks =
        tandem::cpu::lowerRanks(getOperation(), options);
    if (failed(ranks))
      return signalPassFailure();
    for (const tandem::cpu::LoweredRank &rank : *ranks)
      mlir::emitRemark(getOperation().getLoc(), "tandem-lower-cpu: rank ")
          << rank.rank << ": " << rank.libraryPath << ", " << rank.manifestPath
          << (rank.cached ? " (cached library)" : "");
  }
};

} // namespace
