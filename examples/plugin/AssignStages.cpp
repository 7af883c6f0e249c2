//===- AssignStages.cpp - example partitioning pass -----------------------===//
//
// example-assign-stages: a user's stage assignment for mpmd-partition. It
// only writes `mpmd.stage` on forward ops; mpmd-partition builds the
// fragments, transfers and accumulation from it exactly as from markers, and
// mpmd-verify checks the result like any other program.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/NN/IR/NNDialect.h"
#include "tandem/Dialect/NN/IR/NNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/StringExtras.h"

#include <map>
#include <optional>
#include <set>

namespace tandem::example {
#define GEN_PASS_DECL_EXAMPLEASSIGNSTAGES
#define GEN_PASS_DEF_EXAMPLEASSIGNSTAGES
#include "Passes.h.inc"
} // namespace tandem::example

using namespace mlir;

namespace tandem::example {
namespace {

/// The block number in `<prefix><i>.<rest>`, if the name has that form.
std::optional<int64_t> blockOf(StringRef name, StringRef prefix) {
  if (!name.consume_front(prefix))
    return std::nullopt;
  auto [digits, rest] = name.split('.');
  int64_t block;
  if (rest.empty() || digits.getAsInteger(10, block) || block < 0)
    return std::nullopt;
  return block;
}

struct AssignStagesPass
    : public impl::ExampleAssignStagesBase<AssignStagesPass> {
  using ExampleAssignStagesBase::ExampleAssignStagesBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (blocksPerStage < 1) {
      module.emitError("example-assign-stages: blocks-per-stage must be at "
                       "least 1, found ")
          << static_cast<int64_t>(blocksPerStage);
      return signalPassFailure();
    }
    auto function = module.lookupSymbol<func::FuncOp>(this->function);
    if (!function) {
      module.emitError("example-assign-stages: no function @")
          << this->function;
      return signalPassFailure();
    }
    Builder b(module.getContext());
    std::map<int64_t, std::set<int64_t>> blocksOfStage;
    function.walk([&](Operation *op) {
      if (op->hasAttr("nn.grad") || op->hasAttr("nn.optimizer"))
        return;
      std::optional<int64_t> block;
      for (Value operand : op->getOperands())
        if (auto read = operand.getDefiningOp<nn::ParamOp>())
          if (auto b = blockOf(read.getName(), prefix))
            block = std::max(block.value_or(*b), *b);
      if (!block)
        return;
      int64_t stage = *block / blocksPerStage;
      op->setAttr("mpmd.stage", b.getI64IntegerAttr(stage));
      blocksOfStage[stage].insert(*block);
    });
    if (blocksOfStage.empty()) {
      function.emitError("example-assign-stages: no forward op of @")
          << function.getSymName() << " reads a parameter named '" << prefix
          << "<block>.*'";
      return signalPassFailure();
    }
    for (auto &[stage, blocks] : blocksOfStage)
      function.emitRemark()
          << "virtual stage " << stage << ": blocks "
          << llvm::join(llvm::map_range(blocks,
                                        [](int64_t block) {
                                          return std::to_string(block);
                                        }),
                        ", ");
  }
};

} // namespace
} // namespace tandem::example
