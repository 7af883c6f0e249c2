//===- LowerCommand.cpp - `tandemc lower` ---------------------------------===//
//
// `tandemc lower PROGRAM.mlir -o DIR --target cpu [--cpu-arch ARCH]`: the
// native phase alone, on a program that is already scheduled, lowered and
// verified (tandemc --emit=verified, or one written by hand), whole or in
// the per-rank form of mpmd-split-programs. It writes what `tandemc
// --target` writes after --emit=split: DIR/rank<N>.{source,library,json}.
// --split-input-file and --verify-diagnostics work as in tandem-opt, so the
// lowering's errors are tested at their source lines.
//
//===----------------------------------------------------------------------===//

#include "LowerCommand.h"
#include "NativeCompile.h"

#include "tandem/Lowering/TargetCommandLine.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Support/ToolUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

#include <memory>

using namespace llvm;

static cl::SubCommand lowerCommand(
    "lower", "Lower a verified pipeline program to per-rank code, libraries "
             "and manifests");

static cl::OptionCategory lowerCategory("Lower options");

static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<program.mlir>"),
                                          cl::init("-"), cl::sub(lowerCommand),
                                          cl::cat(lowerCategory));
static cl::opt<std::string>
    outputDir("o", cl::desc("The directory for rank<N>.{source,library,json}"),
              cl::value_desc("dir"), cl::sub(lowerCommand),
              cl::cat(lowerCategory));
static cl::opt<std::string> target("target",
                                   cl::desc("The target (--target cpu, ...)"),
                                   cl::init("cpu"), cl::sub(lowerCommand),
                                   cl::cat(lowerCategory));
static cl::opt<unsigned> jobs("jobs",
                              cl::desc("Compilations to run at once "
                                       "(default: one per core)"),
                              cl::init(0), cl::sub(lowerCommand),
                              cl::cat(lowerCategory));
static cl::opt<bool> timing("timing",
                            cl::desc("Print the time of emission and "
                                     "compilation"),
                            cl::init(false), cl::sub(lowerCommand),
                            cl::cat(lowerCategory));
static cl::opt<bool> splitInputFile(
    "split-input-file",
    cl::desc("Lower each chunk between '// -----' lines on its own"),
    cl::init(false), cl::sub(lowerCommand), cl::cat(lowerCategory));
static cl::opt<bool> verifyDiagnostics(
    "verify-diagnostics",
    cl::desc("Check the diagnostics against the input's expected-* lines"),
    cl::init(false), cl::sub(lowerCommand), cl::cat(lowerCategory));

static std::unique_ptr<tandem::lowering::TargetCommandLine> targetOptions;

void tandem::tandemc::registerLowerCommandOptions() {
  targetOptions = std::make_unique<tandem::lowering::TargetCommandLine>(
      lowerCategory, lowerCommand);
}

bool tandem::tandemc::lowerCommandSelected() {
  return static_cast<bool>(lowerCommand);
}

static int fail(const Twine &message) {
  WithColor::error(errs(), "tandemc lower") << message << "\n";
  return 1;
}

/// Parses one chunk and lowers it; with --verify-diagnostics, success means
/// the diagnostics were the expected ones.
static mlir::LogicalResult
lowerChunk(std::unique_ptr<MemoryBuffer> chunk,
           const mlir::DialectRegistry &registry,
           tandem::lowering::TargetBackend &backend) {
  SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(chunk), SMLoc());
  mlir::MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  std::unique_ptr<mlir::SourceMgrDiagnosticVerifierHandler> verifier;
  std::unique_ptr<mlir::SourceMgrDiagnosticHandler> handler;
  if (verifyDiagnostics)
    verifier = std::make_unique<mlir::SourceMgrDiagnosticVerifierHandler>(
        sourceMgr, &context);
  else
    handler =
        std::make_unique<mlir::SourceMgrDiagnosticHandler>(sourceMgr, &context);

  mlir::DefaultTimingManager timingManager;
  timingManager.setEnabled(timing);
  mlir::TimingScope root = timingManager.getRootScope();
  mlir::LogicalResult result = mlir::failure();
  mlir::OwningOpRef<mlir::ModuleOp> module;
  {
    mlir::TimingScope parse = root.nest("parse");
    module = mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  }
  if (module) {
    tandem::tandemc::NativeOptions native;
    native.outputDir = outputDir;
    native.jobs = jobs;
    native.backend = &backend;
    native.toolName = "tandemc lower";
    mlir::TimingScope scope = root.nest("native");
    result = tandem::tandemc::compileNative(*module, native, scope);
  }
  return verifier ? verifier->verify() : result;
}

int tandem::tandemc::runLowerCommand(const mlir::DialectRegistry &registry) {
  if (outputDir.empty())
    return fail("no output directory given: -o DIR");
  auto backend = targetOptions->create(target);
  if (!backend)
    return fail(toString(backend.takeError()));
  if (!*backend)
    return fail("--target none writes no code: give a target, e.g. "
                "--target cpu");
  std::string error;
  std::unique_ptr<MemoryBuffer> input =
      mlir::openInputFile(inputFilename, &error);
  if (!input)
    return fail(error);
  auto process = [&](std::unique_ptr<MemoryBuffer> chunk, raw_ostream &) {
    return lowerChunk(std::move(chunk), registry, **backend);
  };
  mlir::LogicalResult result = mlir::splitAndProcessBuffer(
      std::move(input), process, outs(),
      splitInputFile ? mlir::kDefaultSplitMarker : "", "");
  return mlir::failed(result) ? 1 : 0;
}
