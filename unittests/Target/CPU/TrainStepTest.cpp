//===- TrainStepTest.cpp - the tiny MLP's training step on the CPU --------===//

#include "EmitterTestUtils.h"

#include "tandem/Dialect/MPMD/IR/MPMDOps.h"
#include "tandem/Eval/Parameters.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/MemoryBuffer.h"

#include "gtest/gtest.h"

#include <iostream>
#include <thread>

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
  // An SGD step: its new parameters p - lr g carry the gradients' error, which
  // nativeErrorBound bounds. (AdamW's first step turns a gradient element at
  // its rounding noise into ±lr whatever the noise, which no bound on the
  // gradient limits; the optimizer's arithmetic is bitwise the evaluator's
  // (OpEmitterTest, FusionPropertyTest) and AdamW runs bitwise across stage
  // counts in test/Runtime.)
  llvm::Error error =
      runPipeline(**module, "nn-autodiff,nn-optimizer{optimizer=sgd lr=0.1}");
  ASSERT_FALSE(static_cast<bool>(error)) << llvm::toString(std::move(error));
  auto step = (**module).lookupSymbol<mlir::func::FuncOp>("train_step");
  ASSERT_TRUE(step);

  auto compiled = emitAndCompile({step.getOperation()});
  ASSERT_TRUE(static_cast<bool>(compiled))
      << llvm::toString(compiled.takeError());
  const EmittedFunction *info = compiled->find("train_step");
  ASSERT_NE(info, nullptr);
  // Every parameter and the step counter are read, and the step fuses: the
  // same-shaped layers' updates share group functions.
  EXPECT_EQ(info->parameters.size(), 11u);
  EXPECT_GT(info->numFusedOps, info->numFusedGroups);
  EXPECT_LT(compiled->emitted.numUniqueGroups, compiled->emitted.numGroupCalls);

  auto parameters = tandem::eval::initializeParameters(**module, 7);
  ASSERT_TRUE(static_cast<bool>(parameters))
      << llvm::toString(parameters.takeError());
  std::mt19937 rng(99);
  std::mt19937 inputRng = rng;
  auto errors = compareWithEvaluator(**module, *compiled, "train_step",
                                     *parameters, rng, {-1.0, 1.0, 10});
  ASSERT_TRUE(static_cast<bool>(errors)) << llvm::toString(errors.takeError());
  ASSERT_EQ(errors->size(), info->resultTypes.size());
  double worst = 0.0, bound = nativeErrorBound(step.getBody().front());
  for (auto [i, error] : llvm::enumerate(*errors)) {
    EXPECT_LE(error, bound) << "result " << i;
    worst = std::max(worst, error);
  }
  std::cout << "[ emitter ] train_step: " << errors->size()
            << " results, loss error " << errors->front()
            << ", max relative error " << worst << " (bound " << bound << "); "
            << info->numFusedGroups << " fused groups (" << info->numFusedOps
            << " ops), " << compiled->emitted.numUniqueGroups
            << " distinct group functions, " << info->numKernels
            << " kernels\n";

  // Stateless and reentrant: ranks in one process call the same library
  // at once, each with its own scratch; every call gives the same bits.
  std::vector<tandem::eval::Tensor> inputs;
  for (mlir::RankedTensorType type : info->argumentTypes)
    inputs.push_back(randomTensor(type, inputRng, {-1.0, 1.0, 10}));
  for (const auto &[name, type] : info->parameters)
    inputs.push_back(parameters->at(name));
  auto reference = runCompiled(*compiled, *info, inputs);
  ASSERT_TRUE(static_cast<bool>(reference))
      << llvm::toString(reference.takeError());
  constexpr int kThreads = 4;
  std::vector<std::vector<tandem::eval::Tensor>> outputs(kThreads);
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int repeat = 0; repeat < 5; ++repeat) {
        auto results = runCompiled(*compiled, *info, inputs);
        if (!results) {
          failures[t] = llvm::toString(results.takeError());
          return;
        }
        outputs[t] = std::move(*results);
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_TRUE(failures[t].empty()) << failures[t];
    ASSERT_EQ(outputs[t].size(), reference->size());
    for (auto [a, b] : llvm::zip(outputs[t], *reference))
      EXPECT_EQ(a.data, b.data) << "thread " << t;
  }

  // Fusing reductions and GEMM epilogues saves kernels and changes no bit.
  EmitOptions unfusedOptions;
  unfusedOptions.fuseReductions = false;
  unfusedOptions.fuseGemmEpilogues = false;
  unfusedOptions.mergeGroups = false;
  auto unfused = emitAndCompile({step.getOperation()}, unfusedOptions);
  ASSERT_TRUE(static_cast<bool>(unfused))
      << llvm::toString(unfused.takeError());
  const EmittedFunction *plain = unfused->find("train_step");
  ASSERT_NE(plain, nullptr);
  EXPECT_GT(info->numGemmEpilogues, 0u);
  EXPECT_GT(info->numFusedReductions, 0u);
  EXPECT_EQ(plain->numGemmEpilogues + plain->numFusedReductions, 0u);
  EXPECT_LT(info->numKernels, plain->numKernels);
  EXPECT_LT(info->scratchBytes, plain->scratchBytes);
  std::cout << "[ emitter ] train_step unfused: " << plain->numKernels
            << " kernels, " << plain->scratchBytes
            << " scratch bytes; fused: " << info->numKernels << " kernels ("
            << info->numGemmEpilogues << " GEMM epilogues, "
            << info->numFusedReductions << " fused reductions), "
            << info->scratchBytes << " scratch bytes\n";
  auto differing =
      countDifferingResults(*compiled, *unfused, "train_step", *parameters,
                            inputRng, {-1.0, 1.0, 10});
  ASSERT_TRUE(static_cast<bool>(differing))
      << llvm::toString(differing.takeError());
  EXPECT_EQ(*differing, 0u) << "fused and unfused steps differ";
}

