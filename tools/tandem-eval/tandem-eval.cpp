//===- tandem-eval.cpp - the reference evaluator's driver -----------------===//
//
// `tandem-eval model.mlir` evaluates a function of a model on the host with
// parameters initialized from the model's initializers (or loaded from a
// safetensors file) and inputs from a data file or a deterministic
// generator, and prints the results. With --program it runs one step of an
// mpmd.program instead, every rank on its own thread (docs/pipeline-eval.md).
// With --train it runs a training-step function (docs/training.md) or
// program for a number of steps on batches of a data file, printing the loss
// per step and the held-out loss.
//
//===----------------------------------------------------------------------===//

#include "tandem/Eval/Inputs.h"
#include "tandem/Eval/Interpreter.h"
#include "tandem/Eval/Parameters.h"
#include "tandem/Eval/Pipeline.h"
#include "tandem/Eval/Trainer.h"
#include "tandem/InitAll.h"
#include "tandem/Runtime/Safetensors.h"
#include "tandem/Runtime/TokenData.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <limits>

using namespace llvm;
using namespace tandem::eval;
namespace st = tandem::st;

static cl::OptionCategory evalCategory("tandem-eval options");

static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<model.mlir>"),
                                          cl::Required, cl::cat(evalCategory));
static cl::opt<std::string>
    functionName("function",
                 cl::desc("Function to evaluate (default forward), or the "
                          "training-step function with --train (default "
                          "train_step)"),
                 cl::cat(evalCategory));
static cl::opt<std::string> programName(
    "program",
    cl::desc("Run one step of this mpmd.program (every rank on its own "
             "thread) instead of a function; with --train, train with it"),
    cl::value_desc("name"), cl::cat(evalCategory));
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

static cl::opt<std::string> saveOutputsFile(
    "save-outputs",
    cl::desc("Save the results to a safetensors file: result.<i>, plus "
             "loss and grad.<parameter> for a function with nn.gradients"),
    cl::value_desc("file"), cl::cat(evalCategory));
static cl::opt<std::string> arraysFile(
    "arrays",
    cl::desc("With --train: arrays of every step input instead of --data (a "
             "safetensors file, input.<i> of shape [n*b, rest...]; step K "
             "reads batch K mod n in file order)"),
    cl::value_desc("file"), cl::cat(evalCategory));
static cl::opt<std::string> saveInputsFile(
    "save-inputs",
    cl::desc("Save the inputs to a safetensors file: input.<i>, or "
             "step.<k>.input.<i> with --train"),
    cl::value_desc("file"), cl::cat(evalCategory));

// Training.
static cl::opt<bool>
    trainMode("train",
              cl::desc("Run the training-step function on batches of --data"),
              cl::cat(evalCategory));
static cl::opt<int64_t> numSteps("steps", cl::desc("Training steps to run"),
                                 cl::init(-1), cl::cat(evalCategory));
static cl::opt<uint64_t>
    startStep("start-step",
              cl::desc("Index of the first training step (and batch), to "
                       "continue a run from saved parameters"),
              cl::init(0), cl::cat(evalCategory));
static cl::opt<std::string>
    evalFunctionName("eval-function",
                     cl::desc("Function whose loss is the held-out loss"),
                     cl::init("forward"), cl::cat(evalCategory));
static cl::opt<int64_t>
    evalEvery("eval-every",
              cl::desc("Evaluate the held-out loss every K steps (0: only "
                       "before the first and after the last step)"),
              cl::init(0), cl::cat(evalCategory));
static cl::opt<int64_t>
    evalBatches("eval-batches",
                cl::desc("Held-out batches the held-out loss averages"),
                cl::init(4), cl::cat(evalCategory));
static cl::opt<std::string>
    logJsonFile("log-json",
                cl::desc("Write the per-step and held-out losses as JSON"),
                cl::value_desc("file"), cl::cat(evalCategory));

