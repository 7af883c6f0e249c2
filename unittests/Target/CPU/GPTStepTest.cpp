//===- GPTStepTest.cpp - the tiny GPT's training step on the CPU ----------===//
//
// The tiny GPT (examples/tiny-gpt.mlir) through attention decomposition,
// autodiff and an SGD step, emitted and compiled whole: the loss, every
// gradient and the full training step against the evaluator on the same inputs,
// within the bound of each function's GEMMs (nativeErrorBound; BLAS sums in
// its own order, so bitwise equality is not expected).
//
//===----------------------------------------------------------------------===//

#include "EmitterTestUtils.h"

#include "tandem/Eval/Parameters.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/MemoryBuffer.h"

#include "gtest/gtest.h"

#include <iostream>

using namespace tandem::cpu;
using namespace tandem::cpu::testing;

namespace {

/// Emits, compiles and compares function `name` of the tiny GPT after
/// `pipeline`; returns the worst relative error over its results.
void checkTinyGpt(const std::string &pipeline, const std::string &name,
                  size_t expectedResults) {
  auto buffer = llvm::MemoryBuffer::getFile(TANDEM_TEST_SOURCE_DIR
                                            "/examples/tiny-gpt.mlir");
  ASSERT_TRUE(static_cast<bool>(buffer));
  auto context = makeContext();
  auto module = parseModule(*context, (*buffer)->getBuffer());
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  llvm::Error error = runPipeline(**module, pipeline);
  ASSERT_FALSE(static_cast<bool>(error)) << llvm::toString(std::move(error));
  auto function = (**module).lookupSymbol<mlir::func::FuncOp>(name);
  ASSERT_TRUE(function) << name;

  auto compiled = emitAndCompile({function.getOperation()});
  ASSERT_TRUE(static_cast<bool>(compiled))
      << llvm::toString(compiled.takeError());
  const EmittedFunction *info = compiled->find(name);
  ASSERT_NE(info, nullptr);
  ASSERT_EQ(info->resultTypes.size(), expectedResults);

  auto parameters = tandem::eval::initializeParameters(**module, 5);
  ASSERT_TRUE(static_cast<bool>(parameters))
      << llvm::toString(parameters.takeError());
  std::mt19937 rng(17);
  // Token ids and targets below the vocabulary (256).
  auto errors = compareWithEvaluator(**module, *compiled, name, *parameters,
                                     rng, {-1.0, 1.0, 256});
  ASSERT_TRUE(static_cast<bool>(errors)) << llvm::toString(errors.takeError());
  ASSERT_EQ(errors->size(), expectedResults);
  double worst = 0.0, bound = nativeErrorBound(function.getBody().front());
  for (auto [i, e] : llvm::enumerate(*errors)) {
    EXPECT_LE(e, bound) << name << " result " << i;
    worst = std::max(worst, e);
  }
  std::cout << "[ emitter ] tiny GPT " << name << ": " << errors->size()
            << " results, loss error " << errors->front()
            << ", max relative error " << worst << " (bound " << bound << ")\n";
}

TEST(TrainStep, TinyGptGradientsMatchTheEvaluator) {
  // The loss and the gradient of each of the 100 parameters (the tied wte
  // sums its embedding and LM-head contributions).
  checkTinyGpt("nn-decompose-attention,nn-autodiff", "forward_grad", 101);
}

TEST(TrainStep, TinyGptSgdStepMatchesTheEvaluator) {
  // An SGD step (the loss, 100 new parameters and the step counter): new
  // parameters are p - lr g, so their error follows the gradients'. (After
  // AdamW's first step a near-zero gradient component becomes ±lr whatever its
  // rounding, which no tolerance on the gradient bounds; the AdamW step is
  // covered bitwise across stage counts by test/Runtime/train-tiny-gpt.test.)
  checkTinyGpt(
      "nn-decompose-attention,nn-autodiff,nn-optimizer{optimizer=sgd lr=0.1}",
      "train_step", 102);
}

} // namespace
