//===- ModelsCommand.cpp - `tandemc models` -------------------------------===//
//
// `tandemc models gpt|mlp [--config NAME] [size flags] [stage flags]`: starts
// from a named configuration, applies the flags the user gave, builds the
// model with the tandem::models library and prints it. The output starts
// with a comment that reproduces the command in a canonical order, so a
// checked-in file says how to regenerate it.
//
//===----------------------------------------------------------------------===//

#include "ModelsCommand.h"

#include "tandem/Models/Config.h"
#include "tandem/Models/GPT.h"
#include "tandem/Models/MLP.h"
#include "tandem/Models/Summary.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace tandem;
using namespace tandem::models;

static cl::SubCommand modelsCommand(
    "models",
    "Generate a model in the nn dialect (GPT-2-style decoder or MLP)");

static cl::OptionCategory
    sizeCategory("Model options (override the named configuration's fields)");

static cl::opt<std::string> modelKind(cl::Positional, cl::Required,
                                      cl::desc("<gpt|mlp>"),
                                      cl::sub(modelsCommand));

static cl::opt<std::string>
    configName("config",
               cl::desc("Named configuration to start from: tiny, small or "
                        "gpt2-124m for gpt; tiny for mlp"),
               cl::value_desc("name"), cl::init("tiny"), cl::sub(modelsCommand),
               cl::cat(sizeCategory));

static cl::opt<int64_t> layers("layers",
                               cl::desc("Transformer blocks (gpt) or hidden "
                                        "layers (mlp)"),
                               cl::sub(modelsCommand), cl::cat(sizeCategory));
static cl::opt<int64_t> dim("dim",
                            cl::desc("Model width (gpt) or hidden width (mlp)"),
                            cl::sub(modelsCommand), cl::cat(sizeCategory));
static cl::opt<int64_t> heads("heads", cl::desc("Attention heads (gpt)"),
                              cl::sub(modelsCommand), cl::cat(sizeCategory));
static cl::opt<int64_t> vocab("vocab", cl::desc("Vocabulary size (gpt)"),
                              cl::sub(modelsCommand), cl::cat(sizeCategory));
static cl::opt<int64_t> seqLength(
    "seq",
    cl::desc("Sequence length (gpt); the position embedding wpe has this "
             "many rows, so the parameter count scales with it"),
    cl::sub(modelsCommand), cl::cat(sizeCategory));
static cl::opt<int64_t> batch("batch", cl::desc("Batch size"),
                              cl::sub(modelsCommand), cl::cat(sizeCategory));
static cl::opt<bool> tied("tied",
                          cl::desc("Tie the LM head to the token embedding "
                                   "(gpt; every named config is tied, "
                                   "--tied=false unties)"),
                          cl::sub(modelsCommand), cl::cat(sizeCategory));
static cl::opt<int64_t> inputs("inputs", cl::desc("Input features (mlp)"),
                               cl::sub(modelsCommand), cl::cat(sizeCategory));
static cl::opt<int64_t> classes("classes", cl::desc("Output classes (mlp)"),
                                cl::sub(modelsCommand), cl::cat(sizeCategory));
static cl::opt<int64_t>
    stageEvery("stage-every",
               cl::desc("Put a stage marker after every k layers (never "
                        "after the last one)"),
               cl::value_desc("k"), cl::sub(modelsCommand),
               cl::cat(sizeCategory));
static cl::list<int64_t>
    stageAt("stage-at",
            cl::desc("Put stage markers after these layers (0-based, sorted)"),
            cl::value_desc("i,j,..."), cl::CommaSeparated,
            cl::sub(modelsCommand), cl::cat(sizeCategory));

static cl::opt<std::string> outputFilename("o", cl::desc("Output file"),
                                           cl::value_desc("filename"),
                                           cl::init("-"),
                                           cl::sub(modelsCommand));
static cl::opt<bool>
    summary("summary",
            cl::desc("Print the parameter count and op counts to stderr"),
            cl::sub(modelsCommand));
static cl::opt<bool>
    debugInfo("debuginfo",
              cl::desc("Print op locations (model part and configuration)"),
              cl::sub(modelsCommand));

bool tandem::tandemc::modelsCommandSelected() {
  return static_cast<bool>(modelsCommand);
}

static int fail(const Twine &message) {
  WithColor::error(errs(), "tandemc") << message << "\n";
  return 1;
}

