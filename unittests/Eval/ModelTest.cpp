//===- ModelTest.cpp - the evaluator on the example models ----------------===//

#include "EvalTestUtils.h"

#include "tandem/Dialect/NN/Transforms/Passes.h"
#include "tandem/Eval/Inputs.h"
#include "tandem/Eval/Parameters.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>

#ifndef TANDEM_TEST_SOURCE_DIR
#error "TANDEM_TEST_SOURCE_DIR must name the source tree"
#endif

using namespace tandem::eval;
using namespace tandem::eval::test;

namespace {

Program loadExample(const char *name) {
  std::string path = std::string(TANDEM_TEST_SOURCE_DIR) + "/examples/" + name;
  auto buffer = llvm::MemoryBuffer::getFile(path);
  EXPECT_TRUE(static_cast<bool>(buffer)) << path;
  if (!buffer)
    return {};
  return parse((*buffer)->getBuffer().str());
}

/// The loss of @forward with seeded parameters and generated inputs.
double loss(Program &program, EvalOptions options, uint64_t seed = 0) {
  auto function = program.module->lookupSymbol<mlir::func::FuncOp>("forward");
  auto parameters = initializeParameters(*program.module, seed);
  auto inputs = generateInputs(function, seed);
  EXPECT_TRUE(parameters && inputs);
  if (!parameters || !inputs)
    return NAN;
  Interpreter interpreter(*program.module, options);
  interpreter.setParameters(std::move(*parameters));
  auto results = interpreter.call(function, *inputs);
  if (!results) {
    ADD_FAILURE() << llvm::toString(results.takeError());
    return NAN;
  }
  return results->at(0).data.at(0);
}

TEST(EvalModels, InitialLossesAreNearLogOfTheClassCount) {
  Program gpt = loadExample("tiny-gpt.mlir");
  Program mlp = loadExample("tiny-mlp.mlir");
  ASSERT_TRUE(gpt.module && mlp.module);
  EXPECT_NEAR(loss(gpt, {}), std::log(256.0), 0.05);
  EXPECT_NEAR(loss(mlp, {}), std::log(10.0), 0.2);
}

TEST(EvalModels, F64ModeDiffersFromF32OnlyByRounding) {
  Program gpt = loadExample("tiny-gpt.mlir");
  ASSERT_TRUE(gpt.module);
  EvalOptions wide;
  wide.f64 = true;
  double f32 = loss(gpt, {}), f64 = loss(gpt, wide);
  EXPECT_NE(f32, f64);
  EXPECT_LT(std::abs(f32 - f64) / std::abs(f64), 1e-5);
  EXPECT_EQ(f32, static_cast<double>(static_cast<float>(f32)));
}

TEST(EvalModels, DecomposedAttentionGivesTheSameGPTLoss) {
  Program direct = loadExample("tiny-gpt.mlir");
  Program decomposed = loadExample("tiny-gpt.mlir");
  ASSERT_TRUE(direct.module && decomposed.module);
  mlir::PassManager pm(decomposed.context.get());
  pm.addPass(tandem::nn::createNNDecomposeAttention());
  ASSERT_TRUE(mlir::succeeded(pm.run(*decomposed.module)));
  for (uint64_t seed : {0, 1}) {
    double a = loss(direct, {}, seed), b = loss(decomposed, {}, seed);
    EXPECT_LE(std::abs(a - b) / std::abs(a), 1e-6) << "seed " << seed;
  }
}

} // namespace
