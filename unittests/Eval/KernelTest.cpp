//===- KernelTest.cpp - evaluator kernels against hand-computed values ----===//

#include "EvalTestUtils.h"

#include "tandem/Eval/Kernels.h"

#include <cmath>
#include <numeric>

using namespace tandem::eval;
using namespace tandem::eval::test;

namespace {

/// Runs `body` (ops using %a, %b and returning %r) in a function
/// @f(%a: aType, %b: bType) -> rType.
std::vector<double> run2(const std::string &aType, std::vector<double> a,
                         const std::string &bType, std::vector<double> b,
                         const std::string &rType, const std::string &body) {
  Program p = parse("func.func @f(%a: " + aType + ", %b: " + bType + ") -> " +
                    rType + " {\n" + body + "\n return %r : " + rType + "\n}");
  EXPECT_TRUE(p.module) << body;
  if (!p.module)
    return {};
  auto results = evaluate(p, {tensorOf(p.context.get(), aType, a),
                              tensorOf(p.context.get(), bType, b)});
  return results.empty() ? std::vector<double>{} : results[0].data;
}

std::vector<double> run1(const std::string &aType, std::vector<double> a,
                         const std::string &rType, const std::string &body) {
  Program p = parse("func.func @f(%a: " + aType + ") -> " + rType + " {\n" +
                    body + "\n return %r : " + rType + "\n}");
  EXPECT_TRUE(p.module) << body;
  if (!p.module)
    return {};
  auto results = evaluate(p, {tensorOf(p.context.get(), aType, a)});
  return results.empty() ? std::vector<double>{} : results[0].data;
}

std::vector<double> iota(int n) {
  std::vector<double> v(n);
  std::iota(v.begin(), v.end(), 0.0);
  return v;
}

void expectNear(const std::vector<double> &actual,
                const std::vector<double> &expected, double tol = 1e-6) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i], tol) << "element " << i;
}

TEST(EvalElementwise, UnaryOps) {
  std::vector<double> x = {-1.0, 0.0, 0.5, 2.0};
  auto u = [&](const std::string &op) {
    return run1("tensor<4xf64>", x, "tensor<4xf64>",
                "%r = " + op + " %a : tensor<4xf64>");
  };
  expectNear(u("nn.neg"), {1.0, 0.0, -0.5, -2.0});
  expectNear(u("nn.exp"), {std::exp(-1.0), 1.0, std::exp(0.5), std::exp(2.0)});
  expectNear(u("nn.relu"), {0.0, 0.0, 0.5, 2.0});
  expectNear(u("nn.tanh"),
             {std::tanh(-1.0), 0.0, std::tanh(0.5), std::tanh(2.0)});
  // gelu(1) in its tanh form is 0.8411920; gelu(-1) = -0.1588080.
  expectNear(run1("tensor<2xf64>", {1.0, -1.0}, "tensor<2xf64>",
                  "%r = nn.gelu %a : tensor<2xf64>"),
             {0.841191990607, -0.158808009393}, 1e-9);
  // silu(1) = 1 / (1 + e^-1).
  expectNear(run1("tensor<1xf64>", {1.0}, "tensor<1xf64>",
                  "%r = nn.silu %a : tensor<1xf64>"),
             {0.731058578630}, 1e-9);
  expectNear(run1("tensor<2xf64>", {4.0, 0.25}, "tensor<2xf64>",
                  "%r = nn.sqrt %a : tensor<2xf64>"),
             {2.0, 0.5});
  expectNear(run1("tensor<2xf64>", {4.0, 0.25}, "tensor<2xf64>",
                  "%r = nn.rsqrt %a : tensor<2xf64>"),
             {0.5, 2.0});
  expectNear(run1("tensor<2xf64>", {1.0, std::exp(2.0)}, "tensor<2xf64>",
                  "%r = nn.log %a : tensor<2xf64>"),
             {0.0, 2.0});
  expectNear(run1("tensor<2xf64>", {2.0, 3.0}, "tensor<2xf64>",
                  "%r = nn.pow %a, 3.0 : tensor<2xf64>"),
             {8.0, 27.0});
  expectNear(u("nn.sin"), {std::sin(-1.0), 0.0, std::sin(0.5), std::sin(2.0)});
  expectNear(u("nn.cos"), {std::cos(-1.0), 1.0, std::cos(0.5), std::cos(2.0)});
}

