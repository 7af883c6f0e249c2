//===- Summary.h - parameter and op counts of a model -----------*- C++ -*-===//

#ifndef TANDEM_MODELS_SUMMARY_H
#define TANDEM_MODELS_SUMMARY_H

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <map>
#include <string>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace tandem::models {

/// Total number of scalar parameters: the sum over `nn.parameter` symbols.
int64_t countParameters(mlir::ModuleOp module);

/// What `tandemc models --summary` reports.
struct ModelSummary {
  int64_t parameters = 0;
  /// Number of `nn.parameter` symbols.
  int64_t parameterTensors = 0;
  /// Pipeline stages implied by the markers: `nn.stage_end` count + 1.
  int64_t stages = 1;
  /// Operations by name, excluding the module itself; sorted so the
  /// printed summary is deterministic.
  std::map<std::string, int64_t> opCounts;
};

ModelSummary summarize(mlir::ModuleOp module);

/// Prints the summary, one fact per line.
void printSummary(const ModelSummary &summary, llvm::raw_ostream &os);

} // namespace tandem::models

#endif // TANDEM_MODELS_SUMMARY_H
