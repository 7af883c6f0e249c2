//===- AutodiffTest.cpp - nn-autodiff against finite differences ----------===//
//
// Every gradient rule is checked against central differences through the
// reference evaluator's f64 mode: a small program applies the op to
// parameters with random values, the loss is sum(op(...) * w) for random
// weights w (a function argument), and the gradients @forward_grad returns
// are compared with (L(p + h) - L(p - h)) / 2h per element, h = 1e-6, as a
// whole-tensor relative error ‖a − b‖ / ‖b‖. The tiny MLP and a 2-layer GPT
// are checked end to end.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/NN/Transforms/Autodiff.h"
#include "tandem/Dialect/NN/IR/NNOps.h"
#include "tandem/Dialect/NN/Transforms/Passes.h"
#include "tandem/Eval/Interpreter.h"
#include "tandem/Eval/Parameters.h"
#include "tandem/InitAll.h"
#include "tandem/Models/Config.h"
#include "tandem/Models/GPT.h"
#include "tandem/Models/MLP.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

#include "gtest/gtest.h"

#include <cmath>
#include <iostream>
#include <random>
#include <set>

using namespace tandem;
using namespace tandem::eval;

namespace {

std::unique_ptr<mlir::MLIRContext> makeContext() {
  mlir::DialectRegistry registry;
  tandem::registerAllDialects(registry);
  auto context = std::make_unique<mlir::MLIRContext>(registry);
  context->loadAllAvailableDialects();
  return context;
}

/// Runs nn-autodiff on @forward; false (and a test failure) on error. With
/// `fusedAttention`, nn.attention is differentiated by nn.attention_grad
/// (its gradient rule) instead of through its decomposition.
bool differentiate(mlir::ModuleOp module, bool fusedAttention = false) {
  mlir::PassManager pm(module.getContext());
  tandem::nn::NNAutodiffOptions options;
  options.decomposeAttention = !fusedAttention;
  pm.addPass(tandem::nn::createNNAutodiff(options));
  if (mlir::failed(pm.run(module))) {
    ADD_FAILURE() << "nn-autodiff failed";
    return false;
  }
  return true;
}

/// Random values in [low, high) for every element of `tensor`.
void fill(Tensor &tensor, std::mt19937_64 &rng, double low, double high) {
  std::uniform_real_distribution<double> dist(low, high);
  for (double &x : tensor.data)
    x = dist(rng);
}

double norm(const std::vector<double> &v) {
  double s = 0.0;
  for (double x : v)
    s += x * x;
  return std::sqrt(s);
}

/// ‖a − b‖ / ‖b‖ (‖a‖ when b is zero).
double relativeError(const std::vector<double> &a,
                     const std::vector<double> &b) {
  std::vector<double> diff(a.size());
  for (size_t i = 0; i < a.size(); ++i)
    diff[i] = a[i] - b[i];
  double nb = norm(b);
  return nb == 0.0 ? norm(diff) : norm(diff) / nb;
}

/// Compares @forward_grad's gradients with central differences of @forward
/// for every parameter; returns the largest relative error.
double checkGradients(mlir::ModuleOp module, ParameterMap parameters,
                      const std::vector<Tensor> &inputs, double tolerance,
                      const std::string &what, bool fusedAttention = false) {
  if (!differentiate(module, fusedAttention))
    return INFINITY;
  auto grad = module.lookupSymbol<mlir::func::FuncOp>("forward_grad");
  if (!grad) {
    ADD_FAILURE() << what << ": no @forward_grad";
    return INFINITY;
  }
  Interpreter interpreter(module, EvalOptions{.f64 = true});
  interpreter.setParameters(parameters);
  auto results = interpreter.run("forward_grad", inputs);
  if (!results) {
    ADD_FAILURE() << what << ": " << llvm::toString(results.takeError());
    return INFINITY;
  }
  auto names = grad->getAttrOfType<mlir::ArrayAttr>("nn.gradients");
  EXPECT_TRUE(names) << what;
  if (!names)
    return INFINITY;
  EXPECT_EQ(names.size() + 1, results->size()) << what;
  auto loss = [&]() -> double {
    auto out = interpreter.run("forward", inputs);
    if (!out) {
      ADD_FAILURE() << what << ": " << llvm::toString(out.takeError());
      return NAN;
    }
    return out->at(0).data.at(0);
  };
  // The same loss, up to constants the decomposition of attention rounds to
  // the element type (its scale).
  double forwardLoss = loss();
  EXPECT_NEAR(results->at(0).data.at(0), forwardLoss,
              1e-7 * std::max(1.0, std::fabs(forwardLoss)))
      << what;
  const double h = 1e-6;
  double worst = 0.0;
  for (auto [i, attr] : llvm::enumerate(names)) {
    std::string name =
        llvm::cast<mlir::FlatSymbolRefAttr>(attr).getValue().str();
    const Tensor &analytic = results->at(i + 1);
    Tensor &value = interpreter.getParameters()[name];
    EXPECT_EQ(analytic.shape, value.shape) << what << " @" << name;
    std::vector<double> numeric(value.data.size());
    for (size_t e = 0; e < value.data.size(); ++e) {
      double saved = value.data[e];
      value.data[e] = saved + h;
      double up = loss();
      value.data[e] = saved - h;
      double down = loss();
      value.data[e] = saved;
      numeric[e] = (up - down) / (2 * h);
    }
    double error = relativeError(analytic.data, numeric);
    worst = std::max(worst, error);
    EXPECT_LE(error, tolerance)
        << what << ": gradient of @" << name << " has relative error " << error;
  }
  return worst;
}

//===----------------------------------------------------------------------===//
// One op at a time
//===----------------------------------------------------------------------===//

/// A program `source` whose parameters get random values in [low, high),
/// whose float arguments get random values in [-1, 1), and whose integer
/// arguments get `ids` (cycled).
struct OpCase {
  std::string name;
  std::string source;
  double low = -1.0, high = 1.0;
  std::vector<double> ids = {};
  double tolerance = 1e-6;
  /// nn.attention through nn.attention_grad, not its decomposition.
  bool fusedAttention = false;
};

void PrintTo(const OpCase &c, std::ostream *os) { *os << c.name; }

std::string unarySource(const std::string &op) {
  return R"(
nn.parameter @x : tensor<3x4xf32> = zeros
func.func @forward(%w: tensor<3x4xf32>) -> tensor<f32> {
  %x = nn.param @x : tensor<3x4xf32>
  %y = nn.)" +
         op + R"( %x : tensor<3x4xf32>
  %p = nn.mul %y, %w : tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
  %l = nn.reduce_sum %p [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
})";
}