static constexpr const char *overview = R"(Tandem reference evaluator

  tandem-eval model.mlir [--function forward | --program NAME] [--seed N]
              [--params FILE.safetensors] [--save-params FILE]
              [--data FILE --batch-index K [--split train|held-out]]
              [--f64] [--print-outputs]
              [--save-outputs FILE] [--save-inputs FILE]
  tandem-eval model.mlir --train --steps N (--data FILE | --arrays FILE)
              [--seed S]
              [--function train_step | --program NAME]
              [--eval-function forward]
              [--eval-every K] [--eval-batches B] [--held-out-fraction F]
              [--start-step K] [--params FILE] [--save-params FILE]
              [--save-inputs FILE] [--log-json FILE]

Evaluates a function of an nn model on the host. Parameters come from the
model's initializers (seeded) or --params. With --data, the function's two
integer B x T inputs are a batch of token windows and their next-token
targets, from the training part of the file (all but the last
--held-out-fraction, windows shuffled by the seed) or, with
--split=held-out, from its held-out tail in order; otherwise every input
comes from a deterministic generator keyed by the seed and the argument
index.

With --program, one step of the mpmd.program NAME runs instead, all ranks
in this process: its step inputs are full batches (each fragment's
mpmd.input type with dim 0 times the microbatch count), its outputs
(mpmd.output) are printed like a function's results, and its updates
(mpmd.update) are written back, so --save-params saves the parameters after
the step.

With --train, the training-step function (made by `tandem-opt --nn-autodiff
--nn-optimizer`; it returns the loss and the new value of every parameter
its nn.updates attribute names) or, with --program, the program (output 0
is the loss) runs on training batches start-step ... start-step+N-1, and
its updates replace the parameters. The held-out loss is
the mean loss of --eval-function over the first --eval-batches batches of
the held-out tail.

With --arrays FILE instead of --data, every step input i comes from the
tensor input.<i> of a safetensors file, of the input's type and shape
[n*b, rest...] for the input's shape [b, rest...] (a program's step shape):
step K reads batch K mod n, rows [(K mod n)*b, (K mod n + 1)*b), in file
order, whatever the seed. Only with --eval-every K > 0 is there a held-out
loss: the last max(1, round(F*n)) batches are held out (F:
--held-out-fraction), training cycles over the others, and the held-out
loss runs --eval-function on batches of its own input shape over them.
)";

static int fail(const Twine &message) {
  WithColor::error(errs(), "tandem-eval") << message << "\n";
  return 1;
}

