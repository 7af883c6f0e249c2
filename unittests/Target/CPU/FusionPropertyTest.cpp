//===- FusionPropertyTest.cpp - random elementwise DAGs fuse into one loop ===//
//
// Seeded random DAGs of elementwise and broadcasting ops over one iteration
// shape: inputs of broadcastable shapes, every op after the first reading at
// least one earlier op's value, one to three results. Each must compile into
// exactly one fused kernel (the emitter's report) and match the evaluator.
// Then the same around a reduction (prologue over its input, epilogue over
// its result) and after a matmul (its epilogue): one kernel each, no
// scratch, and bitwise the results of the unfused code path.
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
      const char *unary[] = {"neg",  "exp",  "tanh",         "relu",
                             "gelu", "silu", "sin",          "cos",
                             "erf",  "erfc", "stop_gradient"};
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
    // Elementwise ops compute as the evaluator does (in double, rounded
    // once per op): fusion keeps every bit.
    for (double error : *errors) {
      EXPECT_EQ(error, 0.0);
      worst = std::max(worst, error);
    }
  }
  std::cout << "[ emitter ] " << kDags << " random DAGs: max relative error "
            << worst << "\n";
}

/// A shape that broadcasts to `shape`: itself, some dimensions 1, leading
/// dimensions dropped, or a scalar.
std::vector<int64_t> broadcastable(std::mt19937 &rng,
                                   const std::vector<int64_t> &shape) {
  std::vector<int64_t> in(shape);
  switch (rng() % 4) {
  case 0:
    break;
  case 1:
    for (int64_t &size : in)
      if (rng() % 2)
        size = 1;
    break;
  case 2:
    if (!in.empty())
      in.erase(in.begin(), in.begin() + rng() % in.size());
    break;
  case 3:
    in.clear();
    break;
  }
  return in;
}

/// A random elementwise chain of `steps` ops over type `full`: the first op
/// reads `seed` (once: later ops never read it), every later op at least one
/// earlier chain value; other operands are `inputs` (name, type), splat
/// constants or chain values. `smooth` leaves out the ops whose result
/// jumps (greater_equal, select), for chains whose seed is only close to
/// the evaluator's (a GEMM product). Returns the chain's values; `numOps`
/// grows by the ops written.
std::vector<std::string>
appendChain(std::mt19937 &rng, std::string &body, const std::string &prefix,
            const std::string &full, const std::string &seed,
            const std::vector<std::pair<std::string, std::string>> &inputs,
            unsigned steps, bool smooth, unsigned &numOps) {
  std::vector<std::string> values;
  auto anyOperand = [&]() -> std::pair<std::string, std::string> {
    if (!inputs.empty() && rng() % 3 == 0)
      return inputs[rng() % inputs.size()];
    if (rng() % 5 == 0) {
      std::string name = "%" + prefix + "c" + std::to_string(numOps);
      body += "    " + name + " = nn.constant dense<" +
              std::to_string(0.25 * (1 + rng() % 7)) + "> : tensor<f32>\n";
      return {name, "tensor<f32>"};
    }
    return {values[rng() % values.size()], full};
  };
  const char *unary[] = {"neg", "exp", "tanh", "relu", "gelu",         "silu",
                         "sin", "cos", "erf",  "erfc", "stop_gradient"};
  const char *binary[] = {"add",     "sub",     "mul",
                          "maximum", "minimum", "greater_equal"};
  for (unsigned k = 0; k < steps; ++k) {
    std::string name = "%" + prefix + std::to_string(k);
    std::string prior = k == 0 ? seed : values[rng() % values.size()];
    unsigned kind = rng() % 4;
    if (k == 0 && kind == 3)
      kind = 1; // The seed is read once: no select with two chain values.
    if (smooth && kind == 3)
      kind = 0;
    if (kind == 0) {
      const char *op = unary[rng() % std::size(unary)];
      if (std::string(op) == "exp") {
        // Bounded inputs for exp so values stay finite and comparable.
        std::string bounded = "%" + prefix + "t" + std::to_string(k);
        body += "    " + bounded + " = nn.tanh " + prior + " : " + full + "\n";
        prior = bounded;
        ++numOps;
      }
      body += "    " + name + " = nn." + op + " " + prior + " : " + full + "\n";
    } else if (kind == 3) {
      auto [cond, condType] = anyOperand();
      std::string other = values[rng() % values.size()];
      body += "    " + name + " = nn.select " + cond + ", " + prior + ", " +
              other + " : " + condType + ", " + full + "\n";
    } else {
      std::pair<std::string, std::string> other;
      if (k == 0)
        other = inputs.empty() ? std::pair<std::string, std::string>(
                                     "%" + prefix + "c", "tensor<f32>")
                               : inputs[rng() % inputs.size()];
      else
        other = anyOperand();
      if (k == 0 && inputs.empty())
        body += "    %" + prefix +
                "c = nn.constant dense<0.75> : "
                "tensor<f32>\n";
      const char *op = binary[rng() % (std::size(binary) - (smooth ? 1 : 0))];
      bool swap = rng() % 2;
      body += "    " + name + " = nn." + op + " " +
              (swap ? other.first : prior) + ", " +
              (swap ? prior : other.first) + " : " +
              (swap ? other.second : full) + ", " +
              (swap ? full : other.second) + " -> " + full + "\n";
    }
    ++numOps;
    values.push_back(name);
  }
  return values;
}

