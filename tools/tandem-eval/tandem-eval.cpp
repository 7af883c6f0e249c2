//===- tandem-eval.cpp - the reference evaluator's driver -----------------===//
//
// `tandem-eval model.mlir` evaluates a function of a model on the host with
// parameters initialized from the model's initializers (or loaded from a
// safetensors file) and inputs from a data file or a deterministic
// generator, and prints the results.
//
//===----------------------------------------------------------------------===//

#include "tandem/Eval/Inputs.h"
#include "tandem/Eval/Interpreter.h"
#include "tandem/Eval/Parameters.h"
#include "tandem/InitAll.h"
#include "tandem/Runtime/TokenData.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <limits>

using namespace llvm;
using namespace tandem::eval;

static cl::OptionCategory evalCategory("tandem-eval options");

static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<model.mlir>"),
                                          cl::Required, cl::cat(evalCategory));
static cl::opt<std::string> functionName("function",
                                         cl::desc("Function to evaluate"),
                                         cl::init("forward"),
                                         cl::cat(evalCategory));
static cl::opt<uint64_t> seed("seed",
                              cl::desc("Seed of parameter initialization, "
                                       "generated inputs and data shuffling"),
                              cl::init(0), cl::cat(evalCategory));
static cl::opt<std::string>
    paramsFile("params", cl::desc("Load parameters from a safetensors file"),
               cl::value_desc("file"), cl::cat(evalCategory));
static cl::opt<std::string>
    saveParamsFile("save-params",
                   cl::desc("Save the parameters to a safetensors file"),
                   cl::value_desc("file"), cl::cat(evalCategory));
static cl::opt<std::string>
    dataFile("data",
             cl::desc("Token data (text or binary token file) for the "
                      "integer inputs (tokens, targets)"),
             cl::value_desc("file"), cl::cat(evalCategory));
static cl::opt<uint64_t> batchIndex("batch-index",
                                    cl::desc("Which batch of --data to use"),
                                    cl::init(0), cl::cat(evalCategory));
enum class DataSplit { Train, HeldOut };
static cl::opt<DataSplit> split(
    "split", cl::desc("Which part of --data batches come from"),
    cl::values(clEnumValN(DataSplit::Train, "train",
                          "the training part, windows shuffled by the seed"),
               clEnumValN(DataSplit::HeldOut, "held-out",
                          "the held-out tail, windows in order")),
    cl::init(DataSplit::Train), cl::cat(evalCategory));
static cl::opt<double> heldOutFraction(
    "held-out-fraction",
    cl::desc("Fraction of --data, at its end, held out from training"),
    cl::init(0.1), cl::cat(evalCategory));
static cl::opt<bool> f64Mode("f64", cl::desc("Evaluate f32 ops in f64"),
                             cl::cat(evalCategory));
static cl::opt<bool> printOutputs("print-outputs",
                                  cl::desc("Print result tensors in full"),
                                  cl::cat(evalCategory));

static constexpr const char *overview = R"(Tandem reference evaluator

  tandem-eval model.mlir [--function forward] [--seed N]
              [--params FILE.safetensors] [--save-params FILE]
              [--data FILE --batch-index K [--split train|held-out]]
              [--f64] [--print-outputs]

Evaluates a function of an nn model on the host. Parameters come from the
model's initializers (seeded) or --params. With --data, the function's two
integer B x T inputs are a batch of token windows and their next-token
targets, from the training part of the file (all but the last
--held-out-fraction, windows shuffled by the seed) or, with
--split=held-out, from its held-out tail in order; otherwise every input
comes from a deterministic generator keyed by the seed and the argument
index.
)";

static int fail(const Twine &message) {
  WithColor::error(errs(), "tandem-eval") << message << "\n";
  return 1;
}

