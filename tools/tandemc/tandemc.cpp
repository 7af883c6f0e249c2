//===- tandemc.cpp - Tandem's compiler driver -----------------------------===//
//
// `tandemc model.mlir` compiles a model into per-rank pipeline programs
// through the phases of CompilePipeline.h, each a pass pipeline; --emit
// stops after any phase. `tandemc models` generates models
// (ModelsCommand.cpp), `tandemc schedule` simulates schedules
// (ScheduleCommand.cpp).
//
//===----------------------------------------------------------------------===//

#include "CompilePipeline.h"
#include "EvalProgram.h"
#include "LowerCommand.h"
#include "ModelsCommand.h"
#include "NativeCompile.h"
#include "RankFiles.h"
#include "ScheduleCommand.h"

#include "tandem/InitAll.h"
#include "tandem/Lowering/TargetCommandLine.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace llvm;

using tandem::tandemc::Phase;
using tandem::tandemc::phaseName;

static cl::OptionCategory tandemcCategory("tandemc options");

static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<model.mlir>"),
                                          cl::init("-"),
                                          cl::cat(tandemcCategory));
static cl::opt<std::string>
    outputFilename("o",
                   cl::desc("Output: a directory for the per-rank programs "
                            "(the default --emit=split), else a file"),
                   cl::value_desc("path"), cl::init("-"),
                   cl::cat(tandemcCategory));

#define TANDEMC_PHASE(value, help)                                             \
  clEnumValN(Phase::value, tandem::tandemc::phaseName(Phase::value), help)
static cl::opt<Phase> emitPhase(
    "emit", cl::desc("Stop after this phase and print the program"),
    cl::values(
        TANDEMC_PHASE(NN, "the parsed and verified model (nn dialect), "
                          "its vocabulary padded (--pad-classes)"),
        TANDEMC_PHASE(Precision, "after nn-mixed-precision"),
        TANDEMC_PHASE(Grad, "after nn-autodiff: @<function>_grad"),
        TANDEMC_PHASE(Train, "after nn-optimizer: @train_step"),
        TANDEMC_PHASE(Partition, "after mpmd-partition: the mpmd.program"),
        TANDEMC_PHASE(Schedule, "after mpmd-schedule: rank action lists"),
        TANDEMC_PHASE(Remat, "after mpmd-remat"),
        TANDEMC_PHASE(Lowered, "after mpmd-lower-transfers: send/recv"),
        TANDEMC_PHASE(Verified, "after mpmd-verify"),
        TANDEMC_PHASE(Split, "one module per rank, written to -o DIR"),
        TANDEMC_PHASE(Native, "with --target cpu: per-rank C++, shared "
                              "libraries and manifests in -o DIR")),
    cl::init(Phase::Split), cl::cat(tandemcCategory));
#undef TANDEMC_PHASE

static cl::opt<std::string> function("function",
                                     cl::desc("The model's loss function"),
                                     cl::init("forward"),
                                     cl::cat(tandemcCategory));
static cl::opt<int64_t> stages("stages", cl::desc("Pipeline stages (ranks)"),
                               cl::init(1), cl::cat(tandemcCategory));
static cl::opt<int64_t>
    chunks("chunks",
           cl::desc("Model chunks per stage (default: 2 for "
                    "interleaved-1f1b, else 1)"),
           cl::init(0), cl::cat(tandemcCategory));
static cl::opt<int64_t> microbatches("microbatches",
                                     cl::desc("Microbatches per step; the "
                                              "model's inputs are one"),
                                     cl::init(1), cl::cat(tandemcCategory));
static cl::opt<std::string>
    schedule("schedule",
             cl::desc("gpipe, 1f1b, interleaved-1f1b, zb-h1 or a schedule "
                      "table file"),
             cl::init("1f1b"), cl::cat(tandemcCategory));
static cl::opt<std::string>
    optimizer("optimizer",
              cl::desc("nn-optimizer's options, e.g. \"optimizer=adamw "
                       "lr=0.001 clip-norm=1.0\""),
              cl::init("optimizer=adamw"), cl::cat(tandemcCategory));
