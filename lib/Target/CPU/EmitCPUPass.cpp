//===- EmitCPUPass.cpp - tandem-emit-cpu ----------------------------------===//

#include "tandem/Dialect/MPMD/IR/MPMDOps.h"
#include "tandem/Target/CPU/Compiler.h"
#include "tandem/Target/CPU/CppEmitter.h"
#include "tandem/Target/CPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

namespace tandem::cpu {
#define GEN_PASS_DEF_TANDEMEMITCPU
#include "tandem/Target/CPU/Passes.h.inc"
} // namespace tandem::cpu

using namespace mlir;

namespace {

struct EmitCPUPass : public tandem::cpu::impl::TandemEmitCPUBase<EmitCPUPass> {
  using TandemEmitCPUBase::TandemEmitCPUBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::SmallVector<Operation *> functions;
    // Functions and fragments with bodies, in module order (fragments sit
    // inside mpmd.program or, after mpmd-split-programs, a rank module).
    module.walk([&](Operation *op) {
      if (auto fn = dyn_cast<func::FuncOp>(op)) {
        if (!fn.isExternal())
          functions.push_back(op);
      } else if (auto fragment = dyn_cast<tandem::mpmd::FragmentOp>(op)) {
        if (!fragment.isExternal())
          functions.push_back(op);
      }
    });
    FailureOr<tandem::cpu::EmitResult> result = tandem::cpu::emitCpp(functions);
    if (failed(result))
      return signalPassFailure();

    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> file = openOutputFile(output, &error);
    if (!file) {
      module.emitError("tandem-emit-cpu: ") << error;
      return signalPassFailure();
    }
    file->os() << result->source;
    file->keep();

    if (!compile)
      return;
    tandem::cpu::CompileOptions options;
    options.compiler = compiler;
    options.arch = cpuArch;
    options.cacheDir = cacheDir;
    llvm::Expected<tandem::cpu::CompiledLibrary> library =
        tandem::cpu::compileSource(result->source, options);
    if (!library) {
      module.emitError("tandem-emit-cpu: ")
          << llvm::toString(library.takeError());
      return signalPassFailure();
    }
    module.emitRemark("tandem-emit-cpu: compiled ")
        << library->path << (library->cached ? " (cached)" : "");
  }
};

} // namespace