// erf and erfc against tabulated values (Abramowitz and Stegun 7.1; erfc(3)
// = 2.209049699858544e-05): in f64 within a few units of double's last
// place, so 1e-15 relative; erfc keeps its relative accuracy where 1 - erf
// would have none (erfc(6) = 2.15e-17 next to 1 - erf(6) = 0 in double).
TEST(EvalElementwise, ErrorFunctions) {
  std::vector<double> x = {-1.0, 0.0, 0.5, 3.0, 6.0};
  auto u = [&](const std::string &op) {
    return run1("tensor<5xf64>", x, "tensor<5xf64>",
                "%r = " + op + " %a : tensor<5xf64>");
  };
  std::vector<double> erf = u("nn.erf"), erfc = u("nn.erfc");
  std::vector<double> wantErf = {-0.8427007929497149, 0.0, 0.5204998778130465,
                                 0.9999779095030014, 1.0};
  std::vector<double> wantErfc = {1.8427007929497149, 1.0, 0.4795001221869535,
                                  2.209049699858544e-05,
                                  2.1519736712498913e-17};
  ASSERT_EQ(erf.size(), 5u);
  ASSERT_EQ(erfc.size(), 5u);
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_NEAR(erf[i], wantErf[i], 1e-15 * std::fabs(wantErf[i]))
        << "erf(" << x[i] << ")";
    EXPECT_NEAR(erfc[i], wantErfc[i], 1e-15 * wantErfc[i])
        << "erfc(" << x[i] << ")";
  }
  // In f32 the double result is rounded once: erf(0.5) to the nearest
  // float, 0.5204998850822449 (the double is 0.5204998778130465).
  std::vector<double> f = run1("tensor<1xf32>", {0.5}, "tensor<1xf32>",
                               "%r = nn.erf %a : tensor<1xf32>");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0], static_cast<double>(static_cast<float>(0.5204998778130465)));
}

// stop_gradient is the identity on values, bit for bit (NaN, infinity,
// negative zero and a subnormal included).
TEST(EvalElementwise, StopGradientIsTheIdentity) {
  std::vector<double> x = {-1.5, -0.0, std::nan(""), HUGE_VAL, 1e-40, 3.25};
  std::vector<double> y = run1("tensor<6xf32>", x, "tensor<6xf32>",
                               "%r = nn.stop_gradient %a : tensor<6xf32>");
  ASSERT_EQ(y.size(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    double want = static_cast<float>(x[i]);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(y[i]));
      continue;
    }
    EXPECT_EQ(y[i], want) << "element " << i;
    EXPECT_EQ(std::signbit(y[i]), std::signbit(want)) << "element " << i;
  }
}

TEST(EvalElementwise, MaximumMinimumPropagateNaN) {
  double nan = std::nan("");
  std::vector<double> max =
      run2("tensor<3xf32>", {1, nan, -2}, "tensor<f32>", {0}, "tensor<3xf32>",
           "%r = nn.maximum %a, %b : tensor<3xf32>, tensor<f32> -> "
           "tensor<3xf32>");
  EXPECT_EQ(max[0], 1.0);
  EXPECT_TRUE(std::isnan(max[1]));
  EXPECT_EQ(max[2], 0.0);
  std::vector<double> min =
      run2("tensor<3xf32>", {1, nan, -2}, "tensor<f32>", {0}, "tensor<3xf32>",
           "%r = nn.minimum %a, %b : tensor<3xf32>, tensor<f32> -> "
           "tensor<3xf32>");
  EXPECT_EQ(min[0], 0.0);
  EXPECT_TRUE(std::isnan(min[1]));
  EXPECT_EQ(min[2], -2.0);
}

TEST(EvalElementwise, BroadcastingBinaryOps) {
  // [2x3] + [3] and [2x1] * [1x3].
  expectNear(run2("tensor<2x3xf32>", iota(6), "tensor<3xf32>", {10, 20, 30},
                  "tensor<2x3xf32>",
                  "%r = nn.add %a, %b : tensor<2x3xf32>, tensor<3xf32> -> "
                  "tensor<2x3xf32>"),
             {10, 21, 32, 13, 24, 35});
  expectNear(run2("tensor<2x1xf32>", {1, 2}, "tensor<1x3xf32>", {3, 4, 5},
                  "tensor<2x3xf32>",
                  "%r = nn.mul %a, %b : tensor<2x1xf32>, tensor<1x3xf32> -> "
                  "tensor<2x3xf32>"),
             {3, 4, 5, 6, 8, 10});
  expectNear(run2("tensor<2x2xf32>", {1, 2, 3, 4}, "tensor<f32>", {2},
                  "tensor<2x2xf32>",
                  "%r = nn.sub %a, %b : tensor<2x2xf32>, tensor<f32> -> "
                  "tensor<2x2xf32>"),
             {-1, 0, 1, 2});
  expectNear(run2("tensor<2xf32>", {1, 3}, "tensor<2xf32>", {2, 4},
                  "tensor<2xf32>",
                  "%r = nn.div %a, %b : tensor<2xf32>, tensor<2xf32> -> "
                  "tensor<2xf32>"),
             {0.5, 0.75});
}

