//===- AttentionDecompositionTest.cpp - nn-decompose-attention, numerically
//===//
//
// The evaluator computes nn.attention straight from its definition; the same
// graph after nn-decompose-attention runs through matmul, softmax, reshape
// and transpose kernels. Equal results (up to f32 rounding of the
// intermediates) check the decomposition numerically.
//
//===----------------------------------------------------------------------===//

#include "EvalTestUtils.h"

#include "tandem/Dialect/NN/Transforms/Passes.h"
#include "tandem/Eval/Inputs.h"

#include "mlir/Pass/PassManager.h"

#include <cmath>

using namespace tandem::eval;
using namespace tandem::eval::test;

namespace {

double relativeError(const Tensor &a, const Tensor &b) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < b.data.size(); ++i) {
    diff += (a.data[i] - b.data[i]) * (a.data[i] - b.data[i]);
    norm += b.data[i] * b.data[i];
  }
  return std::sqrt(diff) / std::sqrt(norm);
}

/// The generated inputs of @f (each program has its own context, so each
/// gets its own tensors; equal seeds give equal values).
std::vector<Tensor> inputsFor(Program &program, uint64_t seed) {
  auto inputs = generateInputs(
      program.module->lookupSymbol<mlir::func::FuncOp>("f"), seed);
  EXPECT_TRUE(static_cast<bool>(inputs));
  return inputs ? *inputs : std::vector<Tensor>{};
}

std::string attentionGraph(const std::string &attributes) {
  return R"(
    func.func @f(%x: tensor<2x5x8xf32>, %y: tensor<2x5x8xf32>, %z: tensor<2x5x8xf32>) -> tensor<2x5x8xf32> {
      %r = nn.attention %x, %y, %z {)" +
         attributes +
         R"(} : tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32> -> tensor<2x5x8xf32>
      return %r : tensor<2x5x8xf32>
    })";
}

class EvalAttentionDecomposition
    : public ::testing::TestWithParam<const char *> {};

TEST_P(EvalAttentionDecomposition, MatchesTheDirectDefinition) {
  Program direct = parse(attentionGraph(GetParam()));
  ASSERT_TRUE(direct.module);
  Program decomposed = parse(attentionGraph(GetParam()));
  ASSERT_TRUE(decomposed.module);
  mlir::PassManager pm(decomposed.context.get());
  pm.addPass(tandem::nn::createNNDecomposeAttention());
  ASSERT_TRUE(mlir::succeeded(pm.run(*decomposed.module)));
  // The pass really removed the op.
  bool hasAttention = false;
  decomposed.module->walk([&](mlir::Operation *op) {
    hasAttention |= op->getName().getStringRef() == "nn.attention";
  });
  ASSERT_FALSE(hasAttention);

  for (uint64_t seed : {1, 2, 3}) {
    auto a = evaluate(direct, inputsFor(direct, seed));
    auto b = evaluate(decomposed, inputsFor(decomposed, seed));
    ASSERT_EQ(a.size(), 1u);
    ASSERT_EQ(b.size(), 1u);
    EXPECT_LE(relativeError(b[0], a[0]), 1e-6) << "seed " << seed;
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, EvalAttentionDecomposition,
                         ::testing::Values("heads = 2 : i64",
                                           "causal, heads = 2 : i64",
                                           "causal, heads = 4 : i64, scale = "
                                           "0.7 : f64",
                                           "heads = 1 : i64, scale = 2.0 : "
                                           "f64"));

TEST(EvalAttentionDecompositionCheck, DetectsAWrongMask) {
  // The comparison can fail: causal and non-causal attention differ.
  Program causal = parse(attentionGraph("causal, heads = 2 : i64"));
  Program full = parse(attentionGraph("heads = 2 : i64"));
  ASSERT_TRUE(causal.module && full.module);
  auto a = evaluate(causal, inputsFor(causal, 1));
  auto b = evaluate(full, inputsFor(full, 1));
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_GT(relativeError(a[0], b[0]), 1e-3);
}

} // namespace