/// The op applied with both broadcasting directions.
std::string binarySource(const std::string &op) {
  return R"(
nn.parameter @a : tensor<3x4xf32> = zeros
nn.parameter @b : tensor<4xf32> = zeros
nn.parameter @c : tensor<3x1xf32> = zeros
func.func @forward(%w: tensor<3x4xf32>) -> tensor<f32> {
  %a = nn.param @a : tensor<3x4xf32>
  %b = nn.param @b : tensor<4xf32>
  %c = nn.param @c : tensor<3x1xf32>
  %y = nn.)" +
         op + R"( %a, %b : tensor<3x4xf32>, tensor<4xf32> -> tensor<3x4xf32>
  %z = nn.)" +
         op + R"( %c, %y : tensor<3x1xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
  %p = nn.mul %z, %w : tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
  %l = nn.reduce_sum %p [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
})";
}

/// Every transpose combination of a matmul. `lhsBatch`/`rhsBatch` are
/// leading dimensions ("" or e.g. "2x"): equal for a batched product, empty
/// rhs for a 2-D weight shared across the batch.
std::string matmulSource(const std::string &lhsBatch,
                         const std::string &rhsBatch) {
  auto t = [](const std::string &batch, const char *dims) {
    return "tensor<" + batch + dims + "xf32>";
  };
  std::string a = t(lhsBatch, "3x4"), at = t(lhsBatch, "4x3");
  std::string b = t(rhsBatch, "4x5"), bt = t(rhsBatch, "5x4");
  std::string y = t(lhsBatch, "3x5");
  std::string axes = lhsBatch.empty() ? "[0, 1]" : "[0, 1, 2]";
  auto mm = [&](const char *result, const char *lhs, const std::string &lt,
                const char *rhs, const std::string &rt, const char *flags) {
    return std::string("  ") + result + " = nn.matmul " + lhs + ", " + rhs +
           flags + " : " + lt + ", " + rt + " -> " + y + "\n";
  };
  auto bin = [&](const char *result, const char *op, const char *lhs,
                 const char *rhs) {
    return std::string("  ") + result + " = nn." + op + " " + lhs + ", " + rhs +
           " : " + y + ", " + y + " -> " + y + "\n";
  };
  return "nn.parameter @a : " + a + " = zeros\n" + "nn.parameter @b : " + b +
         " = zeros\n" + "nn.parameter @at : " + at + " = zeros\n" +
         "nn.parameter @bt : " + bt + " = zeros\n" +
         "func.func @forward(%w: " + y + ") -> tensor<f32> {\n" +
         "  %a = nn.param @a : " + a + "\n" + "  %b = nn.param @b : " + b +
         "\n" + "  %at = nn.param @at : " + at + "\n" +
         "  %bt = nn.param @bt : " + bt + "\n" +
         mm("%y0", "%a", a, "%b", b, "") +
         mm("%y1", "%at", at, "%b", b, " {transpose_lhs}") +
         mm("%y2", "%a", a, "%bt", bt, " {transpose_rhs}") +
         mm("%y3", "%at", at, "%bt", bt, " {transpose_lhs, transpose_rhs}") +
         bin("%s0", "add", "%y0", "%y1") + bin("%s1", "mul", "%y2", "%y3") +
         bin("%s", "add", "%s0", "%s1") + bin("%p", "mul", "%s", "%w") +
         "  %l = nn.reduce_sum %p " + axes + " : " + y + " -> tensor<f32>\n" +
         "  return %l : tensor<f32>\n}\n";
}

/// Causal attention on two heads, then attention on one head with a scale.
const std::string attentionSource = R"(
nn.parameter @q : tensor<2x3x4xf32> = zeros
nn.parameter @k : tensor<2x3x4xf32> = zeros
nn.parameter @v : tensor<2x3x4xf32> = zeros
func.func @forward(%w: tensor<2x3x4xf32>) -> tensor<f32> {
  %q = nn.param @q : tensor<2x3x4xf32>
  %k = nn.param @k : tensor<2x3x4xf32>
  %v = nn.param @v : tensor<2x3x4xf32>
  %y = nn.attention %q, %k, %v {causal, heads = 2 : i64} : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %z = nn.attention %y, %k, %v {heads = 1 : i64, scale = 0.7 : f64} : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %p = nn.mul %z, %w : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %l = nn.reduce_sum %p [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
})";

