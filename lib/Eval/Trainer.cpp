//===- Trainer.cpp - the reference training loop --------------------------===//

#include "tandem/Eval/Trainer.h"
#include "tandem/Eval/Inputs.h"
#include "tandem/Eval/Parameters.h"

#include "tandem/Dialect/NN/IR/NNOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>

using namespace tandem::eval;
using namespace mlir;
namespace nn = tandem::nn;

static std::string typeText(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

llvm::Expected<std::vector<std::string>>
tandem::eval::verifyTrainStep(func::FuncOp function) {
  std::string where = "function '" + function.getSymName().str() + "'";
  ArrayRef<Type> results = function.getFunctionType().getResults();
  auto loss = results.empty() ? RankedTensorType()
                              : dyn_cast<RankedTensorType>(results[0]);
  if (!loss || loss.getRank() != 0 || !isa<FloatType>(loss.getElementType()))
    return llvm::createStringError(
        where + ": result #0 must be the loss, a rank-0 float tensor");

  auto updatesAttr = function->getAttrOfType<ArrayAttr>("nn.updates");
  if (!updatesAttr)
    return llvm::createStringError(
        where + " has no 'nn.updates' attribute naming the parameter each "
                "result after the loss replaces (see docs/training.md)");
  size_t numNew = results.size() - 1;
  if (updatesAttr.size() != numNew)
    return llvm::createStringError(
        where + " returns " + llvm::Twine(numNew) +
        " result(s) after the loss but 'nn.updates' names " +
        llvm::Twine(updatesAttr.size()) + " parameter(s)");

  auto module = function->getParentOfType<ModuleOp>();
  std::vector<std::string> names;
  llvm::StringSet<> seen;
  for (auto [i, entry] : llvm::enumerate(updatesAttr)) {
    auto ref = dyn_cast<FlatSymbolRefAttr>(entry);
    if (!ref)
      return llvm::createStringError(where + ": 'nn.updates' entry #" +
                                     llvm::Twine(i) +
                                     " is not a symbol reference");
    StringRef name = ref.getValue();
    auto parameter =
        module ? module.lookupSymbol<nn::ParameterOp>(name) : nn::ParameterOp();
    if (!parameter)
      return llvm::createStringError(
          where + ": 'nn.updates' entry #" + llvm::Twine(i) + " names '@" +
          name + "', which is not an nn.parameter of the module");
    if (!seen.insert(name).second)
      return llvm::createStringError(where + ": 'nn.updates' names '@" + name +
                                     "' more than once");
    Type resultType = results[i + 1];
    if (resultType != parameter.getTensorType())
      return llvm::createStringError(
          where + ": result #" + llvm::Twine(i + 1) + " is " +
          typeText(resultType) + ", but the parameter '@" + name +
          "' it updates is " + typeText(parameter.getTensorType()));
    names.push_back(name.str());
  }
  return names;
}

llvm::Expected<std::pair<unsigned, unsigned>>
tandem::eval::findTokenInputs(llvm::ArrayRef<RankedTensorType> types,
                              const std::string &owner) {
  SmallVector<unsigned> integerArgs;
  for (auto [index, type] : llvm::enumerate(types))
    if (type && isa<IntegerType>(type.getElementType()))
      integerArgs.push_back(index);
  // `owner` is "function 'f'" or "program 'p'".
  auto [kind, name] = StringRef(owner).split(' ');
  if (integerArgs.size() != 2)
    return llvm::createStringError(
        "token data needs a " + kind +
        " with two integer inputs (tokens, targets); " + name + " has " +
        llvm::Twine(integerArgs.size()));
  RankedTensorType tokens = types[integerArgs[0]];
  RankedTensorType targets = types[integerArgs[1]];
  if (tokens.getRank() != 2 || tokens.getShape() != targets.getShape())
    return llvm::createStringError(
        "token data needs tokens and targets of the same B x T shape; " + name +
        " takes " + typeText(tokens) + " and " + typeText(targets));
  return std::make_pair(integerArgs[0], integerArgs[1]);
}

static std::vector<RankedTensorType> argumentTypes(func::FuncOp function) {
  std::vector<RankedTensorType> types;
  for (Type type : function.getFunctionType().getInputs())
    types.push_back(dyn_cast<RankedTensorType>(type));
  return types;
}

llvm::Expected<std::pair<unsigned, unsigned>>
tandem::eval::findTokenInputs(func::FuncOp function) {
  return findTokenInputs(argumentTypes(function),
                         "function '" + function.getSymName().str() + "'");
}

/// Batches of `tokens` over `base` inputs whose `args` are the tokens and
/// targets.
static llvm::Expected<BatchInputs>
makeBatchInputs(std::vector<Tensor> base, std::pair<unsigned, unsigned> args,
                std::vector<int32_t> tokens, uint64_t seed, bool shuffle,
                llvm::StringRef what) {
  const Tensor &tokenInput = base[args.first];
  std::string error;
  auto sampler = tandem::data::BatchSampler::create(
      std::move(tokens), tokenInput.shape[0], tokenInput.shape[1], seed,
      shuffle, error);
  if (!sampler)
    return llvm::createStringError(what + ": " + error);
  return BatchInputs::fromParts(std::move(base), args.first, args.second,
                                std::move(*sampler));
}

llvm::Expected<BatchInputs> BatchInputs::create(func::FuncOp function,
                                                std::vector<int32_t> tokens,
                                                uint64_t seed, bool shuffle,
                                                llvm::StringRef what) {
  auto args = findTokenInputs(function);
  if (!args)
    return args.takeError();
  auto base = generateInputs(function, seed);
  if (!base)
    return base.takeError();
  return makeBatchInputs(std::move(*base), *args, std::move(tokens), seed,
                         shuffle, what);
}

llvm::Expected<BatchInputs>
BatchInputs::create(llvm::ArrayRef<RankedTensorType> types,
                    llvm::ArrayRef<std::optional<int64_t>> vocabularies,
                    const std::string &owner, std::vector<int32_t> tokens,
                    uint64_t seed, bool shuffle, llvm::StringRef what) {
  auto args = findTokenInputs(types, owner);
  if (!args)
    return args.takeError();
  std::vector<Tensor> base;
  for (auto [index, type] : llvm::enumerate(types))
    base.push_back(generateInput(type, index, seed, vocabularies[index]));
  return makeBatchInputs(std::move(base), *args, std::move(tokens), seed,
                         shuffle, what);
}

/// What an arrays file must hold for inputs of `types` (input i:
/// `input.<i>`, batches of the type's shape); `owner` names them in errors.
static llvm::Expected<std::vector<tandem::data::ArrayInput>>
arrayInputsOf(llvm::ArrayRef<RankedTensorType> types,
              const std::string &owner) {
  std::vector<tandem::data::ArrayInput> inputs;
  for (auto [index, type] : llvm::enumerate(types)) {
    if (!type)
      return llvm::createStringError(owner + ": input " + llvm::Twine(index) +
                                     " is not a ranked tensor");
    auto dtype = dtypeOf(type.getElementType());
    if (!dtype)
      return dtype.takeError();
    inputs.push_back(
        {static_cast<int64_t>(index), *dtype,
         std::vector<int64_t>(type.getShape().begin(), type.getShape().end())});
  }
  return inputs;
}

llvm::Expected<BatchInputs>
BatchInputs::fromArrays(llvm::ArrayRef<RankedTensorType> types,
                        const std::string &owner,
                        const tandem::data::ArrayData &arrays, int64_t first,
                        int64_t count, const std::string &part) {
  auto inputs = arrayInputsOf(types, owner);
  if (!inputs)
    return inputs.takeError();
  std::vector<Tensor> base;
  std::vector<st::DType> dtypes;
  for (auto [type, input] : llvm::zip(types, *inputs)) {
    base.emplace_back(type);
    dtypes.push_back(input.dtype);
  }
  std::string error;
  std::optional<tandem::data::ArrayBatches> batches =
      tandem::data::ArrayBatches::create(arrays, *inputs, first, count, part,
                                         error);
  if (!batches)
    return llvm::createStringError(owner + ": " + error);
  return BatchInputs(std::move(base), std::move(dtypes), std::move(*batches));
}

std::vector<Tensor> BatchInputs::get(uint64_t index) {
  std::vector<Tensor> inputs = base;
  if (arrays) {
    // The batch's bytes decoded as the evaluator's values.
    for (auto [i, input] : llvm::enumerate(inputs)) {
      st::Tensor raw;
      raw.dtype = dtypes[i];
      raw.shape.assign(input.shape.begin(), input.shape.end());
      const uint8_t *bytes = arrays->batch(index, static_cast<int64_t>(i));
      raw.data.assign(bytes, bytes + arrays->batchBytes(i));
      input = fromSafetensors(raw, input.elementType);
    }
    return inputs;
  }
  Tensor &tokens = inputs[tokensArg], &targets = inputs[targetsArg];
  std::vector<int32_t> in(tokens.data.size()), out(targets.data.size());
  sampler->getBatch(index, in.data(), out.data());
  std::copy(in.begin(), in.end(), tokens.data.begin());
  std::copy(out.begin(), out.end(), targets.data.begin());
  return inputs;
}

/// The smallest vocabulary any token input of `function` indexes.
static std::optional<int64_t>
vocabularyOfInputs(func::FuncOp function, std::pair<unsigned, unsigned> args) {
  std::optional<int64_t> vocab;
  for (unsigned index : {args.first, args.second})
    if (auto bound = vocabularyOf(function.getArgument(index)))
      vocab = vocab ? std::min(*vocab, *bound) : *bound;
  return vocab;
}

/// Checks that result 0 of `what` is a loss: a rank-0 float tensor.
static llvm::Error checkLoss(llvm::ArrayRef<Type> results,
                             const std::string &what) {
  auto loss = results.empty() ? RankedTensorType()
                              : dyn_cast<RankedTensorType>(results[0]);
  if (!loss || loss.getRank() != 0 || !isa<FloatType>(loss.getElementType()))
    return llvm::createStringError(what +
                                   " must be the loss, a rank-0 float tensor");
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<Trainer>>
Trainer::create(Interpreter &interpreter, const std::vector<int32_t> &tokens,
                const TrainerOptions &options) {
  return create(interpreter, &tokens, std::nullopt, options);
}

llvm::Expected<std::unique_ptr<Trainer>>
Trainer::create(Interpreter &interpreter, st::File arrays,
                const TrainerOptions &options) {
  return create(interpreter, nullptr, std::move(arrays), options);
}

llvm::Expected<std::unique_ptr<Trainer>>
Trainer::create(Interpreter &interpreter, const std::vector<int32_t> *tokens,
                std::optional<st::File> arrays, const TrainerOptions &options) {
  ModuleOp module = interpreter.getModule();
  bool program = !options.stepProgram.empty();
  func::FuncOp stepFunction;
  std::unique_ptr<PipelineExecutor> stepProgram;
  std::vector<std::string> updates;
  std::string stepOwner;
  if (program) {
    auto executor = PipelineExecutor::create(module, options.stepProgram);
    if (!executor)
      return executor.takeError();
    stepProgram = std::move(*executor);
    stepOwner = "program '" + options.stepProgram + "'";
    SmallVector<Type> outputs(stepProgram->getOutputTypes().begin(),
                              stepProgram->getOutputTypes().end());
    if (llvm::Error error = checkLoss(outputs, stepOwner + ": step output 0"))
      return std::move(error);
    updates.assign(stepProgram->getUpdatedParameters().begin(),
                   stepProgram->getUpdatedParameters().end());
    if (updates.empty())
      return llvm::createStringError(
          stepOwner + " updates no parameter (no result carries "
                      "'mpmd.update'), so training it would change nothing");
  } else {
    stepFunction = module.lookupSymbol<func::FuncOp>(options.stepFunction);
    if (!stepFunction)
      return llvm::createStringError(
          "no training-step function '" + options.stepFunction +
          "' in the module; generate one with `tandem-opt --nn-autodiff "
          "--nn-optimizer` first");
    stepOwner = "function '" + options.stepFunction + "'";
  }
  auto evalFunction = module.lookupSymbol<func::FuncOp>(options.evalFunction);
  // Arrays without a held-out loss need no evaluation function.
  bool needsEval = tokens || options.arraysHoldOut;
  if (!evalFunction && needsEval)
    return llvm::createStringError("no evaluation function '" +
                                   options.evalFunction + "' in the module");
  if (!program) {
    auto verified = verifyTrainStep(stepFunction);
    if (!verified)
      return verified.takeError();
    updates = std::move(*verified);
  }
  if (!needsEval)
    evalFunction = nullptr;
  if (evalFunction)
    if (llvm::Error error =
            checkLoss(evalFunction.getFunctionType().getResults(),
                      "function '" + options.evalFunction + "': result #0"))
      return std::move(error);

  if (arrays) {
    // Every step input from the file, in file order.
    std::vector<RankedTensorType> stepTypes =
        program ? std::vector<RankedTensorType>(
                      stepProgram->getInputTypes().begin(),
                      stepProgram->getInputTypes().end())
                : argumentTypes(stepFunction);
    auto inputs = arrayInputsOf(stepTypes, stepOwner);
    if (!inputs)
      return inputs.takeError();
    std::string error;
    std::optional<tandem::data::ArrayData> data =
        tandem::data::ArrayData::create(std::move(*arrays), options.dataName,
                                        *inputs, error);
    if (!data)
      return llvm::createStringError(error);
    std::optional<tandem::data::ArraySplit> split = tandem::data::splitArrays(
        *data, options.arraysHoldOut, options.heldOutFraction, error);
    if (!split)
      return llvm::createStringError(error);
    auto train =
        BatchInputs::fromArrays(stepTypes, stepOwner, *data, 0,
                                split->trainBatches, "training batches");
    if (!train)
      return train.takeError();
    std::optional<BatchInputs> heldOut;
    if (split->heldOutBatches > 0) {
      auto batches = BatchInputs::fromArrays(
          argumentTypes(evalFunction),
          "function '" + options.evalFunction + "'", *data, split->trainBatches,
          split->heldOutBatches, "held-out batches");
      if (!batches)
        return batches.takeError();
      heldOut = std::move(*batches);
    }
    return std::unique_ptr<Trainer>(new Trainer(
        interpreter, stepFunction, std::move(stepProgram), evalFunction,
        std::move(updates), std::move(*train), std::move(heldOut)));
  }

  // Every token must be within the vocabulary of the step and the
  // evaluation function.
  std::optional<int64_t> vocab;
  auto consider = [&](std::optional<int64_t> bound) {
    if (bound)
      vocab = vocab ? std::min(*vocab, *bound) : *bound;
  };
  if (program) {
    auto args = findTokenInputs(stepProgram->getInputTypes(), stepOwner);
    if (!args)
      return args.takeError();
    consider(stepProgram->getInputVocabularies()[args->first]);
    consider(stepProgram->getInputVocabularies()[args->second]);
  }
  for (func::FuncOp function : {stepFunction, evalFunction}) {
    if (!function)
      continue;
    auto args = findTokenInputs(function);
    if (!args)
      return args.takeError();
    consider(vocabularyOfInputs(function, *args));
  }
  std::string error;
  if (vocab && !tandem::data::checkVocabulary(*tokens, *vocab, error))
    return llvm::createStringError(options.dataName + ": " + error);
  if (!(options.heldOutFraction > 0.0 && options.heldOutFraction < 1.0))
    return llvm::createStringError(
        "the held-out fraction must be in (0, 1) for training, found " +
        std::to_string(options.heldOutFraction));

  tandem::data::Split parts =
      tandem::data::splitHeldOut(*tokens, options.heldOutFraction);
  std::string trainName = options.dataName + " (training part)";
  auto train =
      program ? BatchInputs::create(stepProgram->getInputTypes(),
                                    stepProgram->getInputVocabularies(),
                                    stepOwner, std::move(parts.train),
                                    options.seed, /*shuffle=*/true, trainName)
              : BatchInputs::create(stepFunction, std::move(parts.train),
                                    options.seed, /*shuffle=*/true, trainName);
  if (!train)
    return train.takeError();
  auto heldOut = BatchInputs::create(
      evalFunction, std::move(parts.heldOut), options.seed,
      /*shuffle=*/false, options.dataName + " (held-out part)");
  if (!heldOut)
    return heldOut.takeError();
  return std::unique_ptr<Trainer>(new Trainer(
      interpreter, stepFunction, std::move(stepProgram), evalFunction,
      std::move(updates), std::move(*train), std::move(*heldOut)));
}

llvm::Expected<StepResult> Trainer::step(uint64_t index) {
  StepResult step;
  step.inputs = train.get(index);
  ParameterMap &parameters = interpreter.getParameters();
  if (stepProgram) {
    auto result = stepProgram->run(interpreter, step.inputs);
    if (!result)
      return result.takeError();
    step.loss = result->outputs.at(0).data.at(0);
    // run() checked that every updated parameter has a value of the
    // update's type; nothing changed before it succeeded.
    for (auto &[name, value] : result->updates)
      parameters[name] = std::move(value);
    return step;
  }
  auto results = interpreter.call(stepFunction, step.inputs);
  if (!results)
    return results.takeError();
  if (results->size() != updates.size() + 1)
    return llvm::createStringError(
        "function '" + stepFunction.getSymName() + "' returned " +
        llvm::Twine(results->size()) + " result(s), expected " +
        llvm::Twine(updates.size() + 1));
  for (const std::string &name : updates)
    if (!parameters.count(name))
      return llvm::createStringError("parameter '" + name + "' updated by '" +
                                     stepFunction.getSymName() +
                                     "' has no value");
  step.loss = (*results)[0].data.at(0);
  for (auto [name, value] : llvm::zip(updates, llvm::drop_begin(*results)))
    parameters[name] = std::move(value);
  return step;
}

llvm::Expected<double> Trainer::heldOutLoss(unsigned numBatches) {
  if (numBatches == 0)
    return llvm::createStringError(
        "the held-out loss needs at least one batch");
  if (!heldOut)
    return llvm::createStringError(
        "no held-out batches: arrays hold some out only for a held-out loss");
  double sum = 0.0;
  for (unsigned index = 0; index < numBatches; ++index) {
    auto results = interpreter.call(evalFunction, heldOut->get(index));
    if (!results)
      return results.takeError();
    sum += (*results)[0].data.at(0);
  }
  return sum / numBatches;
}