TEST(EvalMatmul, TwoDimensionalAndTransposed) {
  // [[0,1,2],[3,4,5]] · [[0,1],[2,3],[4,5]] = [[10,13],[28,40]].
  std::string mm = "%r = nn.matmul %a, %b : tensor<2x3xf32>, tensor<3x2xf32> "
                   "-> tensor<2x2xf32>";
  expectNear(run2("tensor<2x3xf32>", iota(6), "tensor<3x2xf32>", iota(6),
                  "tensor<2x2xf32>", mm),
             {10, 13, 28, 40});
  // The same product with both operands stored transposed.
  expectNear(run2("tensor<3x2xf32>", {0, 3, 1, 4, 2, 5}, "tensor<2x3xf32>",
                  {0, 2, 4, 1, 3, 5}, "tensor<2x2xf32>",
                  "%r = nn.matmul %a, %b {transpose_lhs, transpose_rhs} : "
                  "tensor<3x2xf32>, tensor<2x3xf32> -> tensor<2x2xf32>"),
             {10, 13, 28, 40});
}

TEST(EvalMatmul, BatchedAndSharedRhs) {
  // Batch 1 multiplies by 2·I, batch 0 by I.
  expectNear(run2("tensor<2x1x2xf32>", {1, 2, 3, 4}, "tensor<2x2x2xf32>",
                  {1, 0, 0, 1, 2, 0, 0, 2}, "tensor<2x1x2xf32>",
                  "%r = nn.matmul %a, %b : tensor<2x1x2xf32>, "
                  "tensor<2x2x2xf32> -> tensor<2x1x2xf32>"),
             {1, 2, 6, 8});
  // A 2-D rhs shared by both batches: swaps the two columns.
  expectNear(run2("tensor<2x1x2xf32>", {1, 2, 3, 4}, "tensor<2x2xf32>",
                  {0, 1, 1, 0}, "tensor<2x1x2xf32>",
                  "%r = nn.matmul %a, %b : tensor<2x1x2xf32>, "
                  "tensor<2x2xf32> -> tensor<2x1x2xf32>"),
             {2, 1, 4, 3});
}

TEST(EvalNormalization, SoftmaxRowsSumToOne) {
  auto r =
      run1("tensor<2x3xf64>", {1, 2, 3, 1000, 1000, 1000}, "tensor<2x3xf64>",
           "%r = nn.softmax %a {axis = 1 : i64} : tensor<2x3xf64>");
  ASSERT_EQ(r.size(), 6u);
  double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  expectNear(r,
             {std::exp(1.0) / z, std::exp(2.0) / z, std::exp(3.0) / z, 1.0 / 3,
              1.0 / 3, 1.0 / 3},
             1e-12);
  EXPECT_NEAR(r[0] + r[1] + r[2], 1.0, 1e-12);
  // Along axis 0, and log_softmax = log(softmax).
  auto l =
      run1("tensor<2x3xf64>", {1, 2, 3, 1000, 1000, 1000}, "tensor<2x3xf64>",
           "%r = nn.log_softmax %a {axis = 1 : i64} : tensor<2x3xf64>");
  for (int i = 0; i < 6; ++i)
    EXPECT_NEAR(l[i], std::log(r[i]), 1e-12);
  auto c = run1("tensor<2x2xf64>", {0, 5, 0, 5}, "tensor<2x2xf64>",
                "%r = nn.softmax %a {axis = 0 : i64} : tensor<2x2xf64>");
  expectNear(c, {0.5, 0.5, 0.5, 0.5});
}