/// Causal grouped-query attention (4 query heads of 2, key and value of 2
/// heads), then non-causal attention with a single key and value head.
const std::string groupedAttentionSource = R"(
nn.parameter @q : tensor<2x3x8xf32> = zeros
nn.parameter @k : tensor<2x3x4xf32> = zeros
nn.parameter @v : tensor<2x3x4xf32> = zeros
nn.parameter @k1 : tensor<2x4x2xf32> = zeros
nn.parameter @v1 : tensor<2x4x2xf32> = zeros
func.func @forward(%w: tensor<2x3x8xf32>) -> tensor<f32> {
  %q = nn.param @q : tensor<2x3x8xf32>
  %k = nn.param @k : tensor<2x3x4xf32>
  %v = nn.param @v : tensor<2x3x4xf32>
  %k1 = nn.param @k1 : tensor<2x4x2xf32>
  %v1 = nn.param @v1 : tensor<2x4x2xf32>
  %y = nn.attention %q, %k, %v {causal, heads = 4 : i64, kv_heads = 2 : i64} : tensor<2x3x8xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x8xf32>
  %z = nn.attention %y, %k1, %v1 {heads = 4 : i64, kv_heads = 1 : i64, scale = 0.9 : f64} : tensor<2x3x8xf32>, tensor<2x4x2xf32>, tensor<2x4x2xf32> -> tensor<2x3x8xf32>
  %p = nn.mul %z, %w : tensor<2x3x8xf32>, tensor<2x3x8xf32> -> tensor<2x3x8xf32>
  %l = nn.reduce_sum %p [0, 1, 2] : tensor<2x3x8xf32> -> tensor<f32>
  return %l : tensor<f32>
})";