static cl::opt<std::string> precision("precision",
                                      cl::desc("f32, bf16 or fp16"),
                                      cl::init("f32"),
                                      cl::cat(tandemcCategory));
static cl::opt<std::string>
    precisionOptions("precision-options",
                     cl::desc("further nn-mixed-precision options"),
                     cl::init(""), cl::cat(tandemcCategory));
static cl::opt<std::string>
    remat("remat",
          cl::desc("none, full, selective, annotated (the model's "
                   "nn.recompute marks) or budget=<bytes>"),
          cl::init("none"), cl::cat(tandemcCategory));
static cl::opt<std::string> compress(
    "compress",
    cl::desc("Codecs on the transfers between stages: mpmd-compress-transfers "
             "options, e.g. \"activations=int8 gradients=fp8 block=128\""),
    cl::init(""), cl::cat(tandemcCategory));
static cl::opt<std::string> subspace(
    "subspace",
    cl::desc("Keep the residual stream in a k-wide subspace (nn-subspace "
             "options, e.g. \"rank=64 seed=7\"): stage edges carry k numbers "
             "per token"),
    cl::init(""), cl::cat(tandemcCategory));
static cl::opt<std::string> partitioner(
    "partitioner",
    cl::desc("A pass (with options) run before mpmd-partition to assign "
             "stages, e.g. from --load-pass-plugin"),
    cl::init(""), cl::cat(tandemcCategory));
static cl::list<std::string> passPlugins("load-pass-plugin",
                                         cl::desc("Load a pass plugin library"),
                                         cl::value_desc("lib.so"),
                                         cl::cat(tandemcCategory));
static cl::opt<std::string>
    target("target",
           cl::desc("none (per-rank MLIR) or a registered target: cpu (also "
                    "C++, a shared library and a manifest per rank; "
                    "docs/cpu-backend.md), cuda (CUDA C++ for nvcc, or the "
                    "host emulation; docs/cuda-backend.md)"),
           cl::init("none"), cl::cat(tandemcCategory));
static cl::opt<int64_t> padClasses(
    "pad-classes",
    cl::desc("Pad a loss's vocabulary to a multiple of N by storing the LM "
             "head's weight padded, the padding masked out of the loss "
             "(nn-pad-classes); 1: no padding. Default: the target's "
             "multiple (cuda 128, cpu 1)"),
    cl::value_desc("N"), cl::init(0), cl::cat(tandemcCategory));
static cl::opt<bool>
    memory("memory",
           cl::desc("Report every rank's peak memory by category "
                    "(mpmd-memory) after verification"),
           cl::init(false), cl::cat(tandemcCategory));
static cl::opt<bool>
    timing("timing",
           cl::desc("Print the time of every phase and pass (with --target "
                    "cpu: C++ emission and compilation apart)"),
           cl::init(false), cl::cat(tandemcCategory));
static cl::opt<unsigned>
    jobs("jobs",
         cl::desc("C++ compilations to run at once with --target cpu "
                  "(default: one per core)"),
         cl::init(0), cl::cat(tandemcCategory));

