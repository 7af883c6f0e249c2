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

/// Attention over a 2×5×8 query, key and value 2×5×`kvDim` (grouped-query
/// attention when kvDim < 8).
std::string attentionGraph(const std::string &attributes, int kvDim = 8) {
  std::string kv = "tensor<2x5x" + std::to_string(kvDim) + "xf32>";
  return R"(
    func.func @f(%x: tensor<2x5x8xf32>, %y: )" +
         kv + ", %z: " + kv + R"() -> tensor<2x5x8xf32> {
      %r = nn.attention %x, %y, %z {)" +
         attributes + R"(} : tensor<2x5x8xf32>, )" + kv + ", " + kv +
         R"( -> tensor<2x5x8xf32>
      return %r : tensor<2x5x8xf32>
    })";
}

/// The op's attributes and its key and value width.
struct Variant {
  const char *attributes;
  int kvDim;
};

class EvalAttentionDecomposition : public ::testing::TestWithParam<Variant> {};

TEST_P(EvalAttentionDecomposition, MatchesTheDirectDefinition) {
  Program direct =
      parse(attentionGraph(GetParam().attributes, GetParam().kvDim));
  ASSERT_TRUE(direct.module);
  Program decomposed =
      parse(attentionGraph(GetParam().attributes, GetParam().kvDim));
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

INSTANTIATE_TEST_SUITE_P(
    Variants, EvalAttentionDecomposition,
    ::testing::Values(Variant{"heads = 2 : i64", 8},
                      Variant{"causal, heads = 2 : i64", 8},
                      Variant{"causal, heads = 4 : i64, scale = 0.7 : f64", 8},
                      Variant{"heads = 1 : i64, scale = 2.0 : f64", 8},
                      // Grouped-query attention: groups of 2 and of 4.
                      Variant{"causal, heads = 4 : i64, kv_heads = 2 : i64", 4},
                      Variant{"heads = 4 : i64, kv_heads = 1 : i64", 2}));

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

TEST(EvalAttentionDecompositionCheck, DetectsAWrongGroup) {
  // Query heads 0 and 1 share key head 0: reading key head h % kv_heads
  // instead would give another result. Two key heads of 2 repeated give
  // the same result as four key heads holding the repeats.
  Program grouped =
      parse(attentionGraph("causal, heads = 4 : i64, kv_heads = 2 : i64", 4));
  ASSERT_TRUE(grouped.module);
  std::vector<Tensor> inputs = inputsFor(grouped, 1);
  ASSERT_EQ(inputs.size(), 3u);
  Program full = parse(attentionGraph("causal, heads = 4 : i64"));
  ASSERT_TRUE(full.module);
  // The same query; key and value heads [a, b] → [a, a, b, b] (repeat) or
  // [a, b, a, b] (tile): only the repeat is grouped-query attention. (The
  // tensors are @full's own, in its context, with the values replaced.)
  auto widened = [&](bool repeat) {
    std::vector<Tensor> wide = inputsFor(full, 1);
    wide[0].data = inputs[0].data;
    for (int i : {1, 2})
      for (int64_t row = 0; row < 10; ++row)
        for (int64_t h = 0; h < 4; ++h)
          for (int64_t d = 0; d < 2; ++d)
            wide[i].data[row * 8 + h * 2 + d] =
                inputs[i].data[row * 4 + (repeat ? h / 2 : h % 2) * 2 + d];
    return wide;
  };
  auto a = evaluate(grouped, inputs);
  auto repeated = evaluate(full, widened(true));
  auto tiled = evaluate(full, widened(false));
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(repeated.size(), 1u);
  ASSERT_EQ(tiled.size(), 1u);
  EXPECT_EQ(relativeError(a[0], repeated[0]), 0.0);
  EXPECT_GT(relativeError(a[0], tiled[0]), 1e-3);
}

} // namespace
