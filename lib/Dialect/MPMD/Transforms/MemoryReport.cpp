//===- MemoryReport.cpp - mpmd-memory -------------------------------------===//
//
// Reports the per-rank memory analysis (tandem/Dialect/MPMD/Analysis/
// Memory.h) of every scheduled mpmd.program: one remark per rank on the
// program, and with json= the table as a file. The remark format is
// documented in docs/mpmd.md, "Memory analysis".
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/MPMD/Analysis/Memory.h"
#include "tandem/Dialect/MPMD/IR/MPMDOps.h"
#include "tandem/Dialect/MPMD/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ToolOutputFile.h"

namespace tandem::mpmd {
#define GEN_PASS_DEF_MPMDMEMORY
#include "tandem/Dialect/MPMD/Transforms/Passes.h.inc"
} // namespace tandem::mpmd

using namespace mlir;
using namespace tandem::mpmd;

namespace {

llvm::json::Object toJSON(const RankMemory &m) {
  return llvm::json::Object{{"rank", m.rank},
                            {"peak", m.peak},
                            {"parameters", m.parameters},
                            {"parameterCopies", m.parameterCopies},
                            {"gradients", m.gradients},
                            {"optimizerState", m.optimizerState},
                            {"stashPerMicrobatch", m.stashPerMicrobatch},
                            {"peakInFlight", m.peakInFlight},
                            {"stash", m.stash},
                            {"temporaries", m.temporaries}};
}

struct MPMDMemoryPass : tandem::mpmd::impl::MPMDMemoryBase<MPMDMemoryPass> {
  using MPMDMemoryBase::MPMDMemoryBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::json::Array programs;
    bool failedAny = false;
    for (ProgramOp program : module.getOps<ProgramOp>()) {
      FailureOr<SmallVector<RankMemory>> memory = analyzeMemory(program);
      if (failed(memory)) {
        failedAny = true;
        continue;
      }
      llvm::json::Array ranks;
      for (const RankMemory &m : *memory) {
        std::string line;
        llvm::raw_string_ostream os(line);
        printRankMemory(m, os);
        program.emitRemark() << line;
        ranks.push_back(toJSON(m));
      }
      programs.push_back(llvm::json::Object{{"program", program.getSymName()},
                                            {"ranks", std::move(ranks)}});
    }
    if (failedAny)
      return signalPassFailure();
    if (json.empty())
      return;
    std::error_code ec;
    llvm::ToolOutputFile out(json, ec, llvm::sys::fs::OF_Text);
    if (ec) {
      module.emitError() << "mpmd-memory cannot write '" << json
                         << "': " << ec.message();
      return signalPassFailure();
    }
    out.os() << llvm::formatv(
        "{0:2}\n", llvm::json::Value(
                       llvm::json::Object{{"programs", std::move(programs)}}));
    out.keep();
  }
};

} // namespace