std::vector<OpCase> allCases() {
  std::vector<OpCase> cases = {
      {"neg", unarySource("neg")},
      {"exp", unarySource("exp")},
      {"log", unarySource("log"), 0.5, 2},
      {"tanh", unarySource("tanh")},
      {"sqrt", unarySource("sqrt"), 0.5, 2},
      {"rsqrt", unarySource("rsqrt"), 0.5, 2},
      {"relu", unarySource("relu")},
      {"gelu", unarySource("gelu"), -2, 2},
      {"silu", unarySource("silu"), -2, 2},
      {"sin", unarySource("sin"), -2, 2},
      {"cos", unarySource("cos"), -2, 2},
      {"erf", unarySource("erf"), -2, 2},
      {"erfc", unarySource("erfc"), -2, 2},
      // jax.nn.log_softmax: x - m - log(sum(exp(x - m))) with m the
      // stopped maximum. The value does not depend on m, so the central
      // differences see the true derivative, which the rule (no cotangent
      // through m) must give; AutodiffStopGradient checks the zero itself.
      {"stop_gradient", R"(
nn.parameter @x : tensor<3x4xf32> = zeros
func.func @forward(%w: tensor<3x4xf32>) -> tensor<f32> {
  %x = nn.param @x : tensor<3x4xf32>
  %m = nn.reduce_max %x [1] keepdims : tensor<3x4xf32> -> tensor<3x1xf32>
  %sm = nn.stop_gradient %m : tensor<3x1xf32>
  %s = nn.sub %x, %sm : tensor<3x4xf32>, tensor<3x1xf32> -> tensor<3x4xf32>
  %e = nn.exp %s : tensor<3x4xf32>
  %z = nn.reduce_sum %e [1] keepdims : tensor<3x4xf32> -> tensor<3x1xf32>
  %lz = nn.log %z : tensor<3x1xf32>
  %y = nn.sub %s, %lz : tensor<3x4xf32>, tensor<3x1xf32> -> tensor<3x4xf32>
  %p = nn.mul %y, %w : tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
  %l = nn.reduce_sum %p [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
})",
       -2, 2},
      // jnp.take_along_axis as one_hot, mul and reduce_sum: the picked
      // element's cotangent reaches only it; the ids get none.
      {"one_hot",
       R"(
nn.parameter @x : tensor<2x3x5xf32> = zeros
func.func @forward(%ids: tensor<2x3xi32>, %w: tensor<2x3xf32>) -> tensor<f32> {
  %x = nn.param @x : tensor<2x3x5xf32>
  %h = nn.one_hot %ids {classes = 5 : i64} : tensor<2x3xi32> -> tensor<2x3x5xf32>
  %m = nn.mul %h, %x : tensor<2x3x5xf32>, tensor<2x3x5xf32> -> tensor<2x3x5xf32>
  %t = nn.reduce_sum %m [2] : tensor<2x3x5xf32> -> tensor<2x3xf32>
  %s = nn.mul %t, %t : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %p = nn.mul %s, %w : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %l = nn.reduce_sum %p [0, 1] : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
})",
       -1,
       1,
       {0, 3, 3, 1, 4, 0}},
      {"add", binarySource("add")},
      {"sub", binarySource("sub")},
      {"mul", binarySource("mul")},
      {"div", binarySource("div"), 0.5, 2},
      {"maximum", binarySource("maximum")},
      {"minimum", binarySource("minimum")},
      {"pow", R"(
nn.parameter @x : tensor<3x4xf32> = zeros
func.func @forward(%w: tensor<3x4xf32>) -> tensor<f32> {
  %x = nn.param @x : tensor<3x4xf32>
  %y = nn.pow %x, 2.5 : tensor<3x4xf32>
  %z = nn.pow %y, 1.0 : tensor<3x4xf32>
  %u = nn.pow %z, 0.0 : tensor<3x4xf32>
  %v = nn.add %z, %u : tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
  %p = nn.mul %v, %w : tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
  %l = nn.reduce_sum %p [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
})",
       0.5, 2},
      {"greater_equal", R"(
nn.parameter @x : tensor<3x4xf32> = zeros
nn.parameter @y : tensor<4xf32> = zeros
func.func @forward(%w: tensor<3x4xf32>) -> tensor<f32> {
  %x = nn.param @x : tensor<3x4xf32>
  %y = nn.param @y : tensor<4xf32>
  %m = nn.greater_equal %x, %y : tensor<3x4xf32>, tensor<4xf32> -> tensor<3x4xf32>
  %z = nn.mul %m, %x : tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
  %p = nn.mul %z, %w : tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
  %l = nn.reduce_sum %p [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
})"},
      // The mask broadcasts (4 → 3x4) and both sides reach the loss.
      {"select", R"(
nn.parameter @x : tensor<3x4xf32> = zeros
nn.parameter @y : tensor<3x4xf32> = zeros
nn.parameter @c : tensor<4xf32> = zeros
func.func @forward(%w: tensor<3x4xf32>) -> tensor<f32> {
  %x = nn.param @x : tensor<3x4xf32>
  %y = nn.param @y : tensor<3x4xf32>
  %c = nn.param @c : tensor<4xf32>
  %m = nn.greater_equal %c, %c : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %z = nn.neg %c : tensor<4xf32>
  %n = nn.greater_equal %c, %z : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %s = nn.select %n, %x, %y : tensor<4xf32>, tensor<3x4xf32>
  %t = nn.select %m, %s, %y : tensor<4xf32>, tensor<3x4xf32>
  %p = nn.mul %t, %w : tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
  %l = nn.reduce_sum %p [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
})"},
      {"matmul_2d", matmulSource("", "")},
      {"matmul_batched", matmulSource("2x", "2x")},
      {"matmul_shared_rhs", matmulSource("2x", "")},
      {"softmax", R"(
nn.parameter @x : tensor<3x4xf32> = zeros
func.func @forward(%w: tensor<3x4xf32>) -> tensor<f32> {
  %x = nn.param @x : tensor<3x4xf32>
  %y = nn.softmax %x {axis = 1 : i64} : tensor<3x4xf32>
  %z = nn.softmax %y {axis = 0 : i64} : tensor<3x4xf32>
  %p = nn.mul %z, %w : tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
  %l = nn.reduce_sum %p [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
})"},
      {"log_softmax", R"(
nn.parameter @x : tensor<3x4xf32> = zeros
func.func @forward(%w: tensor<3x4xf32>) -> tensor<f32> {
  %x = nn.param @x : tensor<3x4xf32>
  %y = nn.log_softmax %x {axis = 1 : i64} : tensor<3x4xf32>
  %z = nn.log_softmax %y {axis = 0 : i64} : tensor<3x4xf32>
  %p = nn.mul %z, %w : tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
  %l = nn.reduce_sum %p [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
})"},
      {"layer_norm", R"(
nn.parameter @x : tensor<2x3x4xf32> = zeros
nn.parameter @g : tensor<4xf32> = zeros
nn.parameter @b : tensor<4xf32> = zeros
func.func @forward(%w: tensor<2x3x4xf32>) -> tensor<f32> {
  %x = nn.param @x : tensor<2x3x4xf32>
  %g = nn.param @g : tensor<4xf32>
  %b = nn.param @b : tensor<4xf32>
  %y = nn.layer_norm %x, %g, %b {epsilon = 1.0e-05 : f64} : tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>
  %p = nn.mul %y, %w : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %l = nn.reduce_sum %p [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
})"},
      {"rms_norm", R"(
nn.parameter @x : tensor<2x3x4xf32> = zeros
nn.parameter @g : tensor<4xf32> = zeros
func.func @forward(%w: tensor<2x3x4xf32>) -> tensor<f32> {
  %x = nn.param @x : tensor<2x3x4xf32>
  %g = nn.param @g : tensor<4xf32>
  %y = nn.rms_norm %x, %g {epsilon = 1.0e-06 : f64} : tensor<2x3x4xf32>, tensor<4xf32>
  %p = nn.mul %y, %w : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %l = nn.reduce_sum %p [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
})"},
      {"embedding_cross_entropy",
       R"(
nn.parameter @table : tensor<5x4xf32> = zeros
nn.parameter @head : tensor<4x5xf32> = zeros
func.func @forward(%ids: tensor<2x3xi32>, %targets: tensor<2x3xi32>) -> tensor<f32> {
  %t = nn.param @table : tensor<5x4xf32>
  %h = nn.param @head : tensor<4x5xf32>
  %x = nn.embedding %t, %ids : tensor<5x4xf32>, tensor<2x3xi32> -> tensor<2x3x4xf32>
  %y = nn.matmul %x, %h : tensor<2x3x4xf32>, tensor<4x5xf32> -> tensor<2x3x5xf32>
  %l = nn.cross_entropy %y, %targets : tensor<2x3x5xf32>, tensor<2x3xi32> -> tensor<f32>
  return %l : tensor<f32>
})",
       -1,
       1,
       {0, 3, 3, 1, 4, 0}},
      {"embedding_grad",
       R"(
nn.parameter @d : tensor<2x3x4xf32> = zeros
func.func @forward(%ids: tensor<2x3xi32>, %w: tensor<5x4xf32>) -> tensor<f32> {
  %d = nn.param @d : tensor<2x3x4xf32>
  %g = nn.embedding_grad %d, %ids : tensor<2x3x4xf32>, tensor<2x3xi32> -> tensor<5x4xf32>
  %s = nn.mul %g, %g : tensor<5x4xf32>, tensor<5x4xf32> -> tensor<5x4xf32>
  %p = nn.mul %s, %w : tensor<5x4xf32>, tensor<5x4xf32> -> tensor<5x4xf32>
  %l = nn.reduce_sum %p [0, 1] : tensor<5x4xf32> -> tensor<f32>
  return %l : tensor<f32>
})",
       -1,
       1,
       {0, 3, 3, 1, 4, 0}},
      {"attention", attentionSource},
      // The same through nn.attention_grad, and grouped-query attention (4
      // query heads of 2 on 2 and on 1 key and value heads) both ways: a
      // key head's gradient sums its group's.
      {"attention_fused", attentionSource, -1.0, 1.0, {}, 1e-6, true},
      {"attention_grouped", groupedAttentionSource},
      {"attention_grouped_fused",
       groupedAttentionSource,
       -1.0,
       1.0,
       {},
       1e-6,
       true},
      {"shape_ops", R"(
nn.parameter @x : tensor<2x6xf32> = zeros
nn.parameter @b : tensor<3xf32> = zeros
nn.parameter @c : tensor<4x2xf32> = zeros
func.func @forward(%w: tensor<4x5xf32>) -> tensor<f32> {
  %x = nn.param @x : tensor<2x6xf32>
  %b = nn.param @b : tensor<3xf32>
  %c = nn.param @c : tensor<4x2xf32>
  %r = nn.reshape %x : tensor<2x6xf32> to tensor<4x3xf32>
  %t = nn.transpose %r, [1, 0] : tensor<4x3xf32> -> tensor<3x4xf32>
  %bb = nn.broadcast_to %b : tensor<3xf32> to tensor<4x3xf32>
  %tt = nn.transpose %t, [1, 0] : tensor<3x4xf32> -> tensor<4x3xf32>
  %m = nn.mul %tt, %bb : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  %cat = nn.concat %m, %c {axis = 1 : i64} : (tensor<4x3xf32>, tensor<4x2xf32>) -> tensor<4x5xf32>
  %p = nn.mul %cat, %w : tensor<4x5xf32>, tensor<4x5xf32> -> tensor<4x5xf32>
  %l = nn.reduce_sum %p [0, 1] : tensor<4x5xf32> -> tensor<f32>
  return %l : tensor<f32>
})"},
      {"slice_split", R"(
nn.parameter @x : tensor<5x7xf32> = zeros
func.func @forward(%w: tensor<2x2xf32>, %w2: tensor<5x3xf32>) -> tensor<f32> {
  %x = nn.param @x : tensor<5x7xf32>
  %s = nn.slice %x [1, 2] to [5, 7] step [2, 3] : tensor<5x7xf32> -> tensor<2x2xf32>
  %a, %b, %c = nn.split %x {axis = 1 : i64, sizes = array<i64: 2, 3, 2>} : tensor<5x7xf32> -> tensor<5x2xf32>, tensor<5x3xf32>, tensor<5x2xf32>
  %sq = nn.mul %s, %s : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  %p = nn.mul %sq, %w : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  %l0 = nn.reduce_sum %p [0, 1] : tensor<2x2xf32> -> tensor<f32>
  %bb = nn.mul %b, %b : tensor<5x3xf32>, tensor<5x3xf32> -> tensor<5x3xf32>
  %p2 = nn.mul %bb, %w2 : tensor<5x3xf32>, tensor<5x3xf32> -> tensor<5x3xf32>
  %l1 = nn.reduce_sum %p2 [0, 1] : tensor<5x3xf32> -> tensor<f32>
  %l = nn.add %l0, %l1 : tensor<f32>, tensor<f32> -> tensor<f32>
  return %l : tensor<f32>
})"},
      {"reductions", R"(
nn.parameter @x : tensor<2x3x4xf32> = zeros
func.func @forward(%w: tensor<2x4xf32>, %w2: tensor<2x1x4xf32>, %w3: tensor<3xf32>) -> tensor<f32> {
  %x = nn.param @x : tensor<2x3x4xf32>
  %s = nn.reduce_sum %x [1] : tensor<2x3x4xf32> -> tensor<2x4xf32>
  %m = nn.reduce_mean %x [1] keepdims : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  %x2 = nn.mul %x, %x : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %mx = nn.reduce_max %x2 [0, 2] : tensor<2x3x4xf32> -> tensor<3xf32>
  %mk = nn.reduce_max %x [1] keepdims : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  %p0 = nn.mul %s, %w : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %mm = nn.mul %m, %mk : tensor<2x1x4xf32>, tensor<2x1x4xf32> -> tensor<2x1x4xf32>
  %p1 = nn.mul %mm, %w2 : tensor<2x1x4xf32>, tensor<2x1x4xf32> -> tensor<2x1x4xf32>
  %p2 = nn.mul %mx, %w3 : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  %l0 = nn.reduce_sum %p0 [0, 1] : tensor<2x4xf32> -> tensor<f32>
  %l1 = nn.reduce_sum %p1 [0, 1, 2] : tensor<2x1x4xf32> -> tensor<f32>
  %l2 = nn.reduce_sum %p2 [0] : tensor<3xf32> -> tensor<f32>
  %l01 = nn.add %l0, %l1 : tensor<f32>, tensor<f32> -> tensor<f32>
  %l = nn.add %l01, %l2 : tensor<f32>, tensor<f32> -> tensor<f32>
  return %l : tensor<f32>
})"},
      {"cast_constant_stage_end",
       R"(
nn.parameter @x : tensor<3x4xf32> = zeros
func.func @forward(%w: tensor<3x4xf64>, %ids: tensor<3xi32>) -> tensor<f64> {
  %x = nn.param @x : tensor<3x4xf32>
  %c = nn.constant dense<[1.0, 2.0, -1.0, 0.5]> : tensor<4xf32>
  %y = nn.mul %x, %c : tensor<3x4xf32>, tensor<4xf32> -> tensor<3x4xf32>
  %i = nn.cast %ids : tensor<3xi32> to tensor<3xf32>
  %iy = nn.reshape %i : tensor<3xf32> to tensor<3x1xf32>
  %z = nn.add %y, %iy : tensor<3x4xf32>, tensor<3x1xf32> -> tensor<3x4xf32>
  %e, %k = nn.stage_end %z, %ids : tensor<3x4xf32>, tensor<3xi32>
  %d = nn.cast %e : tensor<3x4xf32> to tensor<3x4xf64>
  %t = nn.tanh %d : tensor<3x4xf64>
  %p = nn.mul %t, %w : tensor<3x4xf64>, tensor<3x4xf64> -> tensor<3x4xf64>
  %l = nn.reduce_sum %p [0, 1] : tensor<3x4xf64> -> tensor<f64>
  return %l : tensor<f64>
})",
       -1,
       1,
       {0, 1, 2}},
      {"tied_parameter", R"(
nn.parameter @x : tensor<3x4xf32> = zeros
func.func @forward(%w: tensor<3x4xf32>) -> tensor<f32> {
  %x = nn.param @x : tensor<3x4xf32>
  %e = nn.exp %x : tensor<3x4xf32>
  %x2 = nn.param @x : tensor<3x4xf32>
  %y = nn.mul %e, %x2 : tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
  %p = nn.mul %y, %w : tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
  %l = nn.reduce_sum %p [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
})"},
  };
  return cases;
}

class AutodiffRule : public ::testing::TestWithParam<OpCase> {};

TEST_P(AutodiffRule, MatchesFiniteDifferences) {
  const OpCase &c = GetParam();
  auto context = makeContext();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(
      "module {\n" + c.source + "\n}", context.get());
  ASSERT_TRUE(module) << c.name;
  auto forward = module->lookupSymbol<mlir::func::FuncOp>("forward");
  ASSERT_TRUE(forward);

  std::mt19937_64 rng(1234);
  ParameterMap parameters;
  for (auto p : module->getOps<tandem::nn::ParameterOp>()) {
    Tensor t(p.getTensorType());
    fill(t, rng, c.low, c.high);
    parameters[p.getSymName().str()] = std::move(t);
  }
  std::vector<Tensor> inputs;
  for (mlir::Type type : forward.getArgumentTypes()) {
    Tensor t(llvm::cast<mlir::RankedTensorType>(type));
    if (llvm::isa<mlir::IntegerType>(t.elementType)) {
      for (size_t i = 0; i < t.data.size(); ++i)
        t.data[i] = c.ids[i % c.ids.size()];
    } else {
      fill(t, rng, -1.0, 1.0);
    }
    inputs.push_back(std::move(t));
  }
  double worst = checkGradients(*module, parameters, inputs, c.tolerance,
                                c.name, c.fusedAttention);
  std::cout << "[ autodiff ] " << c.name << ": largest relative error " << worst
            << "\n";
}

INSTANTIATE_TEST_SUITE_P(Ops, AutodiffRule, ::testing::ValuesIn(allCases()),
                         [](const ::testing::TestParamInfo<OpCase> &info) {
                           return info.param.name;
                         });

/// Every op with a gradient rule appears in some case's @forward.
TEST(AutodiffRuleCoverage, EveryRuleHasAFiniteDifferenceCase) {
  auto context = makeContext();
  llvm::StringSet<> covered;
  for (const OpCase &c : allCases()) {
    auto module = mlir::parseSourceString<mlir::ModuleOp>(
        "module {\n" + c.source + "\n}", context.get());
    ASSERT_TRUE(module) << c.name;
    module->walk([&](mlir::Operation *op) {
      covered.insert(op->getName().getStringRef());
    });
  }
  // Straight-through rules are not the derivative of the function (a
  // quantizer's is zero almost everywhere): AutodiffStraightThrough checks
  // them against the program without the codec instead.
  const llvm::StringSet<> straightThrough = {"nn.quantize", "nn.dequantize"};
  std::vector<std::string> missing;
  for (const std::string &op : tandem::nn::opsWithGradientRules())
    if (!covered.contains(op) && !straightThrough.contains(op))
      missing.push_back(op);
  EXPECT_TRUE(missing.empty()) << "ops with a gradient rule but no "
                                  "finite-difference case: "
                               << llvm::join(missing, ", ");
}

/// The loss and gradient @forward_grad gives for parameter @x and input
/// %w, both 3x8 f32 with the given elements.
std::vector<Tensor> gradientAt(const std::string &source,
                               const std::vector<double> &x,
                               const std::vector<double> &w) {
  auto context = makeContext();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(source, context.get());
  EXPECT_TRUE(module);
  if (!module || !differentiate(*module))
    return {};
  Tensor xt(mlir::Float32Type::get(context.get()), {3, 8}), wt = xt;
  xt.data = x;
  wt.data = w;
  Interpreter interpreter(*module);
  interpreter.setParameters({{"x", xt}});
  auto results = interpreter.run("forward_grad", {wt});
  EXPECT_TRUE(static_cast<bool>(results))
      << llvm::toString(results.takeError());
  return results ? *results : std::vector<Tensor>();
}

// nn.stop_gradient is the identity in value and zero in gradient: @x,
// read only through it, gets an exactly zero gradient; through
// x - stop_gradient(x) the value is exactly 0 and the gradient is the direct
// path's alone, w (JAX's straight-through idiom). Without the rule's zero
// (the identity's gradient), the first would be w·tanh'(x) and the second 0.
TEST(AutodiffStopGradient, NoCotangentFlowsThroughIt) {
  std::vector<double> x(24), w(24);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = 0.1 * static_cast<double>(i) - 1.2;
    w[i] = 0.25 * static_cast<double>(i % 7) - 0.5;
  }
  std::vector<Tensor> stopped = gradientAt(R"(
nn.parameter @x : tensor<3x8xf32> = zeros
func.func @forward(%w: tensor<3x8xf32>) -> tensor<f32> {
  %x = nn.param @x : tensor<3x8xf32>
  %t = nn.tanh %x : tensor<3x8xf32>
  %y = nn.stop_gradient %t : tensor<3x8xf32>
  %p = nn.mul %y, %w : tensor<3x8xf32>, tensor<3x8xf32> -> tensor<3x8xf32>
  %l = nn.reduce_sum %p [0, 1] : tensor<3x8xf32> -> tensor<f32>
  return %l : tensor<f32>
})",
                                           x, w);
  ASSERT_EQ(stopped.size(), 2u);
  EXPECT_NE(stopped[0].data[0], 0.0); // the loss itself is not stopped
  for (double g : stopped[1].data)
    EXPECT_EQ(g, 0.0);

  std::vector<Tensor> straight = gradientAt(R"(
nn.parameter @x : tensor<3x8xf32> = zeros
func.func @forward(%w: tensor<3x8xf32>) -> tensor<f32> {
  %x = nn.param @x : tensor<3x8xf32>
  %s = nn.stop_gradient %x : tensor<3x8xf32>
  %d = nn.sub %x, %s : tensor<3x8xf32>, tensor<3x8xf32> -> tensor<3x8xf32>
  %p = nn.mul %d, %w : tensor<3x8xf32>, tensor<3x8xf32> -> tensor<3x8xf32>
  %l = nn.reduce_sum %p [0, 1] : tensor<3x8xf32> -> tensor<f32>
  return %l : tensor<f32>
})",
                                            x, w);
  ASSERT_EQ(straight.size(), 2u);
  EXPECT_EQ(straight[0].data[0], 0.0);
  ASSERT_EQ(straight[1].data.size(), w.size());
  for (size_t i = 0; i < w.size(); ++i)
    EXPECT_EQ(straight[1].data[i],
              static_cast<double>(static_cast<float>(w[i])))
        << "element " << i;
}

