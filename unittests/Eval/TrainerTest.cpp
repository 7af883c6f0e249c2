//===- TrainerTest.cpp - the reference training loop ----------------------===//

#include "EvalTestUtils.h"

#include "tandem/Eval/Inputs.h"
#include "tandem/Eval/Parameters.h"
#include "tandem/Eval/Trainer.h"
#include "tandem/Runtime/StepInputs.h"

#include "mlir/Parser/Parser.h"

#include <cstring>
#include <fstream>
#include <sstream>

using namespace tandem::eval;
using namespace tandem::eval::test;

namespace {

/// A step that subtracts the mean of its token inputs from @w and counts
/// steps in @opt.step; the loss is the sum of @w before the update.
std::string stepModel(
    const std::string &attrs,
    const std::string &results = "tensor<f32>, tensor<3xf32>, tensor<f32>",
    const std::string &returned = "%loss, %nw, %ns") {
  return R"(
  nn.parameter @w : tensor<3xf32> = ones
  nn.parameter @opt.step : tensor<f32> = zeros
  func.func @forward(%t: tensor<2x4xi32>, %y: tensor<2x4xi32>) -> tensor<f32> {
    %w = nn.param @w : tensor<3xf32>
    %loss = nn.reduce_sum %w [0] : tensor<3xf32> -> tensor<f32>
    return %loss : tensor<f32>
  }
  func.func @train_step(%t: tensor<2x4xi32>, %y: tensor<2x4xi32>) -> ()" +
         results + ") attributes {" + attrs + R"(} {
    %w = nn.param @w : tensor<3xf32>
    %s = nn.param @opt.step : tensor<f32>
    %loss = nn.reduce_sum %w [0] : tensor<3xf32> -> tensor<f32>
    %tf = nn.cast %t : tensor<2x4xi32> to tensor<2x4xf32>
    %m = nn.reduce_mean %tf [0, 1] : tensor<2x4xf32> -> tensor<f32>
    %nw = nn.sub %w, %m : tensor<3xf32>, tensor<f32> -> tensor<3xf32>
    %one = nn.constant dense<1.0> : tensor<f32>
    %ns = nn.add %s, %one : tensor<f32>, tensor<f32> -> tensor<f32>
    return )" +
         returned + " : " + results + R"(
  })";
}

const char *kGoodUpdates = "nn.updates = [@w, @opt.step]";

std::vector<int32_t> someTokens() {
  std::vector<int32_t> tokens;
  for (int i = 0; i < 200; ++i)
    tokens.push_back((i * 7) % 11);
  return tokens;
}

struct Fixture {
  Program program;
  std::unique_ptr<Interpreter> interpreter;
};

Fixture setUp(const std::string &source) {
  Fixture s;
  s.program = parse(source);
  if (!s.program.module)
    return s;
  s.interpreter = std::make_unique<Interpreter>(*s.program.module);
  auto params = initializeParameters(*s.program.module, 0);
  EXPECT_TRUE(static_cast<bool>(params));
  s.interpreter->setParameters(std::move(*params));
  return s;
}

std::string createError(const std::string &source) {
  Fixture s = setUp(source);
  if (!s.program.module)
    return "parse failed";
  auto trainer = Trainer::create(*s.interpreter, someTokens());
  if (trainer)
    return "no error";
  return llvm::toString(trainer.takeError());
}

TEST(EvalTrainer, WritesUpdatesBack) {
  Fixture s = setUp(stepModel(kGoodUpdates));
  ASSERT_TRUE(s.program.module);
  auto trainer = Trainer::create(*s.interpreter, someTokens());
  ASSERT_TRUE(static_cast<bool>(trainer))
      << llvm::toString(trainer.takeError());
  EXPECT_EQ((*trainer)->getUpdates(),
            (std::vector<std::string>{"w", "opt.step"}));

  auto first = (*trainer)->step(0);
  ASSERT_TRUE(static_cast<bool>(first)) << llvm::toString(first.takeError());
  EXPECT_EQ(first->loss, 3.0);
  ASSERT_EQ(first->inputs.size(), 2u);
  double mean = 0.0;
  for (double token : first->inputs[0].data)
    mean += token / 8.0;
  const ParameterMap &params = s.interpreter->getParameters();
  EXPECT_EQ(params.at("opt.step").data, std::vector<double>{1.0});
  for (double w : params.at("w").data)
    EXPECT_FLOAT_EQ(w, 1.0 - mean);

  auto second = (*trainer)->step(1);
  ASSERT_TRUE(static_cast<bool>(second));
  EXPECT_FLOAT_EQ(second->loss, 3.0 * (1.0 - mean));
  EXPECT_EQ(params.at("opt.step").data, std::vector<double>{2.0});

  // The held-out loss reads the parameters without changing them.
  auto heldOut = (*trainer)->heldOutLoss(3);
  ASSERT_TRUE(static_cast<bool>(heldOut));
  double sum = 0.0;
  for (double w : params.at("w").data)
    sum += w;
  EXPECT_FLOAT_EQ(*heldOut, sum);
  EXPECT_EQ(params.at("opt.step").data, std::vector<double>{2.0});
}

