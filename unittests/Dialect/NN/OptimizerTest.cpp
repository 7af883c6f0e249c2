//===- OptimizerTest.cpp - nn-optimizer against a C++ reference -----------===//
//
// Runs nn-optimizer in-process on a module with a hand-written gradient
// function, evaluates the training step several times with the reference
// evaluator (writing the results back by `nn.updates`, as the training loop
// does) and compares every parameter, every state tensor and the loss with
// a plain C++ implementation of sgd, momentum and adamw written from the
// formulas (decoupled decay, groups, clipping, bias correction, schedule).
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/NN/IR/NNOps.h"
#include "tandem/Dialect/NN/Transforms/Passes.h"
#include "tandem/Eval/Interpreter.h"
#include "tandem/InitAll.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "gtest/gtest.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

using namespace mlir;
using tandem::eval::Interpreter;
using tandem::eval::ParameterMap;
using tandem::eval::Tensor;

namespace {

// z = x·w + b, y = z·g (g = @ln.weight, broadcast over rows),
// loss = 0.5·Σ y². The gradients are computed before the parameters are
// in canonical order (ln.weight first) and tagged `test.grad_of` so the
// clipping test can see which gradient each squared norm comes from.
constexpr const char *kModule = R"mlir(
nn.parameter @w : tensor<3x4xf32> = zeros
nn.parameter @b : tensor<4xf32> = zeros
nn.parameter @ln.weight : tensor<4xf32> = zeros
nn.parameter @unused : tensor<2xf32> = zeros

func.func @forward_grad(%x: tensor<2x3xf32>)
    -> (tensor<f32>, tensor<3x4xf32>, tensor<4xf32>, tensor<4xf32>)
    attributes {nn.gradients = [@w, @b, @ln.weight]} {
  %w = nn.param @w : tensor<3x4xf32>
  %b = nn.param @b : tensor<4xf32>
  %g = nn.param @ln.weight : tensor<4xf32>
  %xw = nn.matmul %x, %w : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
  %z = nn.add %xw, %b : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
  %y = nn.mul %z, %g : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
  %y2 = nn.mul %y, %y : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %s = nn.reduce_sum %y2 [0, 1] : tensor<2x4xf32> -> tensor<f32>
  %half = nn.constant dense<0.5> : tensor<f32>
  %loss = nn.mul %s, %half : tensor<f32>, tensor<f32> -> tensor<f32>
  %yz = nn.mul %y, %z : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %dg = nn.reduce_sum %yz [0] {test.grad_of = "ln.weight"} : tensor<2x4xf32> -> tensor<4xf32>
  %dz = nn.mul %y, %g : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
  %db = nn.reduce_sum %dz [0] {test.grad_of = "b"} : tensor<2x4xf32> -> tensor<4xf32>
  %dw = nn.matmul %x, %dz {transpose_lhs, test.grad_of = "w"} : tensor<2x3xf32>, tensor<2x4xf32> -> tensor<3x4xf32>
  return %loss, %dw, %db, %dg : tensor<f32>, tensor<3x4xf32>, tensor<4xf32>, tensor<4xf32>
}
)mlir";

const std::vector<double> kX = {0.5, -1.0, 0.25, 1.5, 0.75, -0.5};
const std::vector<std::string> kNames = {"w", "b", "ln.weight"};
const std::vector<std::vector<int64_t>> kShapes = {{3, 4}, {4}, {4}};

std::vector<std::vector<double>> initialParameters() {
  return {{0.3, -0.2, 0.5, 0.1, -0.4, 0.6, 0.2, -0.3, 0.7, 0.1, -0.6, 0.4},
          {0.1, -0.2, 0.3, 0.05},
          {1.0, 0.8, 1.2, 0.9}};
}

/// The reference optimizer's settings (mirrors the pass options).
struct Config {
  std::string optimizer = "adamw";
  double lr = 1e-3, momentum = 0.9, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double weightDecay = -1.0;
  std::string decay = "matrices";
  std::vector<std::string> noDecay;
  double clipNorm = 0.0;
  std::string schedule = "constant";
  int64_t warmup = 0, total = 0;
  double minLr = 0.0;

