//===- IndexChecks.cpp - indices generated code checks --------------------===//

#include "tandem/Lowering/IndexChecks.h"
#include "tandem/Dialect/NN/IR/NNOps.h"
#include "tandem/Eval/Kernels.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/ErrorHandling.h"

using namespace mlir;
using namespace tandem;

unsigned tandem::lowering::IndexCheckTable::add(Operation *op) {
  auto check = [&](llvm::StringRef index, llvm::StringRef range,
                   int64_t bound) {
    checks.push_back({op->getName().getStringRef().str(),
                      eval::formatLocation(op->getLoc()), index.str(),
                      range.str(), bound});
  };
  llvm::TypeSwitch<Operation *>(op)
      .Case<nn::EmbeddingOp, nn::EmbeddingGradOp>(
          [&](auto e) { check("id", "vocabulary", e.getRowCount()); })
      .Case([&](nn::OneHotOp o) { check("id", "classes", o.getClasses()); })
      .Case<nn::CrossEntropyOp, nn::CrossEntropyGradOp>(
          [&](auto c) { check("target", "classes", c.getClassCount()); })
      .Default([](Operation *) {
        llvm::report_fatal_error("IndexCheckTable::add: the op reads no index");
      });
  return checks.size() - 1;
}