TEST(EvalNormalization, LayerNormHasMeanZeroVarianceOne) {
  Program p = parse(R"(
    func.func @f(%x: tensor<2x4xf64>, %w: tensor<4xf64>, %b: tensor<4xf64>) -> tensor<2x4xf64> {
      %r = nn.layer_norm %x, %w, %b {epsilon = 1.0e-300 : f64} : tensor<2x4xf64>, tensor<4xf64>, tensor<4xf64>
      return %r : tensor<2x4xf64>
    })");
  ASSERT_TRUE(p.module);
  auto *ctx = p.context.get();
  auto r =
      evaluate(p, {tensorOf(ctx, "tensor<2x4xf64>", {1, 2, 3, 4, -5, 0, 5, 10}),
                   tensorOf(ctx, "tensor<4xf64>", {1, 1, 1, 1}),
                   tensorOf(ctx, "tensor<4xf64>", {0, 0, 0, 0})});
  ASSERT_EQ(r.size(), 1u);
  for (int row = 0; row < 2; ++row) {
    double mean = 0, var = 0;
    for (int j = 0; j < 4; ++j)
      mean += r[0].data[row * 4 + j] / 4;
    for (int j = 0; j < 4; ++j)
      var += std::pow(r[0].data[row * 4 + j] - mean, 2) / 4; // biased
    EXPECT_NEAR(mean, 0.0, 1e-12);
    EXPECT_NEAR(var, 1.0, 1e-12);
  }
  // (1 - 2.5) / sqrt(1.25) with weight 2 and bias 1.
  auto a =
      evaluate(p, {tensorOf(ctx, "tensor<2x4xf64>", {1, 2, 3, 4, 0, 0, 0, 0}),
                   tensorOf(ctx, "tensor<4xf64>", {2, 2, 2, 2}),
                   tensorOf(ctx, "tensor<4xf64>", {1, 1, 1, 1})});
  ASSERT_EQ(a.size(), 1u);
  EXPECT_NEAR(a[0].data[0], -1.5 / std::sqrt(1.25) * 2 + 1, 1e-12);
}

TEST(EvalNormalization, RmsNorm) {
  auto r = run2("tensor<1x2xf64>", {3, 4}, "tensor<2xf64>", {1, 2},
                "tensor<1x2xf64>",
                "%r = nn.rms_norm %a, %b {epsilon = 1.0e-300 : f64} : "
                "tensor<1x2xf64>, tensor<2xf64>");
  double rms = std::sqrt(12.5);
  expectNear(r, {3 / rms, 8 / rms}, 1e-12);
}

TEST(EvalModel, CrossEntropyOfUniformLogitsIsLogV) {
  auto r = run2("tensor<2x3x7xf32>", std::vector<double>(42, 0.25),
                "tensor<2x3xi32>", {0, 1, 2, 3, 4, 6}, "tensor<f32>",
                "%r = nn.cross_entropy %a, %b : tensor<2x3x7xf32>, "
                "tensor<2x3xi32> -> tensor<f32>");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_NEAR(r[0], std::log(7.0), 1e-6);
  // Hand-computed: logits [0, ln 3] → p(target 1) = 3/4.
  auto h = run2("tensor<1x2xf64>", {0, std::log(3.0)}, "tensor<1xi64>", {1},
                "tensor<f64>",
                "%r = nn.cross_entropy %a, %b : tensor<1x2xf64>, "
                "tensor<1xi64> -> tensor<f64>");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_NEAR(h[0], -std::log(0.75), 1e-12);
}

// one_hot: a row per id with 1 at the id, for ids of any shape and type,
// into any float type; taken with mul and reduce_sum it picks an element
// per row (jnp.take_along_axis).
TEST(EvalModel, OneHot) {
  auto h = run1("tensor<2x2xi32>", {2, 0, 3, 1}, "tensor<2x2x4xf32>",
                "%r = nn.one_hot %a {classes = 4 : i64} : tensor<2x2xi32> -> "
                "tensor<2x2x4xf32>");
  EXPECT_EQ(
      h, (std::vector<double>{0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0}));
  auto s = run1("tensor<i64>", {0}, "tensor<1xbf16>",
                "%r = nn.one_hot %a {classes = 1 : i64} : tensor<i64> -> "
                "tensor<1xbf16>");
  EXPECT_EQ(s, (std::vector<double>{1}));
  auto picked =
      run2("tensor<2x3xf64>", {0.5, 1.5, 2.5, 3.5, 4.5, 5.5}, "tensor<2xi32>",
           {2, 0}, "tensor<2xf64>",
           "%h = nn.one_hot %b {classes = 3 : i64} : tensor<2xi32> -> "
           "tensor<2x3xf64>\n"
           "%m = nn.mul %h, %a : tensor<2x3xf64>, tensor<2x3xf64> -> "
           "tensor<2x3xf64>\n"
           "%r = nn.reduce_sum %m [1] : tensor<2x3xf64> -> tensor<2xf64>");
  EXPECT_EQ(picked, (std::vector<double>{2.5, 3.5}));
}

