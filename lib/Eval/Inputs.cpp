//===- Inputs.cpp - deterministic function inputs -------------------------===//

#include "tandem/Eval/Inputs.h"
#include "tandem/Eval/Rounding.h"

#include "tandem/Dialect/NN/IR/NNOps.h"
#include "tandem/Runtime/Init.h"

#include "llvm/ADT/SmallPtrSet.h"

#include <algorithm>
#include <cmath>

using namespace tandem::eval;
using namespace mlir;
namespace nn = tandem::nn;

IndexUses tandem::eval::indexUsesOf(Value ids) {
  IndexUses uses;
  auto vocabulary = [&](int64_t size) {
    uses.vocabulary = uses.vocabulary ? std::min(*uses.vocabulary, size) : size;
  };
  SmallVector<Value> work{ids};
  llvm::SmallPtrSet<Operation *, 8> seen;
  while (!work.empty()) {
    Value value = work.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (!seen.insert(user).second)
        continue;
      if (auto embedding = dyn_cast<nn::EmbeddingOp>(user)) {
        if (embedding.getIds() == value) {
          uses.tokens = true;
          vocabulary(embedding.getRowCount());
        }
      } else if (auto loss = dyn_cast<nn::CrossEntropyOp>(user)) {
        if (loss.getTargets() == value) {
          uses.targets = true;
          vocabulary(loss.getClassCount());
        }
      } else if (auto oneHot = dyn_cast<nn::OneHotOp>(user)) {
        uses.targets = true;
        vocabulary(oneHot.getClasses());
      } else if (isa<nn::ReshapeOp, nn::TransposeOp, nn::SliceOp,
                     nn::BroadcastToOp, nn::ConcatOp>(user)) {
        // The same ids, moved: what reads them indexes the same tables.
        work.push_back(user->getResult(0));
      }
    }
  }
  return uses;
}

std::optional<int64_t> tandem::eval::vocabularyOf(BlockArgument argument) {
  return indexUsesOf(argument).vocabulary;
}

Tensor tandem::eval::generateInput(RankedTensorType type, unsigned index,
                                   uint64_t seed,
                                   std::optional<int64_t> bound) {
  Tensor tensor(type);
  uint64_t stream =
      tandem::rng::parameterStream("input." + std::to_string(index));
  if (isa<IntegerType>(tensor.elementType)) {
    int64_t limit = bound.value_or(kDefaultIntegerBound);
    tandem::rng::InitSpec uniform{tandem::rng::InitKind::Uniform, 0.0, 1.0};
    for (size_t i = 0; i < tensor.data.size(); ++i) {
      double u = tandem::rng::initValue(uniform, seed, stream, i);
      tensor.data[i] = std::min<double>(
          std::floor(u * static_cast<double>(limit)), limit - 1);
    }
  } else {
    tandem::rng::InitSpec normal{tandem::rng::InitKind::Normal, 1.0, 0.0};
    for (size_t i = 0; i < tensor.data.size(); ++i)
      tensor.data[i] = roundToType(
          tandem::rng::initValue(normal, seed, stream, i), tensor.elementType);
  }
  return tensor;
}

llvm::Expected<std::vector<Tensor>>
tandem::eval::generateInputs(func::FuncOp function, uint64_t seed) {
  if (function.isExternal())
    return llvm::createStringError("function '" + function.getSymName() +
                                   "' has no body");
  std::vector<Tensor> inputs;
  for (BlockArgument argument : function.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(argument.getType());
    if (!type)
      return llvm::createStringError(
          "input #" + llvm::Twine(argument.getArgNumber()) + " of function '" +
          function.getSymName() + "' is not a ranked tensor");
    inputs.push_back(generateInput(type, argument.getArgNumber(), seed,
                                   vocabularyOf(argument)));
  }
  return inputs;
}