/// Replaces the integer inputs with batch `batchIndex` of the data file.
static Error fillFromData(mlir::func::FuncOp function,
                          std::vector<Tensor> &inputs) {
  SmallVector<unsigned> integerArgs;
  for (mlir::BlockArgument argument : function.getArguments())
    if (isa<mlir::IntegerType>(inputs[argument.getArgNumber()].elementType))
      integerArgs.push_back(argument.getArgNumber());
  if (integerArgs.size() != 2)
    return createStringError("--data needs a function with two integer inputs "
                             "(tokens, targets); '" +
                             function.getSymName() + "' has " +
                             Twine(integerArgs.size()));
  Tensor &tokens = inputs[integerArgs[0]], &targets = inputs[integerArgs[1]];
  if (tokens.rank() != 2 || tokens.shape != targets.shape)
    return createStringError("--data needs tokens and targets of the same "
                             "B x T shape, got " +
                             tokens.typeString() + " and " +
                             targets.typeString());
  std::string error;
  auto stream = tandem::data::readTokens(dataFile, error);
  if (!stream)
    return createStringError(error);
  std::optional<int64_t> vocab = vocabularyOf(function.getArgument(0));
  for (unsigned index : integerArgs)
    if (auto bound = vocabularyOf(function.getArgument(index)))
      vocab = vocab ? std::min(*vocab, *bound) : *bound;
  if (vocab && !tandem::data::checkVocabulary(*stream, *vocab, error))
    return createStringError(dataFile + ": " + error);
  if (!(heldOutFraction >= 0.0 && heldOutFraction < 1.0)) {
    std::string found;
    raw_string_ostream(found) << format("%g", double(heldOutFraction));
    return createStringError("--held-out-fraction must be in [0, 1), found " +
                             found);
  }
  tandem::data::Split parts =
      tandem::data::splitHeldOut(*stream, heldOutFraction);
  bool heldOut = split == DataSplit::HeldOut;
  int64_t batch = tokens.shape[0], seq = tokens.shape[1];
  auto sampler = tandem::data::BatchSampler::create(
      std::move(heldOut ? parts.heldOut : parts.train), batch, seq, seed,
      /*shuffle=*/!heldOut, error);
  if (!sampler)
    return createStringError(dataFile + " (" +
                             (heldOut ? "held-out" : "training") +
                             " part): " + error);
  std::vector<int32_t> in(batch * seq), out(batch * seq);
  sampler->getBatch(batchIndex, in.data(), out.data());
  std::copy(in.begin(), in.end(), tokens.data.begin());
  std::copy(out.begin(), out.end(), targets.data.begin());
  return Error::success();
}

static void printTensor(raw_ostream &os, const Tensor &tensor) {
  os << tensor.typeString();
  if (printOutputs) {
    os << " [";
    for (auto [i, x] : enumerate(tensor.data))
      os << (i ? ", " : "") << format("%.9g", x);
    os << "]\n";
    return;
  }
  // A summary: enough to compare runs without drowning the terminal.
  double sum = 0.0, min = std::numeric_limits<double>::infinity();
  double max = -min;
  for (double x : tensor.data) {
    sum += x;
    min = std::min(min, x);
    max = std::max(max, x);
  }
  os << " mean "
     << format("%.9g", sum / std::max<size_t>(tensor.data.size(), 1)) << " min "
     << format("%.9g", min) << " max " << format("%.9g", max) << "\n";
}

static int evaluate(const mlir::DialectRegistry &registry) {
  std::string errorMessage;
  auto input = mlir::openInputFile(inputFilename, &errorMessage);
  if (!input)
    return fail(errorMessage);
  SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), SMLoc());
  mlir::MLIRContext context(registry);
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  auto function = module->lookupSymbol<mlir::func::FuncOp>(functionName);
  if (!function)
    return fail("no function '" + functionName + "' in " + inputFilename);

  auto parameters = paramsFile.empty() ? initializeParameters(*module, seed)
                                       : loadParameters(*module, paramsFile);
  if (!parameters)
    return fail(toString(parameters.takeError()));

  auto inputs = generateInputs(function, seed);
  if (!inputs)
    return fail(toString(inputs.takeError()));
  if (!dataFile.empty())
    if (Error error = fillFromData(function, *inputs))
      return fail(toString(std::move(error)));

  EvalOptions options;
  options.f64 = f64Mode;
  Interpreter interpreter(*module, options);
  interpreter.setParameters(std::move(*parameters));
  auto results = interpreter.call(function, *inputs);
  if (!results)
    return fail(toString(results.takeError()));

  for (auto [i, result] : enumerate(*results)) {
    bool scalarLoss = results->size() == 1 && result.rank() == 0 &&
                      isa<mlir::FloatType>(result.elementType);
    if (scalarLoss)
      outs() << "loss: " << format("%.9g", result.data[0]) << "\n";
    else {
      outs() << "result #" << i << ": ";
      printTensor(outs(), result);
    }
  }
  if (!saveParamsFile.empty())
    if (Error error =
            saveParameters(interpreter.getParameters(), saveParamsFile))
      return fail(toString(std::move(error)));
  return 0;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(evalCategory);
  cl::ParseCommandLineOptions(argc, argv, overview);
  mlir::DialectRegistry registry;
  tandem::registerAllDialects(registry);
  return evaluate(registry);
}