// Ids outside [0, classes) are errors naming the op, the id, its position
// and the range, as nn.embedding's (negative ids too).
TEST(EvalModel, OneHotBadIdsAreErrors) {
  Program p = parse(R"(
    func.func @f(%ids: tensor<3xi32>) -> tensor<3x4xf32> {
      %r = nn.one_hot %ids {classes = 4 : i64} : tensor<3xi32> -> tensor<3x4xf32>
      return %r : tensor<3x4xf32>
    })");
  ASSERT_TRUE(p.module);
  auto *ctx = p.context.get();
  std::string e = evaluateError(p, {tensorOf(ctx, "tensor<3xi32>", {0, 3, 4})});
  EXPECT_NE(e.find("nn.one_hot"), std::string::npos) << e;
  EXPECT_NE(e.find("id 4 at position 2"), std::string::npos) << e;
  EXPECT_NE(e.find("[0, 4)"), std::string::npos) << e;
  EXPECT_NE(e.find(":3:"), std::string::npos) << "location: " << e;
  std::string negative =
      evaluateError(p, {tensorOf(ctx, "tensor<3xi32>", {-1, 0, 0})});
  EXPECT_NE(negative.find("id -1 at position 0"), std::string::npos)
      << negative;
}

TEST(EvalModel, BadIdsAreErrorsNamingTheOp) {
  Program p = parse(R"(
    func.func @f(%t: tensor<3x2xf32>, %ids: tensor<2xi32>) -> tensor<2x2xf32> {
      %r = nn.embedding %t, %ids : tensor<3x2xf32>, tensor<2xi32> -> tensor<2x2xf32>
      return %r : tensor<2x2xf32>
    }
    func.func @g(%l: tensor<2x3xf32>, %t: tensor<2xi32>) -> tensor<f32> {
      %r = nn.cross_entropy %l, %t : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
      return %r : tensor<f32>
    })");
  ASSERT_TRUE(p.module);
  auto *ctx = p.context.get();
  std::string e = evaluateError(p, {tensorOf(ctx, "tensor<3x2xf32>", iota(6)),
                                    tensorOf(ctx, "tensor<2xi32>", {1, 3})});
  EXPECT_NE(e.find("nn.embedding"), std::string::npos) << e;
  EXPECT_NE(e.find("id 3 at position 1"), std::string::npos) << e;
  EXPECT_NE(e.find("[0, 3)"), std::string::npos) << e;
  EXPECT_NE(e.find(":3:"), std::string::npos) << "location: " << e;
  auto ok = evaluate(p, {tensorOf(ctx, "tensor<3x2xf32>", iota(6)),
                         tensorOf(ctx, "tensor<2xi32>", {2, 0})});
  ASSERT_EQ(ok.size(), 1u);
  EXPECT_EQ(ok[0].data, (std::vector<double>{4, 5, 0, 1}));

  e = evaluateError(p,
                    {tensorOf(ctx, "tensor<2x3xf32>", iota(6)),
                     tensorOf(ctx, "tensor<2xi32>", {0, -1})},
                    "g");
  EXPECT_NE(e.find("target -1 at position 1"), std::string::npos) << e;
}

TEST(EvalModel, CausalAttentionMatchesAHandComputation) {
  // One batch, one head of dim 1, two positions: q = k = [1, 2], v = [10, 20],
  // scale 1. Position 0 sees only key 0; position 1 sees both with weights
  // softmax([2, 4]).
  Program p = parse(R"(
    func.func @f(%q: tensor<1x2x1xf64>) -> tensor<1x2x1xf64> {
      %v = nn.constant dense<[[[10.0], [20.0]]]> : tensor<1x2x1xf64>
      %r = nn.attention %q, %q, %v {causal, heads = 1 : i64, scale = 1.0 : f64} : tensor<1x2x1xf64>, tensor<1x2x1xf64>, tensor<1x2x1xf64> -> tensor<1x2x1xf64>
      return %r : tensor<1x2x1xf64>
    })");
  ASSERT_TRUE(p.module);
  auto r =
      evaluate(p, {tensorOf(p.context.get(), "tensor<1x2x1xf64>", {1, 2})});
  ASSERT_EQ(r.size(), 1u);
  double w0 = std::exp(2.0) / (std::exp(2.0) + std::exp(4.0));
  expectNear(r[0].data, {10.0, w0 * 10 + (1 - w0) * 20}, 1e-12);
}