  tandem::nn::NNOptimizerOptions toOptions() const {
    tandem::nn::NNOptimizerOptions o;
    o.optimizer = optimizer;
    o.lr = lr;
    o.momentum = momentum;
    o.beta1 = beta1;
    o.beta2 = beta2;
    o.eps = eps;
    o.weightDecay = weightDecay;
    o.decay = decay;
    o.noDecay.assign(noDecay.begin(), noDecay.end());
    o.clipNorm = clipNorm;
    o.schedule = schedule;
    o.warmupSteps = warmup;
    o.totalSteps = total;
    o.minLr = minLr;
    return o;
  }
};

/// lr(t) from the documented formula.
double scheduledLr(const Config &c, int64_t t) {
  if (c.schedule == "constant")
    return c.lr;
  if (t < c.warmup)
    return c.lr * static_cast<double>(t + 1) / static_cast<double>(c.warmup);
  if (t >= c.total)
    return c.minLr;
  double progress = static_cast<double>(t - c.warmup) /
                    static_cast<double>(c.total - c.warmup);
  return c.minLr + (c.lr - c.minLr) * 0.5 * (1.0 + std::cos(M_PI * progress));
}

/// Straightforward double-precision implementation.
struct Reference {
  Config config;
  std::vector<std::vector<double>> params = initialParameters();
  std::vector<std::vector<double>> first, second; // mom or m, and v
  int64_t step = 0;

  explicit Reference(Config c) : config(std::move(c)) {
    for (auto &p : params) {
      first.emplace_back(p.size(), 0.0);
      second.emplace_back(p.size(), 0.0);
    }
  }

  bool decays(size_t i) const {
    for (const std::string &s : config.noDecay)
      if (kNames[i].find(s) != std::string::npos)
        return false;
    if (config.decay == "all")
      return true;
    if (config.decay == "none")
      return false;
    return kShapes[i].size() >= 2;
  }

  double weightDecay() const {
    if (config.weightDecay >= 0)
      return config.weightDecay;
    return config.optimizer == "adamw" ? 0.01 : 0.0;
  }

  /// Loss and gradients of the model at the current parameters.
  double gradients(std::vector<std::vector<double>> &grads) const {
    const auto &w = params[0], &b = params[1], &g = params[2];
    grads = {std::vector<double>(12, 0.0), std::vector<double>(4, 0.0),
             std::vector<double>(4, 0.0)};
    double loss = 0.0;
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 4; ++j) {
        double z = b[j];
        for (int k = 0; k < 3; ++k)
          z += kX[i * 3 + k] * w[k * 4 + j];
        double y = z * g[j];
        loss += 0.5 * y * y;
        grads[2][j] += y * z;
        double dz = y * g[j];
        grads[1][j] += dz;
        for (int k = 0; k < 3; ++k)
          grads[0][k * 4 + j] += kX[i * 3 + k] * dz;
      }
    return loss;
  }

  double run() {
    std::vector<std::vector<double>> grads;
    double loss = gradients(grads);
    if (config.clipNorm > 0) {
      double sum = 0.0;
      for (auto &g : grads)
        for (double v : g)
          sum += v * v;
      double scale = std::min(1.0, config.clipNorm / (std::sqrt(sum) + 1e-6));
      for (auto &g : grads)
        for (double &v : g)
          v *= scale;
    }
    double lr = scheduledLr(config, step);
    double n = static_cast<double>(step + 1);
    double c1 = 1.0 - std::pow(config.beta1, n);
    double c2 = 1.0 - std::pow(config.beta2, n);
    for (size_t i = 0; i < params.size(); ++i) {
      double wd = decays(i) ? weightDecay() : 0.0;
      for (size_t e = 0; e < params[i].size(); ++e) {
        double g = grads[i][e], p = params[i][e], direction = g;
        if (config.optimizer == "momentum") {
          first[i][e] = config.momentum * first[i][e] + g;
          direction = first[i][e];
        } else if (config.optimizer == "adamw") {
          first[i][e] = config.beta1 * first[i][e] + (1 - config.beta1) * g;
          second[i][e] =
              config.beta2 * second[i][e] + (1 - config.beta2) * g * g;
          direction =
              (first[i][e] / c1) / (std::sqrt(second[i][e] / c2) + config.eps);
        }
        params[i][e] = p - lr * wd * p - lr * direction;
      }
    }
    ++step;
    return loss;
  }
};