std::string
signatureOf(const std::vector<std::pair<std::string, std::string>> &arguments) {
  std::string text;
  for (auto [i, argument] : llvm::enumerate(arguments))
    text += (i ? ", " : "") + argument.first + ": " + argument.second;
  return text;
}

/// One random reduction with an elementwise prologue (over its input) and
/// epilogue (over its result) as @red<index>; `numOps` counts the
/// elementwise ops.
std::string randomReduction(unsigned index, std::mt19937 &rng,
                            unsigned &numOps) {
  const std::vector<std::vector<int64_t>> shapes = {
      {5, 7}, {3, 4, 6}, {16}, {2, 3, 5}, {33, 9}, {3, 130}, {2, 70, 3}};
  std::vector<int64_t> shape = shapes[rng() % shapes.size()];
  std::string full = typeOf(shape);
  std::vector<int64_t> axes, resultShape, keptShape;
  bool keepdims = rng() % 2;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
    if (rng() % 2)
      axes.push_back(d);
  if (axes.empty())
    axes.push_back(rng() % shape.size());
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    bool reduced = llvm::is_contained(axes, d);
    if (!reduced)
      keptShape.push_back(shape[d]);
    if (!reduced || keepdims)
      resultShape.push_back(reduced ? 1 : shape[d]);
  }
  std::string result = typeOf(resultShape);

  std::vector<std::pair<std::string, std::string>> arguments = {{"%x", full}};
  std::vector<std::pair<std::string, std::string>> prologueInputs, epiInputs;
  for (unsigned i = rng() % 3; i > 0; --i) {
    std::string name = "%p" + std::to_string(i);
    prologueInputs.push_back({name, typeOf(broadcastable(rng, shape))});
    arguments.push_back(prologueInputs.back());
  }
  for (unsigned i = rng() % 3; i > 0; --i) {
    std::string name = "%e" + std::to_string(i);
    epiInputs.push_back({name, typeOf(broadcastable(rng, resultShape))});
    arguments.push_back(epiInputs.back());
  }
  std::string body;
  numOps = 0;
  std::vector<std::string> prologue =
      appendChain(rng, body, "v", full, "%x", prologueInputs, 1 + rng() % 5,
                  /*smooth=*/false, numOps);
  const char *reductions[] = {"reduce_sum", "reduce_mean", "reduce_max"};
  std::string axesText;
  for (auto [i, axis] : llvm::enumerate(axes))
    axesText += (i ? ", " : "") + std::to_string(axis);
  body += "    %r = nn." + std::string(reductions[rng() % 3]) + " " +
          prologue.back() + " [" + axesText + "]" +
          (keepdims ? " keepdims" : "") + " : " + full + " -> " + result + "\n";
  std::vector<std::string> epilogue =
      appendChain(rng, body, "w", result, "%r", epiInputs, 1 + rng() % 4,
                  /*smooth=*/false, numOps);

  // The epilogue's last value; sometimes the sum itself and a prologue
  // value too (stored from inside the reduction's loop).
  std::vector<std::pair<std::string, std::string>> results = {
      {epilogue.back(), result}};
  if (rng() % 3 == 0)
    results.push_back({"%r", result});
  if (rng() % 3 == 0)
    results.push_back({prologue[rng() % prologue.size()], full});
  std::string resultTypes, returned;
  for (auto [i, r] : llvm::enumerate(results)) {
    resultTypes += (i ? ", " : "") + r.second;
    returned += (i ? ", " : "") + r.first;
  }
  return "  func.func @red" + std::to_string(index) + "(" +
         signatureOf(arguments) + ") -> (" + resultTypes + ") {\n" + body +
         "    return " + returned + " : " + resultTypes + "\n  }\n";
}

