//===- FusionPropertyTest.cpp - random elementwise DAGs fuse into one loop ===//
//
// Seeded random DAGs of elementwise and broadcasting ops over one iteration
// shape: inputs of broadcastable shapes, every op after the first reading at
// least one earlier op's value, one to three results. Each must compile into
// exactly one fused kernel (the emitter's report) and match the evaluator.
//
//===----------------------------------------------------------------------===//

#include "EmitterTestUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "gtest/gtest.h"

#include <iostream>

using namespace tandem::cpu;
using namespace tandem::cpu::testing;

namespace {

std::string typeOf(llvm::ArrayRef<int64_t> shape) {
  std::string text = "tensor<";
  for (int64_t size : shape)
    text += std::to_string(size) + "x";
  return text + "f32>";
}

/// One random DAG as a function @dag<index>; `numOps` is set to the number
/// of elementwise ops it holds.
std::string randomDag(unsigned index, std::mt19937 &rng, unsigned &numOps) {
  const std::vector<std::vector<int64_t>> shapes = {
      {5, 7}, {3, 4, 6}, {16}, {2, 3, 5}, {33, 9}};
  std::vector<int64_t> shape = shapes[rng() % shapes.size()];
  std::string full = typeOf(shape);

  // Inputs: the first has the full shape; the others broadcast to it.
  unsigned numInputs = 2 + rng() % 3;
  std::vector<std::string> inputTypes = {full};
  for (unsigned i = 1; i < numInputs; ++i) {
    std::vector<int64_t> in(shape);
    switch (rng() % 4) {
    case 0: // Full.
      break;
    case 1: // Some dimensions 1.
      for (int64_t &size : in)
        if (rng() % 2)
          size = 1;
      break;
    case 2: // Leading dimensions dropped.
      in.erase(in.begin(), in.begin() + rng() % in.size());
      break;
    case 3: // A scalar.
      in.clear();
      break;
    }
    inputTypes.push_back(typeOf(in));
  }

  std::string body;
  std::vector<std::string> inputs, values;
  for (unsigned i = 0; i < numInputs; ++i)
    inputs.push_back("%in" + std::to_string(i));
  auto anyOperand = [&]() -> std::pair<std::string, std::string> {
    if (rng() % 3 == 0) {
      unsigned i = rng() % numInputs;
      return {inputs[i], inputTypes[i]};
    }
    if (rng() % 5 == 0) {
      std::string name = "%c" + std::to_string(values.size());
      body += "    " + name + " = nn.constant dense<" +
              std::to_string(0.25 * (1 + rng() % 7)) + "> : tensor<f32>\n";
      return {name, "tensor<f32>"};
    }
    return {values[rng() % values.size()], full};
  };

  unsigned steps = 3 + rng() % 8;
  numOps = steps;
  for (unsigned k = 0; k < steps; ++k) {
    std::string name = "%v" + std::to_string(k);
    std::string line;
    if (k == 0) {
      // The first op reads inputs only: a broadcast or a binary op.
      if (rng() % 2) {
        unsigned i = rng() % numInputs;
        line = name + " = nn.broadcast_to " + inputs[i] + " : " +
               inputTypes[i] + " to " + full;
      } else {
        unsigned i = 1 + rng() % (numInputs - 1);
        line = name + " = nn.mul %in0, " + inputs[i] + " : " + full + ", " +
               inputTypes[i] + " -> " + full;
      }
    } else {
      std::string prior = values[rng() % values.size()];
      const char *unary[] = {"neg",  "exp",  "tanh", "relu",
                             "gelu", "silu", "sin",  "cos"};
      const char *binary[] = {"add",     "sub",     "mul",
                              "maximum", "minimum", "greater_equal"};
      switch (rng() % 4) {
      case 0: {
        const char *op = unary[rng() % std::size(unary)];
        // Bounded inputs for exp so values stay finite and comparable.
        if (std::string(op) == "exp") {
          std::string bounded = "%t" + std::to_string(k);
          body +=
              "    " + bounded + " = nn.tanh " + prior + " : " + full + "\n";
          prior = bounded;
          ++numOps;
        }
        line = name + " = nn." + op + " " + prior + " : " + full;
        break;
      }
      case 3: {
        auto [cond, condType] = anyOperand();
        std::string other = values[rng() % values.size()];
        line = name + " = nn.select " + cond + ", " + prior + ", " + other +
               " : " + condType + ", " + full;
        break;
      }
      default: {
        auto [other, otherType] = anyOperand();
        const char *op = binary[rng() % std::size(binary)];
        bool swap = rng() % 2;
        line = name + " = nn." + op + " " + (swap ? other : prior) + ", " +
               (swap ? prior : other) + " : " + (swap ? otherType : full) +
               ", " + (swap ? full : otherType) + " -> " + full;
        break;
      }
      }
    }
    body += "    " + line + "\n";
    values.push_back(name);
  }

  // Results: the last value and up to two distinct intermediate ones (a
  // value returned twice would need a copy).
  std::vector<std::string> results = {values.back()};
  for (unsigned r = rng() % 3; r > 0; --r) {
    std::string value = values[rng() % values.size()];
    if (!llvm::is_contained(results, value))
      results.push_back(value);
  }
  std::string signature, resultTypes, returned;
  for (unsigned i = 0; i < numInputs; ++i)
    signature += (i ? ", " : "") + inputs[i] + ": " + inputTypes[i];
  for (auto [i, result] : llvm::enumerate(results)) {
    resultTypes += (i ? ", " : "") + full;
    returned += (i ? ", " : "") + result;
  }
  return "  func.func @dag" + std::to_string(index) + "(" + signature +
         ") -> (" + resultTypes + ") {\n" + body + "    return " + returned +
         " : " + resultTypes + "\n  }\n";
}

TEST(FusionProperty, RandomElementwiseDagsFuseIntoOneKernel) {
  constexpr unsigned kDags = 40;
  std::mt19937 rng(12345);
  std::string text = "module {\n";
  std::vector<unsigned> opCounts(kDags);
  for (unsigned i = 0; i < kDags; ++i)
    text += randomDag(i, rng, opCounts[i]);
  text += "}\n";

  auto context = makeContext();
  auto module = parseModule(*context, text);
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  std::vector<mlir::Operation *> functions;
  for (auto fn : (**module).getOps<mlir::func::FuncOp>())
    functions.push_back(fn);
  auto compiled = emitAndCompile(functions);
  ASSERT_TRUE(static_cast<bool>(compiled))
      << llvm::toString(compiled.takeError()) << "\n"
      << text;

  double worst = 0.0;
  for (unsigned i = 0; i < kDags; ++i) {
    std::string name = "dag" + std::to_string(i);
    SCOPED_TRACE(name);
    const EmittedFunction *info = compiled->find(name);
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->numKernels, 1u);
    EXPECT_EQ(info->numFusedGroups, 1u);
    EXPECT_EQ(info->numFusedOps, opCounts[i]);
    EXPECT_EQ(info->scratchBytes, 0u) << "intermediates were materialized";
    auto errors = compareWithEvaluator(**module, *compiled, name, {}, rng, {});
    ASSERT_TRUE(static_cast<bool>(errors))
        << llvm::toString(errors.takeError());
    for (double error : *errors) {
      EXPECT_LE(error, 1e-5);
      worst = std::max(worst, error);
    }
  }
  std::cout << "[ emitter ] " << kDags << " random DAGs: max relative error "
            << worst << "\n";
}

} // namespace