// A quantize/dequantize pair (over a stage marker, decoded to another
// float type) passes the cotangent through unchanged: the gradient is
// bitwise that of the same program with the pair replaced by the same
// casts, while the loss shows the codec did round.
TEST(AutodiffStraightThrough, CodecPairPassesTheCotangentUnchanged) {
  const std::string head = R"(
nn.parameter @x : tensor<3x8xf32> = zeros
func.func @forward(%w: tensor<3x8xf32>) -> tensor<f32> {
  %x = nn.param @x : tensor<3x8xf32>
  %t = nn.tanh %x : tensor<3x8xf32>
)";
  const std::string tail = R"(
  %f = nn.cast %y : tensor<3x8xbf16> to tensor<3x8xf32>
  %p = nn.mul %f, %w : tensor<3x8xf32>, tensor<3x8xf32> -> tensor<3x8xf32>
  %l = nn.reduce_sum %p [0, 1] : tensor<3x8xf32> -> tensor<f32>
  return %l : tensor<f32>
})";
  std::mt19937_64 rng(5);
  std::vector<double> x(24), w(24);
  for (double &v : x)
    v = static_cast<float>(std::uniform_real_distribution<>(-2.0, 2.0)(rng));
  for (double &v : w)
    v = static_cast<float>(std::uniform_real_distribution<>(-1.0, 1.0)(rng));
  std::vector<Tensor> plain = gradientAt(
      head + "  %y = nn.cast %t : tensor<3x8xf32> to tensor<3x8xbf16>" + tail,
      x, w);
  ASSERT_EQ(plain.size(), 2u);
  for (const char *payload : {"i8", "f8E4M3FN", "f8E5M2"}) {
    SCOPED_TRACE(payload);
    std::string q = std::string("tensor<3x8x") + payload + ">";
    std::vector<Tensor> coded = gradientAt(
        head + "  %q, %s = nn.quantize %t {block = 4} : tensor<3x8xf32> to " +
            q + ", tensor<3x2xf32>\n  %m, %n = nn.stage_end %q, %s : " + q +
            ", tensor<3x2xf32>\n  %y = nn.dequantize %m, %n {block = 4} : " +
            q + ", tensor<3x2xf32> to tensor<3x8xbf16>" + tail,
        x, w);
    ASSERT_EQ(coded.size(), 2u);
    EXPECT_NE(coded[0].data, plain[0].data) << "the codec did not round";
    EXPECT_EQ(coded[1].data, plain[1].data);
    EXPECT_TRUE(llvm::any_of(coded[1].data, [](double g) { return g != 0; }));
  }
}