/// One random matmul whose product only a random elementwise chain reads
/// (bias, activation, residual), as @mm<index>; `numOps` counts the chain.
std::string randomGemmEpilogue(unsigned index, std::mt19937 &rng,
                               unsigned &numOps) {
  const int64_t ms[] = {5, 16, 33}, ks[] = {3, 8, 20}, ns[] = {7, 16, 40};
  int64_t m = ms[rng() % 3], k = ks[rng() % 3], n = ns[rng() % 3];
  bool transLhs = rng() % 2, transRhs = rng() % 2;
  int64_t batch = rng() % 3 == 0 ? 2 : 0;
  if (batch)
    transLhs = false; // A shared rhs with batched rows: one tall GEMM.
  std::vector<int64_t> lhs =
      transLhs ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k};
  std::vector<int64_t> rhs =
      transRhs ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n};
  std::vector<int64_t> out = {m, n};
  if (batch) {
    lhs.insert(lhs.begin(), batch);
    out.insert(out.begin(), batch);
  }
  std::string full = typeOf(out);
  std::vector<std::pair<std::string, std::string>> arguments = {
      {"%x", typeOf(lhs)}, {"%w", typeOf(rhs)}};
  std::vector<std::pair<std::string, std::string>> inputs;
  for (unsigned i = 1 + rng() % 2; i > 0; --i) {
    // A bias (the last dimension), a residual (full) or any broadcast.
    std::vector<int64_t> shape =
        i == 1 ? std::vector<int64_t>{n}
               : (rng() % 2 ? out : broadcastable(rng, out));
    inputs.push_back({"%b" + std::to_string(i), typeOf(shape)});
    arguments.push_back(inputs.back());
  }
  std::string body = "    %h = nn.matmul %x, %w";
  if (transLhs || transRhs)
    body += std::string(" {") + (transLhs ? "transpose_lhs" : "") +
            (transLhs && transRhs ? ", " : "") +
            (transRhs ? "transpose_rhs" : "") + "}";
  body += " : " + typeOf(lhs) + ", " + typeOf(rhs) + " -> " + full + "\n";
  numOps = 0;
  std::vector<std::string> chain =
      appendChain(rng, body, "v", full, "%h", inputs, 1 + rng() % 5,
                  /*smooth=*/true, numOps);
  std::vector<std::string> results = {chain.back()};
  if (rng() % 3 == 0 && chain.size() > 1)
    results.push_back(chain[rng() % (chain.size() - 1)]);
  std::string resultTypes, returned;
  for (auto [i, r] : llvm::enumerate(results)) {
    resultTypes += (i ? ", " : "") + full;
    returned += (i ? ", " : "") + r;
  }
  return "  func.func @mm" + std::to_string(index) + "(" +
         signatureOf(arguments) + ") -> (" + resultTypes + ") {\n" + body +
         "    return " + returned + " : " + resultTypes + "\n  }\n";
}

