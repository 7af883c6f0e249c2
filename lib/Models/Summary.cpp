//===- Summary.cpp - parameter and op counts of a model -------------------===//

#include "tandem/Models/Summary.h"

#include "tandem/Dialect/NN/IR/NNOps.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace tandem;
using namespace tandem::models;

int64_t tandem::models::countParameters(ModuleOp module) {
  int64_t count = 0;
  for (auto parameter : module.getOps<nn::ParameterOp>())
    count += parameter.getNumElements();
  return count;
}

ModelSummary tandem::models::summarize(ModuleOp module) {
  ModelSummary summary;
  summary.parameters = countParameters(module);
  module.walk([&](Operation *op) {
    if (op == module.getOperation())
      return;
    ++summary.opCounts[op->getName().getStringRef().str()];
    if (isa<nn::ParameterOp>(op))
      ++summary.parameterTensors;
    else if (isa<nn::StageEndOp>(op))
      ++summary.stages;
  });
  return summary;
}

void tandem::models::printSummary(const ModelSummary &summary,
                                  llvm::raw_ostream &os) {
  os << "parameters: " << summary.parameters << "\n";
  os << "parameter tensors: " << summary.parameterTensors << "\n";
  os << "stages: " << summary.stages << "\n";
  os << "ops:\n";
  for (const auto &[name, count] : summary.opCounts)
    os << "  " << name << ": " << count << "\n";
}
