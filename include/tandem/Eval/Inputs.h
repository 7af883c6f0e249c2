//===- Inputs.h - deterministic function inputs -----------------*- C++ -*-===//
//
// Inputs for evaluating a function without a data set, a pure function of
// (seed, argument index, element index) through the runtime's Philox
// generator (stream = parameterStream("input.<argument index>")):
//   - float arguments: standard normal values, rounded to the element type;
//   - integer arguments: uniform in [0, bound), where bound is the smallest
//     vocabulary the argument indexes (rows of an nn.embedding table it feeds
//     as ids, classes of an nn.cross_entropy or nn.one_hot it feeds), or 256
//     when it feeds none.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_EVAL_INPUTS_H
#define TANDEM_EVAL_INPUTS_H

#include "tandem/Eval/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <vector>

namespace tandem::eval {

/// The integer bound used when an argument indexes no vocabulary.
constexpr int64_t kDefaultIntegerBound = 256;

/// What integer ids feed, looking through the ops that only move them
/// (reshape, transpose, slice, broadcast_to, concat):
///   - tokens: the ids of an nn.embedding;
///   - targets: the targets of an nn.cross_entropy, or the ids of an
///     nn.one_hot (how the JAX importer writes take_along_axis and one-hot
///     losses);
///   - vocabulary: the smallest row or class count among them.
struct IndexUses {
  bool tokens = false;
  bool targets = false;
  std::optional<int64_t> vocabulary;
};
IndexUses indexUsesOf(mlir::Value ids);

/// The smallest vocabulary `argument` indexes, if any (indexUsesOf).
std::optional<int64_t> vocabularyOf(mlir::BlockArgument argument);

/// The deterministic input number `index` of type `type`: integers uniform
/// in [0, bound) (kDefaultIntegerBound without one), floats standard normal.
Tensor generateInput(mlir::RankedTensorType type, unsigned index, uint64_t seed,
                     std::optional<int64_t> bound);

/// Deterministic inputs for every argument of `function`.
llvm::Expected<std::vector<Tensor>> generateInputs(mlir::func::FuncOp function,
                                                   uint64_t seed);

} // namespace tandem::eval

#endif // TANDEM_EVAL_INPUTS_H