TEST(EvalReduction, SumMeanMaxWithKeepdims) {
  std::string type = "tensor<2x3xf32>";
  expectNear(
      run1(type, iota(6), "tensor<2xf32>",
           "%r = nn.reduce_sum %a [1] : tensor<2x3xf32> -> tensor<2xf32>"),
      {3, 12});
  expectNear(run1(type, iota(6), "tensor<1x3xf32>",
                  "%r = nn.reduce_mean %a [0] keepdims : tensor<2x3xf32> -> "
                  "tensor<1x3xf32>"),
             {1.5, 2.5, 3.5});
  expectNear(run1(type, {3, -1, 7, 2, 9, 0}, "tensor<f32>",
                  "%r = nn.reduce_max %a [0, 1] : tensor<2x3xf32> -> "
                  "tensor<f32>"),
             {9});
  expectNear(run1("tensor<2x2x2xf32>", iota(8), "tensor<2xf32>",
                  "%r = nn.reduce_sum %a [0, 2] : tensor<2x2x2xf32> -> "
                  "tensor<2xf32>"),
             {0 + 1 + 4 + 5, 2 + 3 + 6 + 7});
}

TEST(EvalShape, ReshapeTransposeBroadcast) {
  expectNear(run1("tensor<2x3xf32>", iota(6), "tensor<3x2xf32>",
                  "%r = nn.reshape %a : tensor<2x3xf32> to tensor<3x2xf32>"),
             iota(6));
  expectNear(run1("tensor<2x3xf32>", iota(6), "tensor<3x2xf32>",
                  "%r = nn.transpose %a, [1, 0] : tensor<2x3xf32> -> "
                  "tensor<3x2xf32>"),
             {0, 3, 1, 4, 2, 5});
  // [2x1x3] → [3x2x1] with permutation [2, 0, 1].
  expectNear(run1("tensor<2x1x3xf32>", iota(6), "tensor<3x2x1xf32>",
                  "%r = nn.transpose %a, [2, 0, 1] : tensor<2x1x3xf32> -> "
                  "tensor<3x2x1xf32>"),
             {0, 3, 1, 4, 2, 5});
  expectNear(run1("tensor<3xf32>", {1, 2, 3}, "tensor<2x3xf32>",
                  "%r = nn.broadcast_to %a : tensor<3xf32> to tensor<2x3xf32>"),
             {1, 2, 3, 1, 2, 3});
}

TEST(EvalShape, SliceConcatSplit) {
  // Rows 0..2 step 1, columns 1..4 step 2 of a 2x4 iota.
  expectNear(run1("tensor<2x4xf32>", iota(8), "tensor<2x2xf32>",
                  "%r = nn.slice %a [0, 1] to [2, 4] step [1, 2] : "
                  "tensor<2x4xf32> -> tensor<2x2xf32>"),
             {1, 3, 5, 7});
  expectNear(run2("tensor<2x1xf32>", {0, 1}, "tensor<2x2xf32>", {5, 6, 7, 8},
                  "tensor<2x3xf32>",
                  "%r = nn.concat %a, %b {axis = 1 : i64} : (tensor<2x1xf32>, "
                  "tensor<2x2xf32>) -> tensor<2x3xf32>"),
             {0, 5, 6, 1, 7, 8});
  expectNear(run1("tensor<2x3xf32>", iota(6), "tensor<2x2xf32>",
                  "%s:2 = nn.split %a {axis = 1 : i64, sizes = array<i64: 1, "
                  "2>} : tensor<2x3xf32> -> tensor<2x1xf32>, tensor<2x2xf32>\n"
                  "%r = nn.stage_end %s#1 : tensor<2x2xf32>"),
             {1, 2, 4, 5});
}

TEST(EvalInterpreter, ErrorsForBadFunctionsAndInputs) {
  Program p = parse(R"(
    func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
      %r = nn.neg %a : tensor<2xf32>
      return %r : tensor<2xf32>
    })");
  ASSERT_TRUE(p.module);
  auto *ctx = p.context.get();
  EXPECT_NE(evaluateError(p, {}, "missing").find("no function 'missing'"),
            std::string::npos);
  EXPECT_NE(evaluateError(p, {}).find("takes 1 input(s), got 0"),
            std::string::npos);
  std::string e = evaluateError(p, {tensorOf(ctx, "tensor<3xf32>", {1, 2, 3})});
  EXPECT_NE(e.find("must be tensor<2xf32>, got tensor<3xf32>"),
            std::string::npos)
      << e;
  e = evaluateError(p, {tensorOf(ctx, "tensor<2xi32>", {1, 2})});
  EXPECT_NE(e.find("got tensor<2xi32>"), std::string::npos) << e;
}