double relativeError(const std::vector<double> &a,
                     const std::vector<double> &b) {
  double diff = 0.0, norm = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff += (a[i] - b[i]) * (a[i] - b[i]);
    norm += b[i] * b[i];
  }
  return norm == 0.0 ? std::sqrt(diff) : std::sqrt(diff / norm);
}

/// The module after nn-optimizer, and an interpreter with the parameters.
struct Harness {
  std::unique_ptr<MLIRContext> context;
  OwningOpRef<ModuleOp> module;
  std::unique_ptr<Interpreter> interpreter;
  std::vector<std::string> updates;

  explicit Harness(const Config &config) {
    DialectRegistry registry;
    tandem::registerAllDialects(registry);
    context = std::make_unique<MLIRContext>(registry);
    module = parseSourceString<ModuleOp>(kModule, context.get());
    if (!module) {
      ADD_FAILURE() << "the test module does not parse";
      return;
    }
    PassManager pm(context.get());
    pm.addPass(tandem::nn::createNNOptimizer(config.toOptions()));
    if (failed(pm.run(*module))) {
      ADD_FAILURE() << "nn-optimizer failed";
      module = nullptr;
      return;
    }
    auto step = module->lookupSymbol<func::FuncOp>("train_step");
    for (Attribute a : step->getAttrOfType<ArrayAttr>("nn.updates"))
      updates.push_back(cast<FlatSymbolRefAttr>(a).getValue().str());
    ParameterMap values;
    for (auto parameter : module->getOps<tandem::nn::ParameterOp>())
      values[parameter.getSymName().str()] = Tensor(parameter.getTensorType());
    auto initial = initialParameters();
    for (size_t i = 0; i < kNames.size(); ++i)
      values[kNames[i]].data = initial[i];
    interpreter = std::make_unique<Interpreter>(*module);
    interpreter->setParameters(std::move(values));
  }

  /// One training step; returns the loss.
  double run() {
    Tensor x(Float32Type::get(context.get()), {2, 3});
    x.data = kX;
    auto results = interpreter->run("train_step", {x});
    if (!results) {
      ADD_FAILURE() << llvm::toString(results.takeError());
      return NAN;
    }
    EXPECT_EQ(results->size(), updates.size() + 1);
    for (size_t i = 0; i < updates.size(); ++i)
      interpreter->getParameters()[updates[i]] = (*results)[i + 1];
    return results->front().data.front();
  }

  const std::vector<double> &value(const std::string &name) {
    return interpreter->getParameters()[name].data;
  }
};

/// Runs `steps` steps of both and compares loss, parameters and state.
void compare(const Config &config, int steps, double tolerance = 1e-6) {
  Harness harness(config);
  ASSERT_TRUE(harness.module);
  Reference reference(config);
  for (int s = 0; s < steps; ++s) {
    double loss = harness.run();
    double expected = reference.run();
    EXPECT_NEAR(loss, expected, tolerance * std::abs(expected))
        << "loss at step " << s;
    EXPECT_EQ(harness.value("opt.step").front(), static_cast<double>(s + 1));
    for (size_t i = 0; i < kNames.size(); ++i) {
      EXPECT_LE(relativeError(harness.value(kNames[i]), reference.params[i]),
                tolerance)
          << kNames[i] << " after step " << s;
      if (config.optimizer == "momentum")
        EXPECT_LE(relativeError(harness.value("opt.mom." + kNames[i]),
                                reference.first[i]),
                  tolerance)
            << "opt.mom." << kNames[i] << " after step " << s;
      if (config.optimizer == "adamw") {
        EXPECT_LE(relativeError(harness.value("opt.m." + kNames[i]),
                                reference.first[i]),
                  tolerance)
            << "opt.m." << kNames[i] << " after step " << s;
        EXPECT_LE(relativeError(harness.value("opt.v." + kNames[i]),
                                reference.second[i]),
                  tolerance)
            << "opt.v." << kNames[i] << " after step " << s;
      }
    }
  }
  // The parameter the gradient function does not read is not trained.
  EXPECT_EQ(harness.interpreter->getParameters().count("opt.m.unused"), 0u);
}