//===----------------------------------------------------------------------===//
// Models
//===----------------------------------------------------------------------===//

double checkModel(mlir::ModuleOp module, const std::string &what) {
  auto forward = module.lookupSymbol<mlir::func::FuncOp>("forward");
  auto parameters = initializeParameters(module, /*seed=*/7);
  EXPECT_TRUE(static_cast<bool>(parameters));
  if (!parameters)
    return INFINITY;
  // Random values rather than the initializers' ones and zeros, so that
  // every term of every rule is exercised.
  std::mt19937_64 rng(99);
  for (auto &[name, tensor] : *parameters)
    for (double &x : tensor.data)
      x += std::uniform_real_distribution<double>(-0.3, 0.3)(rng);
  std::vector<Tensor> inputs;
  for (mlir::Type type : forward.getArgumentTypes()) {
    Tensor t(llvm::cast<mlir::RankedTensorType>(type));
    if (llvm::isa<mlir::IntegerType>(t.elementType)) {
      // Both test models have 5 classes (vocabulary entries).
      for (size_t i = 0; i < t.data.size(); ++i)
        t.data[i] = static_cast<double>((i * 7 + 3) % 5);
    } else {
      fill(t, rng, -1.0, 1.0);
    }
    inputs.push_back(std::move(t));
  }
  return checkGradients(module, std::move(*parameters), inputs, 1e-6, what);
}