TEST(EvalTrainer, BatchesDependOnStepIndexAndSeed) {
  Fixture a = setUp(stepModel(kGoodUpdates));
  Fixture b = setUp(stepModel(kGoodUpdates));
  ASSERT_TRUE(a.program.module && b.program.module);
  auto ta = Trainer::create(*a.interpreter, someTokens());
  TrainerOptions seeded;
  seeded.seed = 5;
  auto tb = Trainer::create(*b.interpreter, someTokens(), seeded);
  ASSERT_TRUE(ta && tb);
  auto a3 = (*ta)->step(3), a3again = (*ta)->step(3), a4 = (*ta)->step(4);
  auto b3 = (*tb)->step(3);
  ASSERT_TRUE(a3 && a3again && a4 && b3);
  EXPECT_EQ(a3->inputs[0].data, a3again->inputs[0].data);
  EXPECT_NE(a3->inputs[0].data, a4->inputs[0].data);
  EXPECT_NE(a3->inputs[0].data, b3->inputs[0].data);
  // Targets are the inputs shifted by one token.
  EXPECT_EQ(a3->inputs[0].data[1], a3->inputs[1].data[0]);
}

TEST(EvalTrainer, MissingStepFunction) {
  Fixture s = setUp(stepModel(kGoodUpdates));
  ASSERT_TRUE(s.program.module);
  TrainerOptions options;
  options.stepFunction = "nope";
  auto trainer = Trainer::create(*s.interpreter, someTokens(), options);
  ASSERT_FALSE(static_cast<bool>(trainer));
  std::string message = llvm::toString(trainer.takeError());
  EXPECT_NE(message.find("no training-step function 'nope'"),
            std::string::npos);
  EXPECT_NE(message.find("tandem-opt --nn-autodiff --nn-optimizer"),
            std::string::npos);
}

TEST(EvalTrainer, UpdatesValidation) {
  EXPECT_NE(
      createError(stepModel("nn.other")).find("has no 'nn.updates' attribute"),
      std::string::npos);
  EXPECT_NE(createError(stepModel("nn.updates = [@w]"))
                .find("returns 2 result(s) after the loss but 'nn.updates' "
                      "names 1 parameter(s)"),
            std::string::npos);
  EXPECT_NE(createError(stepModel("nn.updates = [@w, @nope]"))
                .find("entry #1 names '@nope', which is not an nn.parameter"),
            std::string::npos);
  EXPECT_NE(createError(stepModel("nn.updates = [@w, @w]"))
                .find("names '@w' more than once"),
            std::string::npos);
  EXPECT_NE(createError(stepModel("nn.updates = [@opt.step, @w]"))
                .find("result #1 is tensor<3xf32>, but the parameter "
                      "'@opt.step' it updates is tensor<f32>"),
            std::string::npos);
  EXPECT_NE(createError(stepModel("nn.updates = [@w, 3]"))
                .find("entry #1 is not a symbol reference"),
            std::string::npos);
  EXPECT_NE(createError(stepModel("nn.updates = [@w]",
                                  "tensor<3xf32>, tensor<3xf32>", "%nw, %nw"))
                .find("result #0 must be the loss"),
            std::string::npos);
}

TEST(EvalTrainer, FailedStepLeavesParameters) {
  // A step whose evaluation fails (an out-of-range embedding id) changes
  // nothing.
  Fixture s = setUp(R"(
  nn.parameter @e : tensor<4x2xf32> = ones
  func.func @forward(%t: tensor<1x4xi32>, %y: tensor<1x4xi32>) -> tensor<f32> {
    %c = nn.constant dense<0.0> : tensor<f32>
    return %c : tensor<f32>
  }
  func.func @train_step(%t: tensor<1x4xi32>, %y: tensor<1x4xi32>) -> (tensor<f32>, tensor<4x2xf32>)
      attributes {nn.updates = [@e]} {
    %e = nn.param @e : tensor<4x2xf32>
    %bad = nn.constant dense<9> : tensor<1x4xi32>
    %x = nn.embedding %e, %bad : tensor<4x2xf32>, tensor<1x4xi32> -> tensor<1x4x2xf32>
    %l = nn.reduce_sum %x [0, 1, 2] : tensor<1x4x2xf32> -> tensor<f32>
    return %l, %e : tensor<f32>, tensor<4x2xf32>
  })");
  ASSERT_TRUE(s.program.module);
  auto trainer = Trainer::create(*s.interpreter, someTokens());
  ASSERT_TRUE(static_cast<bool>(trainer))
      << llvm::toString(trainer.takeError());
  ParameterMap before = s.interpreter->getParameters();
  auto step = (*trainer)->step(0);
  EXPECT_FALSE(static_cast<bool>(step));
  llvm::consumeError(step.takeError());
  EXPECT_EQ(s.interpreter->getParameters().at("e").data, before.at("e").data);
}