TEST(OptimizerSgd, MatchesReference) {
  Config c;
  c.optimizer = "sgd";
  c.lr = 0.05;
  compare(c, 5);
}

TEST(OptimizerSgd, DecoupledDecayOnMatricesOnly) {
  Config c;
  c.optimizer = "sgd";
  c.lr = 0.05;
  c.weightDecay = 0.1;
  compare(c, 4);
}

TEST(OptimizerMomentum, MatchesReferenceWithDecayGroups) {
  Config c;
  c.optimizer = "momentum";
  c.lr = 0.02;
  c.momentum = 0.8;
  c.weightDecay = 0.05;
  compare(c, 6);
}

TEST(OptimizerAdamW, MatchesReferenceWithDefaults) {
  Config c; // adamw, lr 1e-3, weight decay 0.01 on matrices
  c.lr = 0.01;
  compare(c, 6);
}

TEST(OptimizerAdamW, BiasCorrectionFirstStep) {
  // After one step from zero state, m̂ = g and v̂ = g², so every element
  // moves by lr·g/(|g| + eps) ≈ ±lr (no decay here).
  Config c;
  c.lr = 0.01;
  c.weightDecay = 0.0;
  Harness harness(c);
  ASSERT_TRUE(harness.module);
  auto before = initialParameters();
  harness.run();
  for (size_t i = 0; i < kNames.size(); ++i)
    for (size_t e = 0; e < before[i].size(); ++e)
      EXPECT_NEAR(std::abs(harness.value(kNames[i])[e] - before[i][e]), 0.01,
                  1e-6)
          << kNames[i] << "[" << e << "]";
}

TEST(OptimizerAdamW, GroupsDecayAllButNamed) {
  Config c;
  c.lr = 0.01;
  c.weightDecay = 0.2;
  c.decay = "all";
  c.noDecay = {"ln."};
  c.beta1 = 0.8;
  c.beta2 = 0.95;
  compare(c, 5);
}

TEST(OptimizerAdamW, NoDecayGroup) {
  Config c;
  c.lr = 0.01;
  c.weightDecay = 0.2;
  c.decay = "none";
  compare(c, 3);
}

TEST(OptimizerClip, ActiveClippingMatchesReference) {
  Config c;
  c.optimizer = "sgd";
  c.lr = 0.05;
  c.clipNorm = 0.25; // well below the gradient norm
  compare(c, 5);
  c.optimizer = "adamw";
  compare(c, 5);
}

TEST(OptimizerClip, InactiveClippingIsIdentity) {
  Config c;
  c.optimizer = "momentum";
  c.lr = 0.01;
  c.clipNorm = 1e6;
  compare(c, 3);
}

/// The leaves of the chain of adds feeding the global norm, in order.
void collectLeaves(Value value, std::vector<std::string> &leaves) {
  Operation *op = value.getDefiningOp();
  ASSERT_TRUE(op);
  if (isa<tandem::nn::AddOp>(op)) {
    collectLeaves(op->getOperand(0), leaves);
    collectLeaves(op->getOperand(1), leaves);
    return;
  }
  // A squared norm: reduce_sum(mul(g, g)) for a tensor g.
  ASSERT_TRUE(isa<tandem::nn::ReduceSumOp>(op));
  Operation *square = op->getOperand(0).getDefiningOp();
  ASSERT_TRUE(square && isa<tandem::nn::MulOp>(square));
  Operation *gradient = square->getOperand(0).getDefiningOp();
  ASSERT_TRUE(gradient);
  auto tag = gradient->getAttrOfType<StringAttr>("test.grad_of");
  ASSERT_TRUE(tag);
  leaves.push_back(tag.getValue().str());
}

