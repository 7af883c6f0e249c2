//===- PipelinePlan.h - what a step of an mpmd program needs ----*- C++ -*-===//
//
// Everything the rank threads look up, computed once before they start:
// which program holds each rank's list, every fragment argument's binding,
// the step inputs' types and the results that are step outputs or
// parameter updates. Building it reads attributes through MLIR's accessors
// on one thread, so the rank threads only follow plain data and read ops.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_LIB_EVAL_PIPELINEPLAN_H
#define TANDEM_LIB_EVAL_PIPELINEPLAN_H

#include "tandem/Dialect/MPMD/IR/MPMDOps.h"
#include "tandem/Eval/Tensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace tandem::eval {

/// The microbatch index of a once-per-step producer's slot.
constexpr int64_t kStepSlot = -1;

/// Where a fragment argument's value comes from.
struct ArgumentSource {
  enum class Kind { Param, Input, Transfer };
  Kind kind = Kind::Param;
  /// Param: the parameter's name.
  std::string param;
  /// Input: the step input's index.
  int64_t input = 0;
  /// Transfer: the producer's result and whether it runs per microbatch.
  llvm::StringRef producer;
  int64_t result = 0;
  bool producerPerMicrobatch = false;
  mlir::RankedTensorType type;
};

struct FragmentPlan {
  mpmd::FragmentOp op;
  bool perMicrobatch = false;
  std::vector<ArgumentSource> arguments;
};

struct RankPlan {
  mpmd::ProgramOp program;
  /// Null when the rank has no action list (nothing to do).
  mpmd::RankOp list;
  /// Fragments with a body in `program`.
  llvm::StringMap<FragmentPlan> fragments;
  /// Every fragment of `program`, declarations included.
  llvm::StringMap<mpmd::FragmentOp> symbols;
};

/// A once-per-step fragment's result that leaves the step.
struct ResultRef {
  llvm::StringRef fragment;
  int64_t result = 0;
  mlir::RankedTensorType type;
};

struct PipelinePlan {
  int64_t numRanks = 0;
  int64_t microbatches = 0;
  std::vector<RankPlan> ranks;
  /// Per step input: the microbatch type, the full-batch type and the
  /// smallest vocabulary it indexes.
  std::vector<mlir::RankedTensorType> microbatchInputTypes, inputTypes;
  std::vector<std::optional<int64_t>> vocabularies;
  std::vector<ResultRef> outputs;
  std::vector<mlir::RankedTensorType> outputTypes;
  /// Parameter name -> the result holding its new value, sorted by name.
  std::vector<std::pair<std::string, ResultRef>> updates;
  std::vector<std::string> updatedNames;
};

/// Builds the plan of program `name` of `module`.
llvm::Expected<PipelinePlan> buildPipelinePlan(mlir::ModuleOp module,
                                               llvm::StringRef name);

/// "@f[i] microbatch k", or "@f[i]" for a once-per-step slot.
std::string slotName(llvm::StringRef fragment, int64_t result,
                     int64_t microbatch);

} // namespace tandem::eval

#endif // TANDEM_LIB_EVAL_PIPELINEPLAN_H