/// The same step partitioned into 2 stages: every fragment (forward,
/// backward, optimizer) emitted into one library and compared with the
/// evaluator running the fragment's body on the same arguments.
TEST(TrainStep, PartitionedFragmentsMatchTheEvaluator) {
  auto buffer = llvm::MemoryBuffer::getFile(TANDEM_TEST_SOURCE_DIR
                                            "/examples/tiny-mlp.mlir");
  ASSERT_TRUE(static_cast<bool>(buffer));
  auto context = makeContext();
  auto module = parseModule(*context, (*buffer)->getBuffer());
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  llvm::Error error =
      runPipeline(**module, "nn-autodiff,nn-optimizer,"
                            "mpmd-partition{stages=2 microbatches=2}");
  ASSERT_FALSE(static_cast<bool>(error)) << llvm::toString(std::move(error));
  std::vector<mlir::Operation *> fragments;
  (**module).walk([&](tandem::mpmd::FragmentOp fragment) {
    if (!fragment.isExternal())
      fragments.push_back(fragment);
  });
  ASSERT_GE(fragments.size(), 5u);
  auto compiled = emitAndCompile(fragments);
  ASSERT_TRUE(static_cast<bool>(compiled))
      << llvm::toString(compiled.takeError());

  // Positive floats keep the optimizer's second moments valid.
  InputRange range = {0.1, 1.0, 10};
  std::mt19937 rng(5);
  tandem::eval::Interpreter interpreter(**module);
  for (mlir::Operation *op : fragments) {
    auto fragment = llvm::cast<tandem::mpmd::FragmentOp>(op);
    std::string name = fragment.getSymName().str();
    SCOPED_TRACE(name);
    const EmittedFunction *info = compiled->find(name);
    ASSERT_NE(info, nullptr);
    EXPECT_TRUE(info->parameters.empty());
    std::vector<tandem::eval::Tensor> arguments;
    for (mlir::RankedTensorType type : info->argumentTypes)
      arguments.push_back(randomTensor(type, rng, range));
    auto expected = interpreter.evaluateBlock(
        fragment.getFunctionBody().front(), arguments);
    ASSERT_TRUE(static_cast<bool>(expected))
        << llvm::toString(expected.takeError());
    auto actual = runCompiled(*compiled, *info, arguments);
    ASSERT_TRUE(static_cast<bool>(actual))
        << llvm::toString(actual.takeError());
    ASSERT_EQ(actual->size(), expected->size());
    // Positive random moments keep AdamW's update away from the noise
    // floor, so the fragments' results follow their GEMMs' bound.
    double worst = 0.0,
           bound = nativeErrorBound(fragment.getFunctionBody().front());
    for (auto [a, b] : llvm::zip(*actual, *expected)) {
      double e = relativeError(a, b);
      EXPECT_LE(e, bound);
      worst = std::max(worst, e);
    }
    std::cout << "[ emitter ] fragment " << name << ": " << actual->size()
              << " results, max relative error " << worst << " (bound " << bound
              << ")\n";
  }
}

} // namespace
