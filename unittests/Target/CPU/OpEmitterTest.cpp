//===- OpEmitterTest.cpp - every nn op, emitted vs the evaluator ----------===//
//
// Each case is a small function around one op (its float inputs are
// parameters, its integer inputs arguments). The test builds, per case, the
// function returning the op's result and a loss (sum of result × a random
// weight) that nn-autodiff differentiates, so the backward ops the op's
// gradient rule produces run through the emitter too. Everything is
// emitted as one translation unit, compiled once, and every function is
// compared with the evaluator on random inputs.
//
//===----------------------------------------------------------------------===//

#include "EmitterTestUtils.h"

#include "tandem/Dialect/NN/IR/NNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

#include "gtest/gtest.h"

#include <iostream>

using namespace tandem::cpu;
using namespace tandem::cpu::testing;

namespace {

struct OpCase {
  std::string name;
  /// Parameters the body reads: (suffix, type); read as %suffix.
  std::vector<std::pair<std::string, std::string>> params;
  /// Integer argument types, bound as %a0, %a1, ...
  std::vector<std::string> args;
  /// Ops computing %y.
  std::string body;
  /// The type of %y.
  std::string resultType;
  int64_t rank = 0;
  InputRange range = {};
  /// Also differentiate (false where the result has no useful gradient).
  bool grad = true;
};

InputRange positive() { return {0.5, 2.0, 4}; }

std::vector<OpCase> opCases() {
  std::vector<OpCase> cases;
  const std::string t48 = "tensor<4x8xf32>";
  for (const char *unary : {"neg", "exp", "tanh", "relu", "gelu", "silu", "sin",
                            "cos", "erf", "erfc", "stop_gradient"})
    cases.push_back({unary,
                     {{"x", t48}},
                     {},
                     llvm::formatv("%y = nn.{0} %x : {1}", unary, t48).str(),
                     t48,
                     2});
  for (const char *unary : {"log", "sqrt", "rsqrt"}) {
    cases.push_back({unary,
                     {{"x", t48}},
                     {},
                     llvm::formatv("%y = nn.{0} %x : {1}", unary, t48).str(),
                     t48,
                     2,
                     positive()});
  }
  cases.push_back(
      {"pow3", {{"x", t48}}, {}, "%y = nn.pow %x, 3.0 : " + t48, t48, 2});
  cases.push_back({"pow_half",
                   {{"x", t48}},
                   {},
                   "%y = nn.pow %x, 5.000000e-01 : " + t48,
                   t48,
                   2,
                   positive()});
  for (const char *binary : {"add", "sub", "mul", "div", "maximum", "minimum"})
    cases.push_back(
        {binary,
         {{"x", t48}, {"b", "tensor<8xf32>"}},
         {},
         llvm::formatv("%y = nn.{0} %x, %b : {1}, tensor<8xf32> -> {1}", binary,
                       t48)
             .str(),
         t48,
         2,
         std::string(binary) == "div" ? positive() : InputRange{}});
  // Both operands broadcast: the nested-loop form of a fused group.
  cases.push_back(
      {"add_outer",
       {{"c", "tensor<4x1xf32>"}, {"r", "tensor<1x8xf32>"}},
       {},
       "%y = nn.add %c, %r : tensor<4x1xf32>, tensor<1x8xf32> -> " + t48,
       t48,
       2});
  cases.push_back({"greater_equal_select",
                   {{"x", t48}, {"z", t48}},
                   {},
                   "%g = nn.greater_equal %x, %z : " + t48 + ", " + t48 +
                       " -> " + t48 + "\n  %y = nn.select %g, %x, %z : " + t48 +
                       ", " + t48,
                   t48,
                   2});
  cases.push_back({"select_scalar",
                   {{"x", t48}, {"z", t48}, {"c", "tensor<f32>"}},
                   {},
                   "%y = nn.select %c, %x, %z : tensor<f32>, " + t48,
                   t48,
                   2});
  cases.push_back({"matmul",
                   {{"x", t48}, {"w", "tensor<8x16xf32>"}},
                   {},
                   "%y = nn.matmul %x, %w : " + t48 +
                       ", tensor<8x16xf32> -> tensor<4x16xf32>",
                   "tensor<4x16xf32>",
                   2});
  cases.push_back({"matmul_trans",
                   {{"x", "tensor<8x4xf32>"}, {"w", "tensor<16x8xf32>"}},
                   {},
                   "%y = nn.matmul %x, %w {transpose_lhs, transpose_rhs} : "
                   "tensor<8x4xf32>, tensor<16x8xf32> -> tensor<4x16xf32>",
                   "tensor<4x16xf32>",
                   2});
  cases.push_back({"matmul_batched",
                   {{"x", "tensor<2x3x4x5xf32>"}, {"w", "tensor<2x3x6x5xf32>"}},
                   {},
                   "%y = nn.matmul %x, %w {transpose_rhs} : "
                   "tensor<2x3x4x5xf32>, tensor<2x3x6x5xf32> -> "
                   "tensor<2x3x4x6xf32>",
                   "tensor<2x3x4x6xf32>",
                   4});
  cases.push_back({"matmul_shared_rhs",
                   {{"x", "tensor<3x5x4xf32>"}, {"w", "tensor<5x7xf32>"}},
                   {},
                   "%y = nn.matmul %x, %w {transpose_lhs} : "
                   "tensor<3x5x4xf32>, tensor<5x7xf32> -> tensor<3x4x7xf32>",
                   "tensor<3x4x7xf32>",
                   3});
  cases.push_back({"softmax",
                   {{"x", t48}},
                   {},
                   "%y = nn.softmax %x {axis = 1 : i64} : " + t48,
                   t48,
                   2});
  cases.push_back({"softmax_axis0",
                   {{"x", "tensor<5x3x4xf32>"}},
                   {},
                   "%y = nn.softmax %x {axis = 0 : i64} : tensor<5x3x4xf32>",
                   "tensor<5x3x4xf32>",
                   3});
  cases.push_back({"log_softmax",
                   {{"x", t48}},
                   {},
                   "%y = nn.log_softmax %x {axis = 1 : i64} : " + t48,
                   t48,
                   2});
  cases.push_back({"layer_norm",
                   {{"x", "tensor<2x3x8xf32>"},
                    {"w", "tensor<8xf32>"},
                    {"b", "tensor<8xf32>"}},
                   {},
                   "%y = nn.layer_norm %x, %w, %b {epsilon = 1.0e-05 : f64} : "
                   "tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>",
                   "tensor<2x3x8xf32>",
                   3});
  cases.push_back({"rms_norm",
                   {{"x", t48}, {"w", "tensor<8xf32>"}},
                   {},
                   "%y = nn.rms_norm %x, %w {epsilon = 1.0e-06 : f64} : " +
                       t48 + ", tensor<8xf32>",
                   t48,
                   2});
  cases.push_back({"embedding",
                   {{"t", "tensor<10x8xf32>"}},
                   {"tensor<3x4xi32>"},
                   "%y = nn.embedding %t, %a0 : tensor<10x8xf32>, "
                   "tensor<3x4xi32> -> tensor<3x4x8xf32>",
                   "tensor<3x4x8xf32>",
                   3,
                   {-2.0, 2.0, 10}});
  // stop_gradient inside a fused group: the value flows, its gradient
  // does not (x's gradient is exp(x) through the mul's other operand only).
  cases.push_back(
      {"stop_gradient_fused",
       {{"x", t48}},
       {},
       "%e = nn.exp %x : " + t48 + "\n  %s = nn.stop_gradient %e : " + t48 +
           "\n  %y = nn.mul %s, %x : " + t48 + ", " + t48 + " -> " + t48,
       t48,
       2});
  cases.push_back({"one_hot",
                   {},
                   {"tensor<3x4xi32>"},
                   "%y = nn.one_hot %a0 {classes = 6 : i64} : "
                   "tensor<3x4xi32> -> tensor<3x4x6xf32>",
                   "tensor<3x4x6xf32>",
                   3,
                   {-2.0, 2.0, 6}});
  // jnp.take_along_axis: one_hot, mul and reduce_sum pick x[i, ids[i]].
  cases.push_back({"one_hot_take",
                   {{"x", "tensor<3x6xf32>"}},
                   {"tensor<3xi64>"},
                   "%h = nn.one_hot %a0 {classes = 6 : i64} : tensor<3xi64> "
                   "-> tensor<3x6xf32>\n  %m = nn.mul %h, %x : "
                   "tensor<3x6xf32>, tensor<3x6xf32> -> tensor<3x6xf32>\n  "
                   "%y = nn.reduce_sum %m [1] : tensor<3x6xf32> -> "
                   "tensor<3xf32>",
                   "tensor<3xf32>",
                   1,
                   {-2.0, 2.0, 6}});
  cases.push_back({"embedding_grad",
                   {{"c", "tensor<3x4x8xf32>"}},
                   {"tensor<3x4xi64>"},
                   "%y = nn.embedding_grad %c, %a0 : tensor<3x4x8xf32>, "
                   "tensor<3x4xi64> -> tensor<6x8xf32>",
                   "tensor<6x8xf32>",
                   2,
                   {-2.0, 2.0, 6}});
  cases.push_back({"cross_entropy",
                   {{"l", "tensor<2x3x10xf32>"}},
                   {"tensor<2x3xi32>"},
                   "%y = nn.cross_entropy %l, %a0 : tensor<2x3x10xf32>, "
                   "tensor<2x3xi32> -> tensor<f32>",
                   "tensor<f32>",
                   0,
                   {-2.0, 2.0, 10}});
  cases.push_back({"cross_entropy_grad",
                   {{"l", "tensor<6x10xf32>"}, {"g", "tensor<f32>"}},
                   {"tensor<6xi32>"},
                   "%y = nn.cross_entropy_grad %l, %a0, %g : tensor<6x10xf32>, "
                   "tensor<6xi32>, tensor<f32> -> tensor<6x10xf32>",
                   "tensor<6x10xf32>",
                   2,
                   {-2.0, 2.0, 10},
                   /*grad=*/false});
  cases.push_back({"reduce_sum",
                   {{"x", t48}},
                   {},
                   "%y = nn.reduce_sum %x [1] : " + t48 + " -> tensor<4xf32>",
                   "tensor<4xf32>",
                   1});
  cases.push_back(
      {"reduce_mean",
       {{"x", t48}},
       {},
       "%y = nn.reduce_mean %x [0] keepdims : " + t48 + " -> tensor<1x8xf32>",
       "tensor<1x8xf32>",
       2});
  cases.push_back({"reduce_max",
                   {{"x", "tensor<2x3x4xf32>"}},
                   {},
                   "%y = nn.reduce_max %x [0, 2] : tensor<2x3x4xf32> -> "
                   "tensor<3xf32>",
                   "tensor<3xf32>",
                   1});
  cases.push_back({"reshape",
                   {{"x", t48}},
                   {},
                   "%r = nn.reshape %x : " + t48 +
                       " to tensor<2x16xf32>\n  %y = nn.exp %r : "
                       "tensor<2x16xf32>",
                   "tensor<2x16xf32>",
                   2});
  cases.push_back({"transpose",
                   {{"x", "tensor<2x3x4xf32>"}},
                   {},
                   "%y = nn.transpose %x, [2, 0, 1] : tensor<2x3x4xf32> -> "
                   "tensor<4x2x3xf32>",
                   "tensor<4x2x3xf32>",
                   3});
  cases.push_back({"broadcast_to",
                   {{"b", "tensor<8xf32>"}},
                   {},
                   "%y = nn.broadcast_to %b : tensor<8xf32> to " + t48,
                   t48,
                   2});
  cases.push_back({"concat",
                   {{"p", "tensor<4x3xf32>"}, {"q", "tensor<4x5xf32>"}},
                   {},
                   "%y = nn.concat %p, %q {axis = 1 : i64} : "
                   "(tensor<4x3xf32>, tensor<4x5xf32>) -> " +
                       t48,
                   t48,
                   2});
  cases.push_back({"slice",
                   {{"x", "tensor<6x8xf32>"}},
                   {},
                   "%y = nn.slice %x [1, 0] to [5, 8] step [2, 3] : "
                   "tensor<6x8xf32> -> tensor<2x3xf32>",
                   "tensor<2x3xf32>",
                   2});
  cases.push_back({"split",
                   {{"x", "tensor<4x9xf32>"}},
                   {},
                   "%p, %q = nn.split %x {axis = 1 : i64, sizes = array<i64: "
                   "3, 6>} : tensor<4x9xf32> -> tensor<4x3xf32>, "
                   "tensor<4x6xf32>\n  %y = nn.concat %q, %p {axis = 1 : i64} "
                   ": (tensor<4x6xf32>, tensor<4x3xf32>) -> tensor<4x9xf32>",
                   "tensor<4x9xf32>",
                   2});
  cases.push_back(
      {"cast_f64",
       {{"x", t48}},
       {},
       "%d = nn.cast %x : " + t48 +
           " to tensor<4x8xf64>\n  %e = nn.tanh %d : tensor<4x8xf64>\n  "
           "%s = nn.reduce_sum %e [1] : tensor<4x8xf64> -> tensor<4xf64>\n  "
           "%y = nn.cast %s : tensor<4xf64> to tensor<4xf32>",
       "tensor<4xf32>",
       1});
  cases.push_back({"constant",
                   {{"x", "tensor<2x3xf32>"}},
                   {},
                   "%c = nn.constant dense<[[1.5, -2.0, 0.25], [3.0, 0.0, "
                   "-0.5]]> : tensor<2x3xf32>\n  %h = nn.constant "
                   "dense<0.75> : tensor<f32>\n  %m = nn.mul %x, %c : "
                   "tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>\n  "
                   "%y = nn.add %m, %h : tensor<2x3xf32>, tensor<f32> -> "
                   "tensor<2x3xf32>",
                   "tensor<2x3xf32>",
                   2});
  // The codecs, decoded right away: every payload type, blocks that do and
  // do not divide the rows; the gradient is straight through. The scales
  // are spelled "f32 >" so that the bf16 and f16 variants keep them f32.
  for (auto [name, payload, block, blocks] :
       {std::tuple<const char *, const char *, int, int>{"quantize_i8", "i8", 3,
                                                         3},
        {"quantize_e4m3", "f8E4M3FN", 8, 1},
        {"quantize_e5m2", "f8E5M2", 5, 2}}) {
    std::string q = llvm::formatv("tensor<4x8x{0}>", payload).str();
    std::string sc = llvm::formatv("tensor<4x{0}xf32 >", blocks).str();
    cases.push_back(
        {name,
         {{"x", t48}},
         {},
         llvm::formatv("%q, %s = nn.quantize %x {{block = {0}} : {1} to {2}, "
                       "{3}\n  %y = nn.dequantize %q, %s {{block = {0}} : "
                       "{2}, {3} to {1}",
                       block, t48, q, sc)
             .str(),
         t48,
         2});
  }
  cases.push_back(
      {"stage_end",
       {{"x", t48}},
       {},
       "%s = nn.stage_end %x : " + t48 + "\n  %y = nn.tanh %s : " + t48,
       t48,
       2});
  return cases;
}

std::string axesOf(int64_t rank) {
  std::string text = "[";
  for (int64_t d = 0; d < rank; ++d)
    text += (d ? ", " : "") + std::to_string(d);
  return text + "]";
}

/// The module holding every case's function and loss function.
std::string caseModule(llvm::ArrayRef<OpCase> cases) {
  std::string text = "module {\n";
  for (const OpCase &c : cases) {
    for (const auto &[suffix, type] : c.params)
      text += llvm::formatv("  nn.parameter @{0}.{1} : {2} = zeros\n", c.name,
                            suffix, type);
    text += llvm::formatv("  nn.parameter @{0}.weight : {1} = zeros\n", c.name,
                          c.resultType);
    std::string signature, reads;
    for (auto [i, type] : llvm::enumerate(c.args))
      signature += (i ? ", " : "") + llvm::formatv("%a{0}: {1}", i, type).str();
    for (const auto &[suffix, type] : c.params)
      reads += llvm::formatv("    %{0} = nn.param @{1}.{0} : {2}\n", suffix,
                             c.name, type);
    std::string body = "    " + c.body + "\n";
    size_t pos = 0;
    while ((pos = body.find("\n  ", pos)) != std::string::npos) {
      body.replace(pos, 3, "\n    ");
      pos += 5;
    }
    // Plain concatenation: the bodies hold braces formatv would parse.
    text += "  func.func @" + c.name + "(" + signature + ") -> " +
            c.resultType + " {\n" + reads + body +
            "    return %y : " + c.resultType + "\n  }\n";
    text += "  func.func @" + c.name + "_loss(" + signature +
            ") -> tensor<f32> {\n" + reads + body + "    %weight = nn.param @" +
            c.name + ".weight : " + c.resultType +
            "\n    %weighted = nn.mul %y, %weight : " + c.resultType + ", " +
            c.resultType + " -> " + c.resultType +
            "\n    %loss = nn.reduce_sum %weighted " + axesOf(c.rank) + " : " +
            c.resultType +
            " -> tensor<f32>\n    return %loss : "
            "tensor<f32>\n  }\n";
  }
  return text + "}\n";
}

class OpEmitter : public ::testing::Test {
protected:
  void SetUp() override {
    context = makeContext();
    cases = opCases();
    auto parsed = parseModule(*context, caseModule(cases));
    ASSERT_TRUE(static_cast<bool>(parsed))
        << llvm::toString(parsed.takeError());
    module = std::move(*parsed);
    for (const OpCase &c : cases) {
      if (!c.grad)
        continue;
      llvm::Error error =
          runPipeline(*module, "nn-autodiff{function=" + c.name + "_loss}");
      ASSERT_FALSE(static_cast<bool>(error))
          << c.name << ": " << llvm::toString(std::move(error));
    }
  }

