//===- EmulationBuild.h - emulated CUDA libraries for the unit tests -----===//
//
// Emits CUDA for a module's functions, builds the host emulation in a fresh
// cache directory and loads it: what EmulationTest and FusionPropertyTest
// both run their cases against.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_UNITTESTS_TARGET_CUDA_EMULATIONBUILD_H
#define TANDEM_UNITTESTS_TARGET_CUDA_EMULATIONBUILD_H

#include "EmitterTestUtils.h"

#include "tandem/Target/CUDA/CUDABackend.h"
#include "tandem/Target/CUDA/CudaEmitter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FileSystem.h"

namespace tandem::cuda::testing {

/// The emitted source and the loaded emulation library of a module's
/// functions; the cache directory goes with it.
struct Emulation {
  /// With buildEmulation(text): the parsed module and its context.
  std::unique_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  lowering::EmittedSource source;
  std::unique_ptr<cpu::testing::Library> library;
  llvm::SmallString<128> cacheDir;
  ~Emulation() {
    if (!cacheDir.empty())
      llvm::sys::fs::remove_directories(cacheDir);
  }
};

inline llvm::Expected<std::unique_ptr<Emulation>>
buildEmulation(mlir::ModuleOp module, const EmitOptions &emitOptions = {}) {
  auto emulation = std::make_unique<Emulation>();
  std::vector<mlir::Operation *> functions;
  for (auto fn : module.getOps<mlir::func::FuncOp>())
    functions.push_back(fn);
  mlir::FailureOr<lowering::EmittedSource> source =
      emitCuda(functions, emitOptions);
  if (mlir::failed(source))
    return llvm::createStringError("the cuda emitter failed");
  emulation->source = std::move(*source);
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory(
          "tandem-cuda-emulation", emulation->cacheDir))
    return llvm::createStringError("cannot create a cache directory: " +
                                   ec.message());
  CompileOptions options;
  options.emulate = true;
  options.cacheDir = std::string(emulation->cacheDir);
  auto library = compileSource(emulation->source.text, options);
  if (!library)
    return library.takeError();
  auto loaded = cpu::testing::Library::open(library->path);
  if (!loaded)
    return loaded.takeError();
  emulation->library = std::move(*loaded);
  return std::move(emulation);
}

/// The emulation of the functions of module `text`, parsed in a context of
/// its own; fails with the parser's diagnostics or the build's error.
inline llvm::Expected<std::unique_ptr<Emulation>>
buildEmulation(llvm::StringRef text, const EmitOptions &emitOptions = {}) {
  std::unique_ptr<mlir::MLIRContext> context = cpu::testing::makeContext();
  auto module = cpu::testing::parseModule(*context, text);
  if (!module)
    return module.takeError();
  auto emulation = buildEmulation(**module, emitOptions);
  if (!emulation)
    return emulation.takeError();
  (*emulation)->context = std::move(context);
  (*emulation)->module = std::move(*module);
  return emulation;
}

} // namespace tandem::cuda::testing

#endif // TANDEM_UNITTESTS_TARGET_CUDA_EMULATIONBUILD_H