static constexpr const char *overview = R"(Tandem compiler driver

  tandemc model.mlir -o DIR [--stages S] [--microbatches m] [--chunks v]
          [--schedule gpipe|1f1b|interleaved-1f1b|zb-h1|FILE]
          [--optimizer "optimizer=adamw lr=..."] [--precision f32|bf16|fp16]
          [--remat none|full|selective|annotated|budget=BYTES]
          [--compress "activations=int8|fp8 gradients=int8|fp8 ..."]
          [--subspace "rank=K seed=S"]
          [--load-pass-plugin lib.so --partitioner PASS] [--memory]
          [--target none|cpu|cuda] [--cpu-arch ARCH]
          [--cuda-arch SM] [--cuda-emulate] [--jobs N] [--timing]
      Compiles the model's @forward (one microbatch) into one program per
      pipeline rank: autodiff, optimizer, mixed precision, partitioning,
      scheduling, rematerialization, explicit send/recv, verification; writes
      DIR/rank<N>.mlir and DIR/pipeline.mlir (all ranks, for tandem-eval
      --program pipeline); --target cpu also DIR/rank<N>.{cpp,so,json}
      (compiled with $TANDEM_CXX for --cpu-arch, cached in
      $TANDEM_CPU_CACHE).
      --emit=PHASE stops earlier and prints that form (nn, precision, grad,
      train, partition, schedule, remat, lowered, verified, split).
      MLIR's --mlir-print-ir-after-all and friends apply.

  tandemc lower program.mlir -o DIR [--target cpu] [--cpu-arch ARCH]
                [--jobs N] [--timing] [--split-input-file]
                [--verify-diagnostics]
      Lowers a scheduled, lowered and verified program (--emit=verified or
      --emit=split output, or written by hand) to DIR/rank<N>.{cpp,so,json}.

  tandemc models gpt|mlp [--config NAME] [--layers N ...] [-o out]
      Generates a model; see `tandemc models --help`.

  tandemc schedule --schedule gpipe|1f1b|interleaved-1f1b|zb-h1|FILE
                   --ranks p --microbatches m [--chunks v] [--print]
                   [--svg out.svg] [--trace out.json]
      Validates and simulates a pipeline schedule; see
      `tandemc schedule --help` and docs/schedules.md.
)";

static int fail(const Twine &message) {
  WithColor::error(errs(), "tandemc") << message << "\n";
  return 1;
}