TEST(OptimizerClip, GlobalNormSumsInCanonicalOrder) {
  Config c;
  c.optimizer = "sgd";
  c.clipNorm = 1.0;
  Harness harness(c);
  ASSERT_TRUE(harness.module);
  auto step = harness.module->lookupSymbol<func::FuncOp>("train_step");
  tandem::nn::SqrtOp norm;
  step.walk([&](tandem::nn::SqrtOp op) { norm = op; });
  ASSERT_TRUE(norm);
  EXPECT_TRUE(norm->hasAttr("nn.optimizer"));
  std::vector<std::string> leaves;
  collectLeaves(norm.getInput(), leaves);
  // The gradient function computes ln.weight's gradient first; the norm
  // still adds w, b, ln.weight (nn.gradients = declaration order), as a
  // left-leaning chain ((w + b) + ln.weight).
  EXPECT_EQ(leaves, kNames);
  auto top = norm.getInput().getDefiningOp<tandem::nn::AddOp>();
  ASSERT_TRUE(top);
  EXPECT_TRUE(top.getLhs().getDefiningOp<tandem::nn::AddOp>());
  EXPECT_TRUE(top.getRhs().getDefiningOp<tandem::nn::ReduceSumOp>());
}

TEST(OptimizerSchedule, WarmupCosineValues) {
  Config c;
  c.optimizer = "sgd";
  c.lr = 0.1;
  c.minLr = 0.01;
  c.schedule = "warmup-cosine";
  c.warmup = 2;
  c.total = 6;
  // The formula itself at the documented points.
  EXPECT_DOUBLE_EQ(scheduledLr(c, 0), 0.05);
  EXPECT_DOUBLE_EQ(scheduledLr(c, 1), 0.1);
  EXPECT_DOUBLE_EQ(scheduledLr(c, 2), 0.1);
  EXPECT_NEAR(scheduledLr(c, 4), 0.055, 1e-15);
  EXPECT_DOUBLE_EQ(scheduledLr(c, 6), 0.01);
  EXPECT_DOUBLE_EQ(scheduledLr(c, 9), 0.01);

  // The graph's learning rate at every step: with sgd and no decay,
  // lr(t) = (p − p') / g for any element with a gradient.
  Harness harness(c);
  ASSERT_TRUE(harness.module);
  Reference reference(c);
  for (int t = 0; t < 9; ++t) {
    std::vector<std::vector<double>> grads;
    reference.gradients(grads);
    auto before = harness.value("w");
    harness.run();
    reference.run();
    double lr = (before[0] - harness.value("w")[0]) / grads[0][0];
    // (p − p') cancels most of f32's digits: 1e-5 still tells every
    // schedule point apart.
    EXPECT_NEAR(lr, scheduledLr(c, t), 1e-5) << "step " << t;
    EXPECT_LE(relativeError(harness.value("w"), reference.params[0]), 1e-6)
        << "step " << t;
  }
}

TEST(OptimizerSchedule, WarmupCosineAdamW) {
  Config c;
  c.lr = 0.02;
  c.minLr = 0.002;
  c.schedule = "warmup-cosine";
  c.warmup = 3;
  c.total = 7;
  c.clipNorm = 0.5;
  compare(c, 9);
}

TEST(OptimizerSchedule, WarmupEqualsTotal) {
  Config c;
  c.optimizer = "momentum";
  c.lr = 0.02;
  c.minLr = 0.005;
  c.schedule = "warmup-cosine";
  c.warmup = 3;
  c.total = 3;
  compare(c, 5);
}

TEST(OptimizerSchedule, CosineWithoutWarmup) {
  Config c;
  c.optimizer = "sgd";
  c.lr = 0.05;
  c.schedule = "warmup-cosine";
  c.total = 4;
  compare(c, 6);
}

} // namespace