TEST(AutodiffModels, TinyMLPMatchesFiniteDifferences) {
  auto context = makeContext();
  models::MLPConfig config;
  config.layers = 2;
  config.dim = 6;
  config.inputs = 4;
  config.classes = 5;
  config.batch = 3;
  config.stages.every = 1;
  auto module = models::buildMLP(*context, config);
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  double worst = checkModel(**module, "mlp");
  std::cout << "[ autodiff ] MLP: largest relative error " << worst << "\n";
  RecordProperty("largest_relative_error", std::to_string(worst));
}

models::GPTConfig smallGPT() {
  models::GPTConfig config;
  config.layers = 2;
  config.dim = 8;
  config.heads = 2;
  config.vocab = 5;
  config.seq = 4;
  config.batch = 2;
  config.stages.every = 1;
  return config;
}

TEST(AutodiffModels, TwoLayerGPTMatchesFiniteDifferences) {
  auto context = makeContext();
  auto module = models::buildGPT(*context, smallGPT());
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  double worst = checkModel(**module, "gpt");
  std::cout << "[ autodiff ] 2-layer GPT: largest relative error " << worst
            << "\n";
  RecordProperty("largest_relative_error", std::to_string(worst));
}

/// The two-layer GPT with its residual stream in a 3-wide subspace
/// (nn-subspace): gradients of the k-wide tables and projections through
/// the frozen basis and token table; none for the frozen ones.
TEST(AutodiffModels, TwoLayerGPTInASubspaceMatchesFiniteDifferences) {
  auto context = makeContext();
  auto module = models::buildGPT(*context, smallGPT());
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  mlir::PassManager pm(context.get());
  tandem::nn::NNSubspaceOptions options;
  options.rank = 3;
  options.seed = 5;
  pm.addPass(tandem::nn::createNNSubspace(options));
  ASSERT_TRUE(mlir::succeeded(pm.run(**module)));
  double worst = checkModel(**module, "gpt-subspace");
  auto grad = (*module)->lookupSymbol<mlir::func::FuncOp>("forward_grad");
  ASSERT_TRUE(grad);
  auto names = grad->getAttrOfType<mlir::ArrayAttr>("nn.gradients");
  ASSERT_TRUE(names);
  llvm::StringSet<> trained;
  for (mlir::Attribute name : names)
    trained.insert(llvm::cast<mlir::FlatSymbolRefAttr>(name).getValue());
  EXPECT_TRUE(trained.contains("wte"));
  EXPECT_TRUE(trained.contains("h.1.mlp.c_proj.weight"));
  EXPECT_FALSE(trained.contains("subspace.basis"));
  EXPECT_FALSE(trained.contains("subspace.tokens"));
  std::cout << "[ autodiff ] 2-layer GPT, k = 3: largest relative error "
            << worst << "\n";
  RecordProperty("largest_relative_error", std::to_string(worst));
}