/// Emits `text` twice, with the fusion under test and without it, and
/// checks every function of it: one kernel holding all `opCounts[i]`
/// elementwise ops and no scratch memory, evaluator errors within `bound`
/// (0: bitwise equal), and bitwise the unfused code's results.
void checkFusedAgainstUnfused(const std::string &text,
                              const std::string &prefix,
                              const std::vector<unsigned> &opCounts,
                              const EmitOptions &unfusedOptions,
                              double amplification, bool reductions) {
  auto context = makeContext();
  auto module = parseModule(*context, text);
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  std::vector<mlir::Operation *> functions;
  for (auto fn : (**module).getOps<mlir::func::FuncOp>())
    functions.push_back(fn);
  auto fused = emitAndCompile(functions);
  ASSERT_TRUE(static_cast<bool>(fused))
      << llvm::toString(fused.takeError()) << "\n"
      << text;
  auto unfused = emitAndCompile(functions, unfusedOptions);
  ASSERT_TRUE(static_cast<bool>(unfused))
      << llvm::toString(unfused.takeError());

  std::mt19937 rng(777);
  double worst = 0.0;
  for (unsigned i = 0; i < opCounts.size(); ++i) {
    std::string name = prefix + std::to_string(i);
    SCOPED_TRACE(name);
    const EmittedFunction *info = fused->find(name);
    const EmittedFunction *plain = unfused->find(name);
    ASSERT_NE(info, nullptr);
    ASSERT_NE(plain, nullptr);
    EXPECT_EQ(info->numKernels, 1u);
    EXPECT_EQ(info->numFusedGroups, 1u);
    EXPECT_EQ(info->numFusedOps, opCounts[i]);
    EXPECT_EQ(info->numFusedReductions, reductions ? 1u : 0u);
    EXPECT_EQ(info->numGemmEpilogues, reductions ? 0u : 1u);
    EXPECT_EQ(info->scratchBytes, 0u) << "intermediates were materialized";
    EXPECT_GT(plain->numKernels, 1u) << "the unfused path fused";
    auto errors = compareWithEvaluator(**module, *fused, name, {}, rng, {});
    ASSERT_TRUE(static_cast<bool>(errors))
        << llvm::toString(errors.takeError());
    // Reductions sum in double in row-major order, as the evaluator: exact;
    // a GEMM sums in f32 in OpenBLAS's order.
    double bound = amplification *
                   nativeErrorBound((**module)
                                        .lookupSymbol<mlir::func::FuncOp>(name)
                                        .getBody()
                                        .front());
    for (double error : *errors) {
      EXPECT_LE(error, bound);
      worst = std::max(worst, error);
    }
    auto differing = countDifferingResults(*fused, *unfused, name, {}, rng, {});
    ASSERT_TRUE(static_cast<bool>(differing))
        << llvm::toString(differing.takeError());
    EXPECT_EQ(*differing, 0u) << "fused and unfused results differ";
  }
  std::cout << "[ emitter ] " << opCounts.size() << " random " << prefix
            << " DAGs: max relative error " << worst << "\n";
}

TEST(FusionProperty, RandomReductionsFuseTheirPrologueAndEpilogue) {
  constexpr unsigned kDags = 40;
  std::mt19937 rng(2024);
  std::string text = "module {\n";
  std::vector<unsigned> opCounts(kDags);
  for (unsigned i = 0; i < kDags; ++i)
    text += randomReduction(i, rng, opCounts[i]);
  text += "}\n";
  EmitOptions unfused;
  unfused.fuseReductions = false;
  checkFusedAgainstUnfused(text, "red", opCounts, unfused,
                           /*amplification=*/1.0, /*reductions=*/true);
}

TEST(FusionProperty, RandomGemmEpiloguesRunInPlace) {
  constexpr unsigned kDags = 30;
  std::mt19937 rng(4242);
  std::string text = "module {\n";
  std::vector<unsigned> opCounts(kDags);
  for (unsigned i = 0; i < kDags; ++i)
    text += randomGemmEpilogue(i, rng, opCounts[i]);
  text += "}\n";
  EmitOptions unfused;
  unfused.fuseGemmEpilogues = false;
  // The chain after the GEMM can amplify its rounding by the chain's
  // condition number, which nativeErrorBound takes as 1 and a random chain
  // of subtractions and divisions does not bound: these chains (a fixed
  // seed, the same on every machine) are allowed a factor of 16. The exact
  // claim, fused equals unfused bitwise, is checked beside it.
  checkFusedAgainstUnfused(text, "mm", opCounts, unfused,
                           /*amplification=*/16.0, /*reductions=*/false);
}

} // namespace
