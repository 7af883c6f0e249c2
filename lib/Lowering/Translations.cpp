//===- Translations.cpp - a module's code through a target ----------------===//

#include "tandem/Lowering/Translations.h"

#include "tandem/Dialect/MPMD/IR/MPMDDialect.h"
#include "tandem/Dialect/MPMD/IR/MPMDOps.h"
#include "tandem/Dialect/NN/IR/NNDialect.h"
#include "tandem/Lowering/TargetCommandLine.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace tandem::lowering;

namespace {

llvm::cl::OptionCategory &category() {
  static llvm::cl::OptionCategory instance("Target options");
  return instance;
}

llvm::cl::opt<std::string> &targetOption() {
  static llvm::cl::opt<std::string> option(
      "target", llvm::cl::desc("The target that writes the code"),
      llvm::cl::init("cpu"), llvm::cl::cat(category()));
  return option;
}

const TargetCommandLine &targetCommandLine() {
  static TargetCommandLine instance(category());
  return instance;
}

/// Functions (func.func) and fragments with bodies, in module order
/// (fragments sit in an mpmd.program or, after mpmd-split-programs, in a
/// rank module).
llvm::SmallVector<Operation *> functionsOf(ModuleOp module) {
  llvm::SmallVector<Operation *> functions;
  module.walk([&](Operation *op) {
    if (auto fn = dyn_cast<func::FuncOp>(op)) {
      if (!fn.isExternal())
        functions.push_back(op);
    } else if (auto fragment = dyn_cast<tandem::mpmd::FragmentOp>(op)) {
      if (!fragment.isExternal())
        functions.push_back(op);
    }
  });
  return functions;
}

/// The configured target and the source it writes for `module`; errors are
/// reported on the module.
FailureOr<std::pair<std::unique_ptr<TargetBackend>, EmittedSource>>
emitSource(ModuleOp module) {
  llvm::Expected<std::unique_ptr<TargetBackend>> backend =
      targetCommandLine().create(targetOption());
  if (!backend)
    return module.emitError() << llvm::toString(backend.takeError());
  if (!*backend)
    return module.emitError() << "--target none writes no code: give one of "
                              << llvm::join(registeredTargetBackends(), ", ");
  FailureOr<EmittedSource> source = (*backend)->emit(functionsOf(module));
  if (failed(source))
    return failure();
  return std::make_pair(std::move(*backend), std::move(*source));
}

LogicalResult translateToSource(ModuleOp module, llvm::raw_ostream &os) {
  auto emitted = emitSource(module);
  if (failed(emitted))
    return failure();
  os << emitted->second.text;
  return success();
}

LogicalResult translateToLibrary(ModuleOp module, llvm::raw_ostream &os) {
  auto emitted = emitSource(module);
  if (failed(emitted))
    return failure();
  auto &[backend, source] = *emitted;
  llvm::Expected<CompiledLibrary> library = backend->compile(source.text);
  if (!library)
    return module.emitError() << llvm::toString(library.takeError());
  auto bytes = llvm::MemoryBuffer::getFile(library->path, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
  if (!bytes)
    return module.emitError() << "cannot read '" << library->path
                              << "': " << bytes.getError().message();
  // The cache path says where the library lives for tools that load it from
  // there; the bytes go to the output.
  module.emitRemark() << "compiled " << library->path
                      << (library->cached ? " (cached)" : "");
  os << (*bytes)->getBuffer();
  return success();
}

void registerDialects(DialectRegistry &registry) {
  registry.insert<tandem::nn::NNDialect, tandem::mpmd::MPMDDialect,
                  func::FuncDialect>();
}

} // namespace

void tandem::lowering::registerTargetTranslations() {
  static bool registered = [] {
    // The options exist before the command line is parsed.
    (void)targetOption();
    (void)targetCommandLine();
    TranslateFromMLIRRegistration toSource(
        "tandem-to-source",
        "The target's source for every function and fragment (--target)",
        translateToSource, registerDialects);
    TranslateFromMLIRRegistration toLibrary(
        "tandem-to-library",
        "The library the target compiles from that source (--target)",
        translateToLibrary, registerDialects);
    return true;
  }();
  (void)registered;
}