TEST(EvalInterpreter, UnsupportedOpIsAnError) {
  mlir::DialectRegistry registry;
  tandem::registerAllDialects(registry);
  Program p;
  p.context = std::make_unique<mlir::MLIRContext>(registry);
  p.context->allowUnregisteredDialects();
  p.module = mlir::parseSourceString<mlir::ModuleOp>(R"(
    func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
      %r = "test.unknown"(%a) : (tensor<2xf32>) -> tensor<2xf32>
      return %r : tensor<2xf32>
    })",
                                                     p.context.get());
  ASSERT_TRUE(p.module);
  std::string e =
      evaluateError(p, {tensorOf(p.context.get(), "tensor<2xf32>", {1, 2})});
  EXPECT_NE(e.find("'test.unknown': the evaluator has no kernel"),
            std::string::npos)
      << e;
}

TEST(EvalInterpreter, CallsAndSplatConstants) {
  Program p = parse(R"(
    func.func @g(%a: tensor<2xf32>) -> tensor<2xf32> {
      %c = nn.constant dense<3.0> : tensor<2xf32>
      %r = nn.mul %a, %c : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
      return %r : tensor<2xf32>
    }
    func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
      %r = func.call @g(%a) : (tensor<2xf32>) -> tensor<2xf32>
      return %r : tensor<2xf32>
    })");
  ASSERT_TRUE(p.module);
  auto r = evaluate(p, {tensorOf(p.context.get(), "tensor<2xf32>", {1, 2})});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].data, (std::vector<double>{3, 6}));
}

TEST(EvalInterpreter, F64ModeDiffersOnlyByRounding) {
  Program p = parse(R"(
    func.func @f(%a: tensor<3xf32>) -> tensor<3xf32> {
      %c = nn.constant dense<3.0> : tensor<3xf32>
      %r = nn.div %a, %c : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
      return %r : tensor<3xf32>
    })");
  ASSERT_TRUE(p.module);
  Tensor in = tensorOf(p.context.get(), "tensor<3xf32>", {1, 2, 0.5});
  auto f32 = evaluate(p, {in});
  EvalOptions wide;
  wide.f64 = true;
  auto f64 = evaluate(p, {in}, wide);
  ASSERT_EQ(f32.size(), 1u);
  ASSERT_EQ(f64.size(), 1u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(f64[0].data[i], in.data[i] / 3.0);
    EXPECT_NE(f64[0].data[i], f32[0].data[i]);
    EXPECT_EQ(f32[0].data[i],
              static_cast<double>(static_cast<float>(f64[0].data[i])));
  }
}

TEST(EvalGradientOps, GreaterEqualIsAOneZeroMaskAndNaNComparesFalse) {
  std::vector<double> r =
      run2("tensor<2x3xf32>", {1, 2, 3, NAN, -1, 0.5}, "tensor<3xf32>",
           {2, 2, NAN}, "tensor<2x3xf32>",
           "%r = nn.greater_equal %a, %b : tensor<2x3xf32>, tensor<3xf32> -> "
           "tensor<2x3xf32>");
  EXPECT_EQ(r, (std::vector<double>{0, 1, 0, 0, 0, 0}));
}

// nn.select must reproduce the chosen operand bit for bit, infinities and
// NaN included, so a skipped training step leaves parameters unchanged; the
// condition broadcasts (a rank-0 condition picks a whole tensor).
TEST(EvalElementwise, SelectCopiesTheChosenOperandExactly) {
  Program program = parse(R"(
func.func @f(%c: tensor<3xf32>, %a: tensor<2x3xf16>, %b: tensor<2x3xf16>,
             %s: tensor<f32>) -> (tensor<2x3xf16>, tensor<2x3xf16>) {
  %r = nn.select %c, %a, %b : tensor<3xf32>, tensor<2x3xf16>
  %t = nn.select %s, %a, %b : tensor<f32>, tensor<2x3xf16>
  return %r, %t : tensor<2x3xf16>, tensor<2x3xf16>
})");
  ASSERT_TRUE(program.module);
  mlir::MLIRContext *context = program.context.get();
  double inf = INFINITY, nan = NAN;
  std::vector<Tensor> inputs;
  inputs.push_back(tensorOf(context, "tensor<3xf32>", {1, 0, nan}));
  inputs.push_back(
      tensorOf(context, "tensor<2x3xf16>", {inf, 2.5, -3, nan, 0.125, 7}));
  inputs.push_back(
      tensorOf(context, "tensor<2x3xf16>", {-1, -inf, 9, 4, nan, -0.0}));
  inputs.push_back(tensorOf(context, "tensor<f32>", {0}));
  std::vector<Tensor> results = evaluate(program, std::move(inputs));
  ASSERT_EQ(results.size(), 2u);
  // A NaN condition counts as non-zero.
  const std::vector<double> &r = results[0].data;
  EXPECT_EQ(r[0], inf);
  EXPECT_EQ(r[1], -inf);
  EXPECT_EQ(r[2], -3.0);
  EXPECT_TRUE(std::isnan(r[3]));
  EXPECT_TRUE(std::isnan(r[4]));
  EXPECT_EQ(r[5], 7.0);
  const std::vector<double> &t = results[1].data;
  EXPECT_EQ(t[0], -1.0);
  EXPECT_EQ(t[1], -inf);
  EXPECT_EQ(t[2], 9.0);
  EXPECT_EQ(t[3], 4.0);
  EXPECT_TRUE(std::isnan(t[4]));
  EXPECT_EQ(t[5], 0.0);
  EXPECT_TRUE(std::signbit(t[5]));
}