static int compile(const mlir::DialectRegistry &registry,
                   const tandem::lowering::TargetCommandLine &targets) {
  for (const std::string &path : passPlugins) {
    auto plugin = mlir::PassPlugin::load(path);
    if (!plugin)
      return fail("cannot load pass plugin '" + path +
                  "': " + toString(plugin.takeError()));
    plugin->registerPassRegistryCallbacks();
  }
  tandem::tandemc::CompileOptions options;
  options.function = function;
  options.stages = stages;
  options.chunks = chunks;
  options.microbatches = microbatches;
  options.schedule = schedule;
  options.optimizer = optimizer;
  options.precision = precision;
  options.precisionOptions = precisionOptions;
  options.remat = remat;
  options.compress = compress;
  options.subspace = subspace;
  options.partitioner = partitioner;
  options.memory = memory;
  options.target = target;
  if (emitPhase == Phase::Native && target == "none")
    return fail("--emit=native needs a target: --target cpu");
  // A target goes on to the native phase unless --emit stops earlier.
  Phase last = emitPhase == Phase::Split && target != "none"
                   ? Phase::Native
                   : emitPhase.getValue();
  bool toDirectory = last == Phase::Split || last == Phase::Native;
  if (toDirectory) {
    if (outputFilename == "-")
      return fail("the per-rank programs go to a directory: give -o DIR, or "
                  "--emit=PHASE to print one form");
    options.outputDir = outputFilename;
  }
  // The target and its options (each target's own: --cpu-arch for cpu).
  auto backend = targets.create(target);
  if (!backend)
    return fail(toString(backend.takeError()));
  if (*backend) {
    std::vector<std::string> lowered = (*backend)->supportedOps();
    options.fusedAttention = llvm::is_contained(lowered, "nn.attention_grad");
    options.fusedNorms = llvm::is_contained(lowered, "nn.layer_norm_grad") &&
                         llvm::is_contained(lowered, "nn.rms_norm_grad");
    options.fusedGelu = llvm::is_contained(lowered, "nn.gelu_grad");
    options.classMultiple = (*backend)->classMultiple();
    options.fifoPairs = (*backend)->pairsMessagesInOrder();
    options.recomputeSplits = (*backend)->readsSplitsInPlace();
  }
  if (padClasses.getNumOccurrences())
    options.classMultiple = padClasses;
  auto phases = tandem::tandemc::buildPhases(options, last);
  if (!phases)
    return fail(toString(phases.takeError()));

  std::string errorMessage;
  auto input = mlir::openInputFile(inputFilename, &errorMessage);
  if (!input)
    return fail(errorMessage);
  SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), SMLoc());
  mlir::MLIRContext context(registry);
  // A failing pass would otherwise append the whole module in generic form
  // to its error (thousands of lines for a GPT); the error's source
  // location says where. --mlir-print-op-on-diagnostic=true brings it back.
  cl::Option *printOp =
      cl::getRegisteredOptions().lookup("mlir-print-op-on-diagnostic");
  if (!printOp || !printOp->getNumOccurrences())
    context.printOpOnDiagnostic(false);
  // Diagnostics quote the offending source line with a caret.
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);

  mlir::DefaultTimingManager timingManager;
  timingManager.setEnabled(timing);
  mlir::TimingScope root = timingManager.getRootScope();
  // Parsing verifies the module too.
  mlir::OwningOpRef<mlir::ModuleOp> module;
  {
    mlir::TimingScope parse = root.nest("parse");
    module = mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  }
  if (!module)
    return 1;

  // Prints the module to `path`; false on failure.
  auto write = [&](StringRef path) {
    auto output = mlir::openOutputFile(path, &errorMessage);
    if (!output)
      return false;
    module->print(output->os());
    output->os() << "\n";
    output->keep();
    return true;
  };
  // The trained module before partitioning, for the eval program.
  mlir::OwningOpRef<mlir::ModuleOp> trained;
  for (const tandem::tandemc::PhasePipeline &phase : *phases) {
    if (phase.phase == Phase::Native) {
      mlir::TimingScope scope = root.nest(phaseName(Phase::Native));
      tandem::tandemc::NativeOptions native;
      native.outputDir = options.outputDir;
      native.jobs = jobs;
      native.backend = backend->get();
      if (failed(tandem::tandemc::compileNative(*module, native, scope)))
        return 1;
      if (trained && failed(tandem::tandemc::compileEvalProgram(
                         *trained, options, native, scope)))
        return 1;
      continue;
    }
    if (phase.phase == Phase::Partition && last == Phase::Native)
      trained = module->clone();
    if (phase.pipeline.empty())
      continue;
    if (phase.phase == Phase::Split) {
      // Before splitting, keep the whole verified program: tandem-eval
      // runs it (--program pipeline), mpmd-simulate and mpmd-memory read it.
      if (std::error_code error =
              sys::fs::create_directories(options.outputDir))
        return fail("cannot create '" + options.outputDir +
                    "': " + error.message());
      mlir::TimingScope scope = root.nest("write pipeline.mlir");
      if (!write(options.outputDir + "/pipeline.mlir"))
        return fail(errorMessage);
    }
    mlir::PassManager pm(&context, mlir::ModuleOp::getOperationName());
    if (failed(mlir::applyPassManagerCLOptions(pm)))
      return 1;
    std::string diagnostics;
    raw_string_ostream os(diagnostics);
    if (failed(mlir::parsePassPipeline(phase.pipeline, pm, os)))
      return fail(Twine("phase '") + tandem::tandemc::phaseName(phase.phase) +
                  "': " + diagnostics);
    mlir::TimingScope scope =
        root.nest(tandem::tandemc::phaseName(phase.phase));
    pm.enableTiming(scope);
    if (failed(pm.run(*module)))
      return 1;
    if (phase.phase == Phase::Split) {
      mlir::TimingScope write = root.nest("write rank<N>.mlir");
      if (failed(tandem::tandemc::writeRankModules(*module, options.outputDir)))
        return 1;
    }
  }

  if (toDirectory)
    return 0;
  if (!write(outputFilename))
    return fail(errorMessage);
  return 0;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  // First: --mlir-print-ir-after=<pass> lists the passes registered when
  // the pass manager's options are created.
  tandem::registerAllPasses();
  tandem::registerAllTargets();
  mlir::registerPassManagerCLOptions();
  // Every target's options (--cpu-arch, ...), here and in `tandemc lower`.
  tandem::lowering::TargetCommandLine targetOptions(tandemcCategory);
  tandem::tandemc::registerLowerCommandOptions();
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
  if (tandem::tandemc::lowerCommandSelected())
    return tandem::tandemc::runLowerCommand(registry);
  return compile(registry, targetOptions);
}