/// Replaces the two integer inputs (of `owner`, "function 'f'" or "program
/// 'p'", in errors) with batch `batchIndex` of the data file; every token
/// must be below `vocab`.
static Error fillFromData(std::vector<Tensor> &inputs,
                          std::optional<int64_t> vocab, StringRef owner) {
  auto [kind, name] = owner.split(' ');
  SmallVector<unsigned> integerArgs;
  for (auto [index, input] : enumerate(inputs))
    if (isa<mlir::IntegerType>(input.elementType))
      integerArgs.push_back(index);
  if (integerArgs.size() != 2)
    return createStringError("--data needs a " + kind +
                             " with two integer inputs "
                             "(tokens, targets); " +
                             name + " has " + Twine(integerArgs.size()));
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

/// fillFromData for a function's inputs.
static Error fillFromData(mlir::func::FuncOp function,
                          std::vector<Tensor> &inputs) {
  std::optional<int64_t> vocab = vocabularyOf(function.getArgument(0));
  for (auto [index, input] : enumerate(inputs))
    if (isa<mlir::IntegerType>(input.elementType))
      if (auto bound = vocabularyOf(function.getArgument(index)))
        vocab = vocab ? std::min(*vocab, *bound) : *bound;
  return fillFromData(inputs, vocab,
                      "function '" + function.getSymName().str() + "'");
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

/// Adds `inputs` to `file` as <prefix>input.<i>.
static Error addInputs(st::File &file, ArrayRef<Tensor> inputs,
                       const std::string &prefix) {
  for (auto [i, input] : enumerate(inputs)) {
    auto encoded = toSafetensors(input);
    if (!encoded)
      return encoded.takeError();
    file.tensors[prefix + "input." + std::to_string(i)] = std::move(*encoded);
  }
  return Error::success();
}

static Error writeSafetensors(const st::File &file, const std::string &path) {
  std::string error;
  if (!st::writeFile(path, file, error))
    return createStringError(error);
  return Error::success();
}

static Error saveInputs(ArrayRef<Tensor> inputs, const std::string &prefix,
                        const std::string &path) {
  st::File file;
  if (Error error = addInputs(file, inputs, prefix))
    return error;
  return writeSafetensors(file, path);
}

/// Writes result.<i> for every result; with nn.gradients (of a function),
/// also grad.<name> for results 1..k and, when result 0 is rank-0, loss.
static Error saveOutputs(mlir::func::FuncOp function,
                         ArrayRef<Tensor> results) {
  st::File file;
  std::vector<st::Tensor> encoded;
  for (const Tensor &result : results) {
    auto tensor = toSafetensors(result);
    if (!tensor)
      return tensor.takeError();
    encoded.push_back(std::move(*tensor));
  }
  for (auto [i, tensor] : enumerate(encoded))
    file.tensors["result." + std::to_string(i)] = tensor;
  auto gradients =
      function ? function->getAttrOfType<mlir::ArrayAttr>("nn.gradients")
               : mlir::ArrayAttr();
  if (gradients) {
    if (gradients.size() + 1 != results.size())
      return createStringError(
          "function '" + function.getSymName() + "' has " +
          Twine(results.size()) + " result(s) but 'nn.gradients' names " +
          Twine(gradients.size()) + " parameter(s) (expected one fewer)");
    for (auto [i, entry] : enumerate(gradients)) {
      auto ref = dyn_cast<mlir::FlatSymbolRefAttr>(entry);
      if (!ref)
        return createStringError("'nn.gradients' entry #" + Twine(i) + " of '" +
                                 function.getSymName() +
                                 "' is not a symbol reference");
      file.tensors["grad." + ref.getValue().str()] = encoded[i + 1];
    }
    if (!results.empty() && results[0].rank() == 0)
      file.tensors["loss"] = encoded[0];
  }
  return writeSafetensors(file, saveOutputsFile);
}

/// Prints results (a function's, or a program's step outputs): a single
/// rank-0 float is the loss.
static void printResults(ArrayRef<Tensor> results) {
  for (auto [i, result] : enumerate(results)) {
    bool scalarLoss = results.size() == 1 && result.rank() == 0 &&
                      isa<mlir::FloatType>(result.elementType);
    if (scalarLoss)
      outs() << "loss: " << format("%.9g", result.data[0]) << "\n";
    else {
      outs() << "result #" << i << ": ";
      printTensor(outs(), result);
    }
  }
}

static std::string fixed(double value) {
  std::string text;
  raw_string_ostream(text) << format("%.6f", value);
  return text;
}

/// The --train mode.
static int train(mlir::ModuleOp module, ParameterMap parameters) {
  if (!dataFile.empty() && !arraysFile.empty())
    return fail("--data and --arrays exclude each other: train on token data "
                "or on arrays of every step input");
  if (dataFile.empty() && arraysFile.empty())
    return fail("--train needs token data: --data FILE (or arrays of every "
                "step input: --arrays FILE)");
  if (numSteps.getNumOccurrences() == 0)
    return fail("--train needs the number of steps: --steps N");
  if (numSteps < 0)
    return fail("--steps must be at least 0, found " + Twine(numSteps));
  if (evalEvery < 0)
    return fail("--eval-every must be at least 0, found " + Twine(evalEvery));
  if (evalBatches < 1)
    return fail("--eval-batches must be at least 1, found " +
                Twine(evalBatches));
  if (batchIndex.getNumOccurrences() || split.getNumOccurrences())
    return fail("--batch-index and --split do not apply to --train (use "
                "--start-step)");
  if (!saveOutputsFile.empty())
    return fail("--save-outputs does not apply to --train (use "
                "--save-params and --log-json)");
  std::string error;
  std::optional<std::vector<int32_t>> tokens;
  std::optional<st::File> arrays;
  if (!arraysFile.empty())
    arrays = st::readFile(arraysFile, error);
  else
    tokens = tandem::data::readTokens(dataFile, error);
  if (!tokens && !arrays)
    return fail(error);
  // Arrays hold batches out only for a held-out loss (--eval-every).
  bool measuresHeldOut = tokens || evalEvery > 0;

  EvalOptions options;
  options.f64 = f64Mode;
  Interpreter interpreter(module, options);
  interpreter.setParameters(std::move(parameters));
  TrainerOptions trainerOptions;
  trainerOptions.stepFunction = functionName.getNumOccurrences()
                                    ? std::string(functionName)
                                    : std::string("train_step");
  trainerOptions.stepProgram = programName;
  trainerOptions.evalFunction = evalFunctionName;
  trainerOptions.heldOutFraction = heldOutFraction;
  trainerOptions.seed = seed;
  trainerOptions.dataName = arrays ? arraysFile : dataFile;
  trainerOptions.arraysHoldOut = measuresHeldOut;
  auto trainer =
      arrays ? Trainer::create(interpreter, std::move(*arrays), trainerOptions)
             : Trainer::create(interpreter, *tokens, trainerOptions);
  if (!trainer)
    return fail(inputFilename + ": " + toString(trainer.takeError()));

  json::Array stepLog, heldOutLog;
  std::vector<std::pair<uint64_t, double>> heldOutLosses;
  auto evaluateHeldOut = [&](uint64_t step) -> Error {
    auto loss = (*trainer)->heldOutLoss(evalBatches);
    if (!loss)
      return loss.takeError();
    outs() << "held-out loss at step " << step << ": " << fixed(*loss) << "\n";
    heldOutLosses.push_back({step, *loss});
    heldOutLog.push_back(
        json::Object{{"step", int64_t(step)}, {"loss", *loss}});
    return Error::success();
  };

  st::File inputsFile;
  if (measuresHeldOut)
    if (Error error = evaluateHeldOut(startStep))
      return fail(toString(std::move(error)));
  uint64_t end = startStep + numSteps;
  for (uint64_t k = startStep; k < end; ++k) {
    auto step = (*trainer)->step(k);
    if (!step)
      return fail("step " + Twine(k) + ": " + toString(step.takeError()));
    outs() << "step " << k << ": loss " << fixed(step->loss) << "\n";
    stepLog.push_back(json::Object{{"step", int64_t(k)}, {"loss", step->loss}});
    if (!saveInputsFile.empty())
      if (Error error = addInputs(inputsFile, step->inputs,
                                  "step." + std::to_string(k) + "."))
        return fail(toString(std::move(error)));
    uint64_t done = k + 1;
    bool periodic = evalEvery > 0 && (done - startStep) % evalEvery == 0;
    if (measuresHeldOut && (periodic || done == end))
      if (Error error = evaluateHeldOut(done))
        return fail(toString(std::move(error)));
  }

  json::Object log{{"steps", std::move(stepLog)},
                   {"held_out", std::move(heldOutLog)}};
  if (!heldOutLosses.empty()) {
    auto [firstStep, first] = heldOutLosses.front();
    auto [lastStep, last] = heldOutLosses.back();
    double drop = first != 0.0 ? (first - last) / first : 0.0;
    outs() << "held-out loss " << fixed(first) << " at step " << firstStep
           << " -> " << fixed(last) << " at step " << lastStep
           << ": relative drop " << format("%.2f", 100.0 * drop) << "%\n";
    log["first_held_out_loss"] = first;
    log["last_held_out_loss"] = last;
    log["relative_drop"] = drop;
  }

  if (!saveParamsFile.empty())
    if (Error error =
            saveParameters(interpreter.getParameters(), saveParamsFile))
      return fail(toString(std::move(error)));
  if (!saveInputsFile.empty())
    if (Error error = writeSafetensors(inputsFile, saveInputsFile))
      return fail(toString(std::move(error)));
  if (!logJsonFile.empty()) {
    std::error_code ec;
    raw_fd_ostream os(logJsonFile, ec);
    if (ec)
      return fail(logJsonFile + ": " + ec.message());
    os << formatv("{0:2}", json::Value(std::move(log))) << "\n";
  }
  return 0;
}

/// The --program mode: one step of the program, all ranks in-process.
static int runProgram(mlir::ModuleOp module, ParameterMap parameters) {
  auto executor = PipelineExecutor::create(module, programName);
  // Its errors carry the program's location.
  if (!executor)
    return fail(toString(executor.takeError()));
  ArrayRef<mlir::RankedTensorType> types = (*executor)->getInputTypes();
  ArrayRef<std::optional<int64_t>> vocabularies =
      (*executor)->getInputVocabularies();
  // The same generator as for a function, so a function taking the full
  // batches as its arguments in the same order sees the same values.
  std::vector<Tensor> inputs;
  for (auto [index, type] : enumerate(types))
    inputs.push_back(generateInput(type, index, seed, vocabularies[index]));
  if (!dataFile.empty()) {
    std::optional<int64_t> vocab;
    for (auto [index, type] : enumerate(types))
      if (isa<mlir::IntegerType>(type.getElementType()) && vocabularies[index])
        vocab = vocab ? std::min(*vocab, *vocabularies[index])
                      : *vocabularies[index];
    if (Error error =
            fillFromData(inputs, vocab, "program '" + programName + "'"))
      return fail(toString(std::move(error)));
  }

  EvalOptions options;
  options.f64 = f64Mode;
  Interpreter interpreter(module, options);
  interpreter.setParameters(std::move(parameters));
  auto step = (*executor)->run(interpreter, inputs);
  if (!step)
    return fail(toString(step.takeError()));

  if (!saveInputsFile.empty())
    if (Error error = saveInputs(inputs, "", saveInputsFile))
      return fail(toString(std::move(error)));
  if (!saveOutputsFile.empty())
    if (Error error = saveOutputs(nullptr, step->outputs))
      return fail(toString(std::move(error)));
  printResults(step->outputs);
  for (auto &[name, value] : step->updates) {
    outs() << "update @" << name << ": ";
    printTensor(outs(), value);
    interpreter.getParameters()[name] = std::move(value);
  }
  if (!saveParamsFile.empty())
    if (Error error =
            saveParameters(interpreter.getParameters(), saveParamsFile))
      return fail(toString(std::move(error)));
  return 0;
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

  auto parameters = paramsFile.empty() ? initializeParameters(*module, seed)
                                       : loadParameters(*module, paramsFile);
  if (!parameters)
    return fail(toString(parameters.takeError()));
  if (!programName.empty() && functionName.getNumOccurrences())
    return fail("--function and --program are exclusive: a step runs either "
                "a function or a program");
  if (trainMode)
    return train(*module, std::move(*parameters));
  for (const auto *option : std::initializer_list<const cl::Option *>{
           &numSteps, &startStep, &evalFunctionName, &evalEvery, &evalBatches,
           &logJsonFile, &arraysFile})
    if (option->getNumOccurrences())
      return fail("--" + option->ArgStr + " applies only to --train");

  if (!programName.empty())
    return runProgram(*module, std::move(*parameters));

  std::string name =
      functionName.getNumOccurrences() ? functionName : std::string("forward");
  auto function = module->lookupSymbol<mlir::func::FuncOp>(name);
  if (!function)
    return fail("no function '" + name + "' in " + inputFilename);

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

  if (!saveInputsFile.empty())
    if (Error error = saveInputs(*inputs, "", saveInputsFile))
      return fail(toString(std::move(error)));
  if (!saveOutputsFile.empty())
    if (Error error = saveOutputs(function, *results))
      return fail(toString(std::move(error)));

  printResults(*results);
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