TEST(EvalGradientOps, EmbeddingGradAddsRowsOfRepeatedIds) {
  Program p = parse(R"(
    func.func @f(%d: tensor<3x2xf32>, %ids: tensor<3xi32>) -> tensor<4x2xf32> {
      %r = nn.embedding_grad %d, %ids : tensor<3x2xf32>, tensor<3xi32> -> tensor<4x2xf32>
      return %r : tensor<4x2xf32>
    })");
  ASSERT_TRUE(p.module);
  auto *ctx = p.context.get();
  auto r = evaluate(p, {tensorOf(ctx, "tensor<3x2xf32>", {1, 2, 3, 4, 5, 6}),
                        tensorOf(ctx, "tensor<3xi32>", {2, 0, 2})});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].data, (std::vector<double>{3, 4, 0, 0, 6, 8, 0, 0}));
  std::string e = evaluateError(p, {tensorOf(ctx, "tensor<3x2xf32>", iota(6)),
                                    tensorOf(ctx, "tensor<3xi32>", {0, 4, 1})});
  EXPECT_NE(e.find("nn.embedding_grad"), std::string::npos) << e;
  EXPECT_NE(e.find("id 4 at position 1"), std::string::npos) << e;
}

TEST(EvalGradientOps, CrossEntropyGradIsSoftmaxMinusOneHotOverN) {
  Program p = parse(R"(
    func.func @f(%l: tensor<2x3xf32>, %t: tensor<2xi32>, %g: tensor<f32>) -> tensor<2x3xf32> {
      %r = nn.cross_entropy_grad %l, %t, %g : tensor<2x3xf32>, tensor<2xi32>, tensor<f32> -> tensor<2x3xf32>
      return %r : tensor<2x3xf32>
    })");
  ASSERT_TRUE(p.module);
  auto *ctx = p.context.get();
  EvalOptions wide;
  wide.f64 = true;
  auto r = evaluate(p,
                    {tensorOf(ctx, "tensor<2x3xf32>", {0, 0, 0, 1000, 0, 0}),
                     tensorOf(ctx, "tensor<2xi32>", {1, 0}),
                     tensorOf(ctx, "tensor<f32>", {4})},
                    wide);
  ASSERT_EQ(r.size(), 1u);
  // Row 0: (1/3 - onehot) * 4 / 2; row 1: softmax is (1, 0, 0) without
  // overflow, so the target's entry is exactly 0.
  std::vector<double> expected = {2.0 / 3, 2.0 / 3 - 2, 2.0 / 3, 0, 0, 0};
  for (int i = 0; i < 6; ++i)
    EXPECT_NEAR(r[0].data[i], expected[i], 1e-12) << i;
  std::string e = evaluateError(p, {tensorOf(ctx, "tensor<2x3xf32>", iota(6)),
                                    tensorOf(ctx, "tensor<2xi32>", {3, 0}),
                                    tensorOf(ctx, "tensor<f32>", {1})});
  EXPECT_NE(e.find("target 3 at position 0"), std::string::npos) << e;
}

TEST(EvalRegistry, ExportsEveryKernelName) {
  std::vector<std::string> ops = supportedOps();
  for (const char *name : {"nn.attention", "nn.matmul", "func.return",
                           "func.call", "nn.parameter"})
    EXPECT_TRUE(llvm::is_contained(ops, name)) << name;
  EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end()));
}

} // namespace