  std::unique_ptr<mlir::MLIRContext> context;
  std::vector<OpCase> cases;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

TEST_F(OpEmitter, EveryOpForwardAndBackwardMatchesTheEvaluator) {
  std::vector<mlir::Operation *> functions;
  for (auto fn : module->getOps<mlir::func::FuncOp>())
    if (!fn.getName().ends_with("_loss")) // Its _grad includes it.
      functions.push_back(fn);
  auto compiled = emitAndCompile(functions);
  ASSERT_TRUE(static_cast<bool>(compiled))
      << llvm::toString(compiled.takeError());

  std::mt19937 rng(2024);
  for (const OpCase &c : cases) {
    tandem::eval::ParameterMap parameters;
    for (auto fn : module->getOps<mlir::func::FuncOp>())
      fn.walk([&](tandem::nn::ParamOp param) {
        std::string name = param.getName().str();
        if (!parameters.count(name))
          parameters[name] =
              randomTensor(llvm::cast<mlir::RankedTensorType>(param.getType()),
                           rng, c.range);
      });
    std::vector<std::string> names = {c.name};
    if (c.grad)
      names.push_back(c.name + "_loss_grad");
    for (const std::string &name : names) {
      SCOPED_TRACE(name);
      auto errors = compareWithEvaluator(*module, *compiled, name, parameters,
                                         rng, c.range);
      ASSERT_TRUE(static_cast<bool>(errors))
          << llvm::toString(errors.takeError());
      // Bitwise but for the GEMMs, which sum in f32 in OpenBLAS's order.
      double bound = nativeErrorBound(
          module->lookupSymbol<mlir::func::FuncOp>(name).getBody().front());
      double worst = 0.0;
      for (double error : *errors) {
        EXPECT_LE(error, bound);
        worst = std::max(worst, error);
      }
      std::cout << "[ emitter ] " << name << ": " << errors->size()
                << " result(s), max relative error " << worst << " (bound "
                << bound << ")\n";
    }
  }
}

/// The same cases with every f32 tensor in bf16, then in f16 (storage as
/// 16-bit patterns). Every op computes in double and rounds once, as the
/// evaluator, so everything but matmul matches it bit for bit. Matmuls
/// multiply float copies with BLAS and round the float product once more:
/// elements may differ by one unit in the last place of the type.
TEST(OpEmitterLowPrecision, EveryOpInBf16AndF16MatchesTheEvaluator) {
  for (auto [type, precision] :
       {std::pair<std::string, int>{"bf16", 8}, {"f16", 11}}) {
    SCOPED_TRACE(type);
    auto context = makeContext();
    std::vector<OpCase> cases = opCases();
    std::string text = caseModule(cases);
    for (size_t pos = 0; (pos = text.find("f32>", pos)) != std::string::npos;)
      text.replace(pos, 3, type);
    auto module = parseModule(*context, text);
    ASSERT_TRUE(static_cast<bool>(module))
        << llvm::toString(module.takeError());
    for (const OpCase &c : cases) {
      if (!c.grad)
        continue;
      llvm::Error error =
          runPipeline(**module, "nn-autodiff{function=" + c.name + "_loss}");
      ASSERT_FALSE(static_cast<bool>(error))
          << c.name << ": " << llvm::toString(std::move(error));
    }
    std::vector<mlir::Operation *> functions;
    for (auto fn : (**module).getOps<mlir::func::FuncOp>())
      if (!fn.getName().ends_with("_loss"))
        functions.push_back(fn);
    auto compiled = emitAndCompile(functions);
    ASSERT_TRUE(static_cast<bool>(compiled))
        << llvm::toString(compiled.takeError());

    // Two units in the last place, relative: a bound only a wrong product
    // (not a second rounding) exceeds.
    const double matmulBound = std::ldexp(2.0, 1 - precision);
    std::mt19937 rng(2025);
    double worstMatmul = 0.0;
    for (const OpCase &c : cases) {
      tandem::eval::ParameterMap parameters;
      for (auto fn : (**module).getOps<mlir::func::FuncOp>())
        fn.walk([&](tandem::nn::ParamOp param) {
          std::string name = param.getName().str();
          if (!parameters.count(name))
            parameters[name] = randomTensor(
                llvm::cast<mlir::RankedTensorType>(param.getType()), rng,
                c.range);
        });
      bool matmul = llvm::StringRef(c.name).starts_with("matmul");
      std::vector<std::string> names = {c.name};
      if (c.grad)
        names.push_back(c.name + "_loss_grad");
      for (const std::string &name : names) {
        SCOPED_TRACE(name);
        auto errors = compareWithEvaluator(**module, *compiled, name,
                                           parameters, rng, c.range);
        ASSERT_TRUE(static_cast<bool>(errors))
            << llvm::toString(errors.takeError());
        for (double error : *errors) {
          if (matmul) {
            EXPECT_LE(error, matmulBound);
            worstMatmul = std::max(worstMatmul, error);
          } else {
            EXPECT_EQ(error, 0.0) << "not bitwise the evaluator's";
          }
        }
      }
    }
    std::cout << "[ emitter ] " << type << ": " << cases.size()
              << " op cases, all but matmul bitwise; matmul max relative error "
              << worstMatmul << " (bound " << matmulBound << ")\n";
  }
}

/// The cases exercise every op the emitter claims, forward or through the
/// backward ops nn-autodiff produced (so a new op in supportedOps() without
/// a case fails here).
TEST_F(OpEmitter, CasesCoverEverySupportedOp) {
  llvm::StringSet<> seen;
  module->walk(
      [&](mlir::Operation *op) { seen.insert(op->getName().getStringRef()); });
  for (const std::string &op : supportedOps())
    EXPECT_TRUE(seen.contains(op)) << op << " has no emitter case";
}

TEST_F(OpEmitter, OutOfRangeIdsReturnAnErrorCode) {
  auto fn = module->lookupSymbol<mlir::func::FuncOp>("embedding");
  ASSERT_TRUE(fn);
  auto compiled = emitAndCompile({fn.getOperation()});
  ASSERT_TRUE(static_cast<bool>(compiled))
      << llvm::toString(compiled.takeError());
  const EmittedFunction *info = compiled->find("embedding");
  ASSERT_NE(info, nullptr);
  std::mt19937 rng(1);
  tandem::eval::Tensor ids = randomTensor(info->argumentTypes[0], rng, {});
  ids.data[5] = 10; // The vocabulary is [0, 10).
  tandem::eval::Tensor table =
      randomTensor(info->parameters[0].second, rng, {});
  auto results = runCompiled(*compiled, *info, {ids, table});
  ASSERT_FALSE(static_cast<bool>(results));
  EXPECT_EQ(llvm::toString(results.takeError()), "entry point returned 1");
}

// A constant returned as it is (the library copies it into the result) keeps
// its bytes under the tuning that GCC 12 miscompiled such copies with
// (Prelude.h, tk_opaque): rows of a causal mask, where a 32-byte piece
// whose first half is ones ([1 1 1 1 0 0 0 0]) came out all ones. AVX2
// instructions with icelake-server's tuning, so any machine of ours runs
// it; the copy went wrong there before tk_opaque.
TEST(OpEmitterConstants, ACopiedConstantKeepsItsBytesUnderEveryTuning) {
  auto context = makeContext();
  std::string mask;
  for (int i = 0; i < 8; ++i) {
    mask += i ? ", [" : "[";
    for (int j = 0; j < 8; ++j)
      mask += std::string(j ? ", " : "") + (j <= i ? "1.0" : "0.0");
    mask += "]";
  }
  auto parsed = parseModule(
      *context, "func.func @mask() -> tensor<8x8xf32> {\n  %c = nn.constant "
                "dense<[" +
                    mask +
                    "]> : tensor<8x8xf32>\n  return %c : tensor<8x8xf32>\n}\n");
  ASSERT_TRUE(static_cast<bool>(parsed)) << llvm::toString(parsed.takeError());
  auto fn = (*parsed)->lookupSymbol<mlir::func::FuncOp>("mask");
  CompileOptions compile;
  compile.arch = "x86-64-v3";
  compile.extraFlags = {"-mtune=icelake-server"};
  auto compiled = emitAndCompile({fn.getOperation()}, {}, compile);
  ASSERT_TRUE(static_cast<bool>(compiled))
      << llvm::toString(compiled.takeError());
  const EmittedFunction *info = compiled->find("mask");
  ASSERT_NE(info, nullptr);
  auto results = runCompiled(*compiled, *info, {});
  ASSERT_TRUE(static_cast<bool>(results))
      << llvm::toString(results.takeError());
  ASSERT_EQ(results->size(), 1u);
  const tandem::eval::Tensor &got = results->front();
  ASSERT_EQ(got.data.size(), 64u);
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j)
      EXPECT_EQ(got.data[i * 8 + j], j <= i ? 1.0 : 0.0)
          << "row " << i << ", column " << j;
}

// nn.one_hot reports an id outside its classes as nn.embedding does.
TEST_F(OpEmitter, OutOfRangeOneHotIdsReturnAnErrorCode) {
  auto fn = module->lookupSymbol<mlir::func::FuncOp>("one_hot");
  ASSERT_TRUE(fn);
  auto compiled = emitAndCompile({fn.getOperation()});
  ASSERT_TRUE(static_cast<bool>(compiled))
      << llvm::toString(compiled.takeError());
  const EmittedFunction *info = compiled->find("one_hot");
  ASSERT_NE(info, nullptr);
  std::mt19937 rng(1);
  for (double bad : {6.0, -1.0}) {
    tandem::eval::Tensor ids =
        randomTensor(info->argumentTypes[0], rng, {-2.0, 2.0, 6});
    auto good = runCompiled(*compiled, *info, {ids});
    ASSERT_TRUE(static_cast<bool>(good)) << llvm::toString(good.takeError());
    ids.data[7] = bad; // The classes are [0, 6).
    auto results = runCompiled(*compiled, *info, {ids});
    ASSERT_FALSE(static_cast<bool>(results));
    EXPECT_EQ(llvm::toString(results.takeError()), "entry point returned 1");
  }
}

} // namespace
