//===- TrainStepTest.cpp - the tiny MLP's training step on the CPU --------===//

#include "EmitterTestUtils.h"

#include "tandem/Eval/Parameters.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/MemoryBuffer.h"

#include "gtest/gtest.h"

#include <iostream>

using namespace tandem::cpu;
using namespace tandem::cpu::testing;

namespace {

TEST(TrainStep, TinyMlpMatchesTheEvaluator) {
  auto buffer = llvm::MemoryBuffer::getFile(TANDEM_TEST_SOURCE_DIR
                                            "/examples/tiny-mlp.mlir");
  ASSERT_TRUE(static_cast<bool>(buffer));
  auto context = makeContext();
  auto module = parseModule(*context, (*buffer)->getBuffer());
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  llvm::Error error = runPipeline(**module, "nn-autodiff,nn-optimizer");
  ASSERT_FALSE(static_cast<bool>(error)) << llvm::toString(std::move(error));
  auto step = (**module).lookupSymbol<mlir::func::FuncOp>("train_step");
  ASSERT_TRUE(step);

  auto compiled = emitAndCompile({step.getOperation()});
  ASSERT_TRUE(static_cast<bool>(compiled))
      << llvm::toString(compiled.takeError());
  const EmittedFunction *info = compiled->find("train_step");
  ASSERT_NE(info, nullptr);
  // Every parameter and optimizer state is read, and the step fuses: the
  // same-shaped layers' updates share group functions.
  EXPECT_EQ(info->parameters.size(), 31u);
  EXPECT_GT(info->numFusedOps, info->numFusedGroups);
  EXPECT_LT(compiled->emitted.numUniqueGroups, compiled->emitted.numGroupCalls);

  auto parameters = tandem::eval::initializeParameters(**module, 7);
  ASSERT_TRUE(static_cast<bool>(parameters))
      << llvm::toString(parameters.takeError());
  std::mt19937 rng(99);
  auto errors = compareWithEvaluator(**module, *compiled, "train_step",
                                     *parameters, rng, {-1.0, 1.0, 10});
  ASSERT_TRUE(static_cast<bool>(errors)) << llvm::toString(errors.takeError());
  ASSERT_EQ(errors->size(), info->resultTypes.size());
  double worst = 0.0;
  for (auto [i, error] : llvm::enumerate(*errors)) {
    EXPECT_LE(error, 1e-5) << "result " << i;
    worst = std::max(worst, error);
  }
  std::cout << "[ emitter ] train_step: " << errors->size()
            << " results, loss error " << errors->front()
            << ", max relative error " << worst << "; " << info->numFusedGroups
            << " fused groups (" << info->numFusedOps << " ops), "
            << compiled->emitted.numUniqueGroups
            << " distinct group functions, " << info->numKernels
            << " kernels\n";
}

} // namespace