std::string readLinearTrain() {
  std::ifstream in(std::string(TANDEM_TEST_SOURCE_DIR) +
                   "/test/Eval/Inputs/linear-train.mlir");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(EvalTrainer, TokensOutsideTheVocabulary) {
  Fixture s = setUp(readLinearTrain());
  ASSERT_TRUE(s.program.module);
  std::vector<int32_t> tokens(500, 65);
  tokens[17] = 300;
  TrainerOptions options;
  options.dataName = "tokens.bin";
  auto trainer = Trainer::create(*s.interpreter, tokens, options);
  ASSERT_FALSE(static_cast<bool>(trainer));
  EXPECT_EQ(llvm::toString(trainer.takeError()),
            "tokens.bin: token 300 at position 17 is outside the model's "
            "vocabulary [0, 256)");
}

/// The hand-written gradient of test/Eval/Inputs/linear-train.mlir agrees
/// with central differences of @forward in f64.
TEST(EvalTrainer, LinearTrainGradientMatchesFiniteDifferences) {
  Program p = parse(readLinearTrain());
  ASSERT_TRUE(p.module);
  EvalOptions f64;
  f64.f64 = true;
  Interpreter interpreter(*p.module, f64);
  auto params = initializeParameters(*p.module, 1);
  ASSERT_TRUE(static_cast<bool>(params));
  interpreter.setParameters(*params);
  std::vector<int32_t> tokens;
  for (int i = 0; i < 400; ++i)
    tokens.push_back(32 + (i * 13) % 60);
  auto batches = BatchInputs::create(
      p.module->lookupSymbol<mlir::func::FuncOp>("forward_grad"), tokens, 0,
      true, "data");
  ASSERT_TRUE(static_cast<bool>(batches));
  std::vector<Tensor> inputs = batches->get(0);
  auto grads = interpreter.run("forward_grad", inputs);
  ASSERT_TRUE(static_cast<bool>(grads)) << llvm::toString(grads.takeError());
  auto lossAt = [&](const std::string &name, size_t i, double delta) {
    ParameterMap shifted = *params;
    shifted[name].data[i] += delta;
    interpreter.setParameters(shifted);
    auto loss = interpreter.run("forward", inputs);
    EXPECT_TRUE(static_cast<bool>(loss));
    return loss ? (*loss)[0].data[0] : 0.0;
  };
  const double h = 1e-5;
  // Rows of tokens that occur (the first token's row) and ones that do not.
  size_t token = static_cast<size_t>(inputs[0].data[0]);
  for (auto [result, name, index] :
       {std::tuple<int, std::string, size_t>{1, "wte", token * 8 + 3},
        {1, "wte", 0},
        {2, "wout", 5},
        {2, "wout", 7 * 256 + 100}}) {
    double numeric =
        (lossAt(name, index, h) - lossAt(name, index, -h)) / (2 * h);
    EXPECT_NEAR((*grads)[result].data[index], numeric, 1e-7)
        << name << "[" << index << "]";
  }
}

} // namespace

// The runtime generates the inputs token data does not fill exactly as the
// evaluator does, so tandem-run --data and tandem-eval --train see
// the same step inputs.
TEST(EvalTrainer, RuntimeGeneratesTheEvaluatorsInputs) {
  mlir::MLIRContext context;
  mlir::Builder b(&context);
  struct Case {
    mlir::Type element;
    tandem::runtime::ElementType runtime;
    std::optional<int64_t> vocabulary;
  } cases[] = {
      {b.getF32Type(), tandem::runtime::ElementType::F32, std::nullopt},
      {b.getF64Type(), tandem::runtime::ElementType::F64, std::nullopt},
      {b.getI32Type(), tandem::runtime::ElementType::I32, 37},
      {b.getI64Type(), tandem::runtime::ElementType::I64, std::nullopt},
  };
  for (const Case &c : cases) {
    auto type = mlir::RankedTensorType::get({6, 5}, c.element);
    Tensor expected = generateInput(type, 4, 9, c.vocabulary);
    tandem::runtime::InputInfo info;
    info.index = 4;
    info.dtype = c.runtime;
    info.stepShape = {6, 5};
    info.vocabulary = c.vocabulary;
    size_t size = tandem::runtime::elementTypeSize(c.runtime);
    tandem::runtime::Buffer buffer(30 * size);
    std::string error;
    ASSERT_TRUE(tandem::runtime::generateInput(info, 9, buffer, error))
        << error;
    for (size_t i = 0; i < 30; ++i) {
      const char *at = static_cast<const char *>(buffer.data()) + i * size;
      double value;
      if (c.runtime == tandem::runtime::ElementType::F32) {
        float f;
        std::memcpy(&f, at, 4);
        value = f;
      } else if (c.runtime == tandem::runtime::ElementType::I32) {
        int32_t v;
        std::memcpy(&v, at, 4);
        value = v;
      } else if (c.runtime == tandem::runtime::ElementType::I64) {
        int64_t v;
        std::memcpy(&v, at, 8);
        value = static_cast<double>(v);
      } else {
        std::memcpy(&value, at, 8);
      }
      EXPECT_EQ(value, expected.data[i]) << i;
    }
  }
}
