//===- Interpreter.cpp - the reference evaluator --------------------------===//

#include "tandem/Eval/Interpreter.h"
#include "tandem/Eval/Rounding.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"

using namespace tandem::eval;
using namespace mlir;

Interpreter::Interpreter(ModuleOp module, EvalOptions options,
                         const KernelRegistry &registry)
    : module(module), options(options), registry(registry) {}

llvm::Expected<std::vector<Tensor>>
Interpreter::run(llvm::StringRef name, llvm::ArrayRef<Tensor> inputs) {
  auto function = module.lookupSymbol<func::FuncOp>(name);
  if (!function)
    return llvm::createStringError("no function '" + name + "' in the module");
  return call(function, inputs);
}

/// Checks `inputs` against `function`'s signature.
static llvm::Error checkInputs(func::FuncOp function,
                               llvm::ArrayRef<Tensor> inputs) {
  auto argTypes = function.getFunctionType().getInputs();
  std::string where = formatLocation(function.getLoc()) + ": function '" +
                      function.getSymName().str() + "'";
  if (argTypes.size() != inputs.size())
    return llvm::createStringError(
        where + " takes " + llvm::Twine(argTypes.size()) + " input(s), got " +
        llvm::Twine(inputs.size()));
  for (auto [index, type, input] : llvm::enumerate(argTypes, inputs)) {
    auto tensorType = llvm::dyn_cast<RankedTensorType>(type);
    if (!tensorType)
      return llvm::createStringError(where + ": input #" + llvm::Twine(index) +
                                     " is not a ranked tensor");
    if (tensorType != input.getType())
      return llvm::createStringError(
          where + ": input #" + llvm::Twine(index) + " must be " +
          Tensor(tensorType).typeString() + ", got " + input.typeString());
    if (static_cast<int64_t>(input.data.size()) != input.numElements() ||
        numElementsOf(input.shape) != input.numElements())
      return llvm::createStringError(where + ": input #" + llvm::Twine(index) +
                                     " has the wrong number of elements");
  }
  return llvm::Error::success();
}

llvm::Expected<std::vector<Tensor>>
Interpreter::call(func::FuncOp function, llvm::ArrayRef<Tensor> inputs) {
  if (function.isExternal())
    return llvm::createStringError("function '" + function.getSymName() +
                                   "' has no body");
  if (!function.getBody().hasOneBlock())
    return opError(function, "only single-block functions are supported");
  if (llvm::Error error = checkInputs(function, inputs))
    return std::move(error);

  auto results = evaluateBlock(function.getBody().front(), inputs);
  if (!results)
    return results.takeError();
  return results;
}

llvm::Expected<std::vector<Tensor>>
Interpreter::evaluateBlock(Block &body, llvm::ArrayRef<Tensor> arguments) {
  if (body.getNumArguments() != arguments.size())
    return opError(body.getParentOp(),
                   "body takes " + llvm::Twine(body.getNumArguments()) +
                       " argument(s), got " + llvm::Twine(arguments.size()));
  llvm::DenseMap<Value, Tensor> values;
  for (auto [argument, input] : llvm::zip(body.getArguments(), arguments))
    values[argument] = input;

  RoundingOptions rounding;
  rounding.keepF32AsF64 = options.f64;
  for (Operation &op : body) {
    Kernel kernel = registry.lookup(op.getName().getStringRef());
    if (!kernel)
      return opError(&op, "the evaluator has no kernel for this op");
    llvm::SmallVector<const Tensor *> operands;
    for (Value operand : op.getOperands()) {
      auto it = values.find(operand);
      if (it == values.end())
        return opError(&op, "operand defined outside the enclosing body");
      operands.push_back(&it->second);
    }
    auto results = kernel(KernelCall{&op, operands, *this});
    if (!results)
      return results.takeError();
    // The terminator's "results" are the body's.
    if (op.hasTrait<OpTrait::IsTerminator>())
      return results;
    if (results->size() != op.getNumResults())
      return opError(&op, "kernel produced the wrong number of results");
    for (auto [value, result] : llvm::zip(op.getResults(), *results)) {
      auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
      if (!type || ArrayRef<int64_t>(result.shape) != type.getShape() ||
          result.numElements() != type.getNumElements())
        return opError(&op, "kernel produced a result of the wrong shape");
      result.elementType = type.getElementType();
      roundAllToType(result.data.data(), result.data.size(), result.elementType,
                     rounding);
      values[value] = std::move(result);
    }
  }
  return opError(body.getParentOp(), "body has no terminator");
}
