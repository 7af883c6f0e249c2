//===- IndexChecks.cpp - indices generated code checks --------------------===//

#include "tandem/Lowering/IndexChecks.h"
#include "tandem/Dialect/NN/IR/NNOps.h"
#include "tandem/Eval/Kernels.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/ErrorHandling.h"

using namespace mlir;
using namespace tandem;
using tandem::runtime::IndexCheckInfo;

std::optional<IndexCheckInfo> tandem::lowering::indexCheckOf(Operation *op) {
  auto check = [&](llvm::StringRef index, llvm::StringRef range,
                   int64_t bound) {
    return IndexCheckInfo{op->getName().getStringRef().str(),
                          eval::formatLocation(op->getLoc()), index.str(),
                          range.str(), bound};
  };
  return llvm::TypeSwitch<Operation *, std::optional<IndexCheckInfo>>(op)
      .Case([&](nn::EmbeddingOp e) {
        return check("id", "vocabulary", e.getRowCount());
      })
      .Case([&](nn::EmbeddingGradOp e) {
        return check("id", "vocabulary", e.getRowCount());
      })
      .Case([&](nn::OneHotOp o) {
        return check("id", "classes", o.getClasses());
      })
      .Case([&](nn::CrossEntropyOp c) {
        return check("target", "classes", c.getClassCount());
      })
      .Case([&](nn::CrossEntropyGradOp c) {
        return check("target", "classes", c.getClassCount());
      })
      .Default([](Operation *) { return std::nullopt; });
}

unsigned tandem::lowering::IndexCheckTable::add(Operation *op) {
  std::optional<IndexCheckInfo> check = indexCheckOf(op);
  if (!check)
    llvm::report_fatal_error("IndexCheckTable::add: the op reads no index");
  checks.push_back(std::move(*check));
  return checks.size() - 1;
}