TEST(AutodiffModels, WOpsNeverFeedBOpsOnTheTinyGPT) {
  auto context = makeContext();
  auto config = models::getGPTConfig("tiny");
  ASSERT_TRUE(static_cast<bool>(config)) << llvm::toString(config.takeError());
  config->stages.every = 2;
  auto module = models::buildGPT(*context, *config);
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  ASSERT_TRUE(differentiate(**module));
  auto grad = (*module)->lookupSymbol<mlir::func::FuncOp>("forward_grad");
  ASSERT_TRUE(grad);
  int bOps = 0, wOps = 0, forwardOps = 0;
  for (mlir::Operation &op : grad.getBody().front()) {
    if (llvm::isa<mlir::func::ReturnOp>(op))
      continue;
    auto tag = op.getAttrOfType<tandem::nn::GradAttr>("nn.grad");
    if (!tag) {
      EXPECT_TRUE(op.hasAttr("nn.id"))
          << "untagged op " << op.getName().getStringRef().str();
      ++forwardOps;
      continue;
    }
    EXPECT_FALSE(op.hasAttr("nn.id"));
    if (tag.getKind() == tandem::nn::GradKind::B) {
      ++bOps;
      continue;
    }
    ++wOps;
    for (mlir::Operation *user : op.getUsers()) {
      auto userTag = user->getAttrOfType<tandem::nn::GradAttr>("nn.grad");
      EXPECT_FALSE(userTag && userTag.getKind() == tandem::nn::GradKind::B)
          << "W op " << op.getName().getStringRef().str() << " feeds B op "
          << user->getName().getStringRef().str();
    }
  }
  EXPECT_GT(bOps, 0);
  EXPECT_GT(wOps, 0);
  EXPECT_GT(forwardOps, 0);
  // The tied embedding gets one gradient; gradients follow the declaration
  // order of the parameters.
  auto names = grad->getAttrOfType<mlir::ArrayAttr>("nn.gradients");
  ASSERT_TRUE(names);
  std::vector<std::string> declared;
  for (auto p : (*module)->getOps<tandem::nn::ParameterOp>())
    declared.push_back(p.getSymName().str());
  std::vector<std::string> listed;
  for (mlir::Attribute a : names)
    listed.push_back(llvm::cast<mlir::FlatSymbolRefAttr>(a).getValue().str());
  EXPECT_EQ(listed, declared);
  EXPECT_EQ(grad.getNumResults(), declared.size() + 1);
}

} // namespace
