//===- tandemc.cpp - Tandem's compiler driver -----------------------------===//
//
// `tandemc model.mlir` parses and verifies a model and prints it; the
// compile pipeline (autodiff, optimizer, partitioning, scheduling, per-rank
// code generation) arrives stage by stage behind --emit. `tandemc models`
// generates models (see ModelsCommand.cpp).
//
//===----------------------------------------------------------------------===//

#include "ModelsCommand.h"
#include "ScheduleCommand.h"

#include "tandem/InitAll.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace llvm;

namespace {
/// The stage after which tandemc stops and prints the program.
enum class EmitStage { NN };
} // namespace

static cl::OptionCategory tandemcCategory("tandemc options");

static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<model.mlir>"),
                                          cl::init("-"),
                                          cl::cat(tandemcCategory));
static cl::opt<std::string> outputFilename("o", cl::desc("Output file"),
                                           cl::value_desc("filename"),
                                           cl::init("-"),
                                           cl::cat(tandemcCategory));
static cl::opt<EmitStage> emitStage(
    "emit", cl::desc("Stage to stop at and print"),
    cl::values(clEnumValN(EmitStage::NN, "nn",
                          "the parsed and verified model (nn dialect)")),
    cl::init(EmitStage::NN), cl::cat(tandemcCategory));

static constexpr const char *overview = R"(Tandem compiler driver

  tandemc model.mlir [--emit=nn] [-o out]
      Parses and verifies a model in the nn dialect and prints it. Later
      versions add the compile pipeline (autodiff, optimizer, partitioning,
      scheduling, per-rank code generation) and an --emit value per stage.

  tandemc models gpt|mlp [--config NAME] [--layers N ...] [-o out]
      Generates a model; see `tandemc models --help`.

  tandemc schedule --schedule gpipe|1f1b|interleaved-1f1b|zb-h1|FILE
                   --ranks p --microbatches m [--chunks v] [--print]
                   [--svg out.svg] [--trace out.json]
      Validates and simulates a pipeline schedule; see
      `tandemc schedule --help` and docs/schedules.md.
)";

static int compile(const mlir::DialectRegistry &registry) {
  std::string errorMessage;
  auto input = mlir::openInputFile(inputFilename, &errorMessage);
  if (!input) {
    WithColor::error(errs(), "tandemc") << errorMessage << "\n";
    return 1;
  }
  SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), SMLoc());
  mlir::MLIRContext context(registry);
  // Diagnostics quote the offending source line with a caret.
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  // Parsing verifies the module too.
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  auto output = mlir::openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    WithColor::error(errs(), "tandemc") << errorMessage << "\n";
    return 1;
  }
  switch (emitStage) {
  case EmitStage::NN:
    module->print(output->os());
    output->os() << "\n";
    break;
  }
  output->keep();
  return 0;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  // libLLVM registers hundreds of backend options; --help-hidden still
  // lists them and the MLIR printer options.
  cl::HideUnrelatedOptions(tandemcCategory);
  cl::ParseCommandLineOptions(argc, argv, overview);

  mlir::DialectRegistry registry;
  tandem::registerAllDialects(registry);
  if (tandem::tandemc::modelsCommandSelected())
    return tandem::tandemc::runModelsCommand(registry);
  if (tandem::tandemc::scheduleCommandSelected())
    return tandem::tandemc::runScheduleCommand();
  return compile(registry);
}