/// Flags that only one model kind understands.
static std::optional<std::string> misplacedFlag(bool isGPT) {
  for (cl::Option *flag :
       {static_cast<cl::Option *>(&heads), static_cast<cl::Option *>(&vocab),
        static_cast<cl::Option *>(&seqLength),
        static_cast<cl::Option *>(&tied)})
    if (!isGPT && flag->getNumOccurrences())
      return "--" + flag->ArgStr.str() + " applies only to gpt models";
  for (cl::Option *flag : {static_cast<cl::Option *>(&inputs),
                           static_cast<cl::Option *>(&classes)})
    if (isGPT && flag->getNumOccurrences())
      return "--" + flag->ArgStr.str() + " applies only to mlp models";
  return std::nullopt;
}

/// Applies a size flag the user gave; the flag's value, if given, is also
/// added to the canonical command line.
static void applyFlag(cl::opt<int64_t> &flag, int64_t &field,
                      raw_ostream &command) {
  if (!flag.getNumOccurrences())
    return;
  field = flag;
  command << " --" << flag.ArgStr << " " << field;
}

static void overrideStages(StageMarkers &stages, raw_ostream &command) {
  if (stageEvery.getNumOccurrences()) {
    stages.every = stageEvery;
    command << " --stage-every " << stages.every;
  }
  if (stageAt.getNumOccurrences()) {
    stages.at.assign(stageAt.begin(), stageAt.end());
    command << " --stage-at "
            << join(map_range(stages.at,
                              [](int64_t i) { return std::to_string(i); }),
                    ",");
  }
}

namespace {
struct BuiltModel {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::string description;
};
} // namespace

static Expected<BuiltModel> buildRequested(mlir::MLIRContext &context,
                                           bool isGPT, raw_ostream &command) {
  command << "tandemc models " << modelKind << " --config " << configName;
  if (isGPT) {
    Expected<GPTConfig> config = getGPTConfig(configName);
    if (!config)
      return config.takeError();
    applyFlag(layers, config->layers, command);
    applyFlag(dim, config->dim, command);
    applyFlag(heads, config->heads, command);
    applyFlag(vocab, config->vocab, command);
    applyFlag(seqLength, config->seq, command);
    applyFlag(batch, config->batch, command);
    if (tied.getNumOccurrences()) {
      config->tied = tied;
      command << (tied ? " --tied" : " --tied=false");
    }
    overrideStages(config->stages, command);
    auto module = buildGPT(context, *config);
    if (!module)
      return module.takeError();
    return BuiltModel{std::move(*module),
                      "gpt " + configName + ": " + config->describe()};
  }
  Expected<MLPConfig> config = getMLPConfig(configName);
  if (!config)
    return config.takeError();
  applyFlag(layers, config->layers, command);
  applyFlag(dim, config->dim, command);
  applyFlag(inputs, config->inputs, command);
  applyFlag(classes, config->classes, command);
  applyFlag(batch, config->batch, command);
  overrideStages(config->stages, command);
  auto module = buildMLP(context, *config);
  if (!module)
    return module.takeError();
  return BuiltModel{std::move(*module),
                    "mlp " + configName + ": " + config->describe()};
}

int tandem::tandemc::runModelsCommand(const mlir::DialectRegistry &registry) {
  if (modelKind != "gpt" && modelKind != "mlp")
    return fail("unknown model kind '" + modelKind +
                "'; expected 'gpt' or 'mlp'");
  bool isGPT = modelKind == "gpt";
  if (auto message = misplacedFlag(isGPT))
    return fail(*message);
  if (stageEvery.getNumOccurrences() && stageAt.getNumOccurrences())
    return fail("--stage-every and --stage-at are mutually exclusive");
  // The library reads every = 0 as "no markers"; on the command line it is
  // a mistake.
  if (stageEvery.getNumOccurrences() && stageEvery <= 0)
    return fail("--stage-every must be positive, found " + Twine(stageEvery));

  mlir::MLIRContext context(registry);
  std::string command;
  raw_string_ostream commandOS(command);
  Expected<BuiltModel> model = buildRequested(context, isGPT, commandOS);
  if (!model)
    return fail(toString(model.takeError()));

  std::string errorMessage;
  auto output = mlir::openOutputFile(outputFilename, &errorMessage);
  if (!output)
    return fail(errorMessage);
  raw_ostream &os = output->os();
  os << "// Generated by: " << command << "\n";
  os << "// " << model->description << "\n";
  os << "// parameters: " << countParameters(*model->module) << "\n";
  mlir::OpPrintingFlags flags;
  if (debugInfo)
    flags.enableDebugInfo();
  model->module->print(os, flags);
  os << "\n";
  output->keep();

  if (summary)
    printSummary(summarize(*model->module), errs());
  return 0;
}
