//===- FusionPropertyTest.cpp - random fused groups in emulation ---------===//
//
// Seeded random DAGs of elementwise and broadcasting f32 ops over one
// iteration shape (inputs of broadcastable shapes, every op after the first
// reading an earlier value, one to three results), as the CPU emitter's
// property test builds them. Each must become one kernel launch, and its
// emulated results must match the evaluator within a bound the generator
// derives alongside the DAG: per value a magnitude M and an absolute error
// E (units of 2^-24), propagated through each op's Lipschitz constant on
// its inputs' range plus the op's own error (docs/cuda-backend.md,
// "Numerics": its units for the transcendentals, and one rounding of the
// result on each side). Comparisons and selects are left out: a difference
// in the last bit may flip them, which no error bound covers.
//
//===----------------------------------------------------------------------===//

#include "EmulationBuild.h"

#include "tandem/Runtime/FragmentABI.h"
#include "tandem/Target/CUDA/CUDABackend.h"
#include "tandem/Target/CUDA/CudaEmitter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FileSystem.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <iostream>

using namespace tandem;

namespace {

constexpr double kU = 0x1p-24;

std::string typeOf(const std::vector<int64_t> &shape) {
  std::string text = "tensor<";
  for (int64_t size : shape)
    text += std::to_string(size) + "x";
  return text + "f32>";
}

/// A value's bound: |value| <= magnitude, |emulated - evaluator| <= error.
struct Bound {
  double magnitude, error;
};

struct Dag {
  std::string text;
  /// Per result, in order.
  std::vector<Bound> results;
};

/// One random DAG as @dag<index>, inputs in [-2, 2].
Dag randomDag(unsigned index, std::mt19937 &rng) {
  const std::vector<std::vector<int64_t>> shapes = {
      {5, 7}, {3, 4, 6}, {16}, {2, 3, 5}, {33, 9}};
  std::vector<int64_t> shape = shapes[rng() % shapes.size()];
  std::string full = typeOf(shape);
  unsigned numInputs = 2 + rng() % 3;
  std::vector<std::string> inputs, inputTypes;
  for (unsigned i = 0; i < numInputs; ++i) {
    std::vector<int64_t> in(shape);
    if (i > 0)
      switch (rng() % 4) {
      case 1:
        for (int64_t &size : in)
          if (rng() % 2)
            size = 1;
        break;
      case 2:
        in.erase(in.begin(), in.begin() + rng() % in.size());
        break;
      case 3:
        in.clear();
        break;
      default:
        break;
      }
    inputs.push_back("%in" + std::to_string(i));
    inputTypes.push_back(typeOf(in));
  }
  std::string body;
  std::vector<std::string> values;
  std::vector<Bound> bounds;
  // A value's own rounding to f32 on each side.
  auto rounded = [](double magnitude, double error, double units) {
    return Bound{magnitude, error + (units + 2) * kU * magnitude};
  };
  unsigned steps = 3 + rng() % 8;
  for (unsigned k = 0; k < steps; ++k) {
    std::string name = "%v" + std::to_string(k);
    if (k == 0) {
      unsigned i = 1 + rng() % (numInputs - 1);
      body += "    " + name + " = nn.mul %in0, " + inputs[i] + " : " + full +
              ", " + inputTypes[i] + " -> " + full + "\n";
      bounds.push_back(rounded(4, 0, 0));
      values.push_back(name);
      continue;
    }
    unsigned pick = rng() % values.size();
    std::string prior = values[pick];
    Bound a = bounds[pick];
    std::string line;
    Bound out;
    switch (rng() % 3) {
    case 0: {
      // Unary: the Lipschitz constant on |x| <= M, the result's magnitude,
      // the op's own units (relative to the result, or gelu's absolute).
      switch (rng() % 11) {
      case 0:
        line = "nn.neg " + prior;
        out = {a.magnitude, a.error};
        break;
      case 1:
        line = "nn.relu " + prior;
        out = {a.magnitude, a.error};
        break;
      case 2:
        line = "nn.tanh " + prior;
        out = rounded(std::min(1.0, a.magnitude), a.error, 6);
        break;
      case 3:
        line = "nn.sin " + prior;
        out = rounded(1.0, a.error, 4);
        break;
      case 4:
        line = "nn.cos " + prior;
        out = rounded(1.0, a.error, 4);
        break;
      case 5:
        // |silu'| <= 1.1, |silu(x)| <= |x|.
        line = "nn.silu " + prior;
        out = rounded(a.magnitude, 1.1 * a.error, 8);
        break;
      case 6:
        // |gelu'| <= 1.13, |gelu(x)| <= |x|; 12 units of max(|x|, 1).
        line = "nn.gelu " + prior;
        out = {a.magnitude,
               1.13 * a.error +
                   (12 * std::max(a.magnitude, 1.0) + 2 * a.magnitude) * kU};
        break;
      case 7:
        // |erf'| <= 2/sqrt(pi) < 1.13, |erf(x)| <= min(1, 1.13 |x|); 2 units.
        line = "nn.erf " + prior;
        out = rounded(std::min(1.0, 1.13 * a.magnitude), 1.13 * a.error, 2);
        break;
      case 8:
        // |erfc'| < 1.13 as erf's, |erfc(x)| <= min(2, 1 + 1.13 |x|).
        line = "nn.erfc " + prior;
        out =
            rounded(std::min(2.0, 1.0 + 1.13 * a.magnitude), 1.13 * a.error, 2);
        break;
      case 9:
        // The identity: the value, its bound unchanged.
        line = "nn.stop_gradient " + prior;
        out = a;
        break;
      default: {
        // exp of a tanh: |x| <= 1, so e^x <= e and |exp'| <= e.
        std::string bounded = "%t" + std::to_string(k);
        body += "    " + bounded + " = nn.tanh " + prior + " : " + full + "\n";
        Bound t = rounded(std::min(1.0, a.magnitude), a.error, 6);
        line = "nn.exp " + bounded;
        out =
            rounded(std::exp(t.magnitude), std::exp(t.magnitude) * t.error, 4);
        break;
      }
      }
      line += " : " + full;
      break;
    }
    default: {
      // Binary with an earlier value, an input, or a constant.
      std::string other, otherType = full;
      Bound b;
      unsigned source = rng() % 4;
      if (source == 0) {
        unsigned i = rng() % numInputs;
        other = inputs[i];
        otherType = inputTypes[i];
        b = {2, 0};
      } else if (source == 1) {
        other = "%c" + std::to_string(k);
        double c = 0.25 * (1 + rng() % 7);
        body += "    " + other + " = nn.constant dense<" + std::to_string(c) +
                "> : tensor<f32>\n";
        otherType = "tensor<f32>";
        b = {c, 0};
      } else {
        unsigned j = rng() % values.size();
        other = values[j];
        b = bounds[j];
      }
      const char *ops[] = {"add", "sub", "mul", "maximum", "minimum"};
      std::string op = ops[rng() % std::size(ops)];
      if (op == "add" || op == "sub")
        out = rounded(a.magnitude + b.magnitude, a.error + b.error, 0);
      else if (op == "mul")
        out = rounded(a.magnitude * b.magnitude,
                      a.magnitude * b.error + b.magnitude * a.error +
                          a.error * b.error,
                      0);
      else
        out = {std::max(a.magnitude, b.magnitude), std::max(a.error, b.error)};
      bool swap = rng() % 2;
      line = "nn." + op + " " + (swap ? other : prior) + ", " +
             (swap ? prior : other) + " : " + (swap ? otherType : full) + ", " +
             (swap ? full : otherType) + " -> " + full;
      break;
    }
    }
    body += "    " + name + " = " + line + "\n";
    values.push_back(name);
    bounds.push_back(out);
  }
  std::vector<unsigned> results = {static_cast<unsigned>(values.size() - 1)};
  for (unsigned r = rng() % 3; r > 0; --r) {
    unsigned v = rng() % values.size();
    if (!llvm::is_contained(results, v))
      results.push_back(v);
  }
  Dag dag;
  std::string signature, resultTypes, returned;
  for (unsigned i = 0; i < numInputs; ++i)
    signature += (i ? ", " : "") + inputs[i] + ": " + inputTypes[i];
  for (auto [i, v] : llvm::enumerate(results)) {
    resultTypes += (i ? ", " : "") + full;
    returned += (i ? ", " : "") + values[v];
    dag.results.push_back(bounds[v]);
  }
  dag.text = "  func.func @dag" + std::to_string(index) + "(" + signature +
             ") -> (" + resultTypes + ") {\n" + body + "    return " +
             returned + " : " + resultTypes + "\n  }\n";
  return dag;
}

/// The number of launches in `symbol`'s program.
unsigned launchesOf(const std::string &source, const std::string &symbol) {
  size_t begin = source.find("static const int64_t " + symbol + "_program[]");
  size_t end = source.find("TK_OP_END", begin);
  if (begin == std::string::npos || end == std::string::npos)
    return 0;
  unsigned count = 0;
  for (size_t at = source.find("TK_OP_LAUNCH,", begin); at < end;
       at = source.find("TK_OP_LAUNCH,", at + 1))
    ++count;
  return count;
}

TEST(CUDAFusionProperty, RandomElementwiseDagsAreOneKernelWithinTheirBound) {
  constexpr unsigned kDags = 40;
  std::mt19937 rng(20261203);
  std::string text = "module {\n";
  std::vector<Dag> dags;
  for (unsigned i = 0; i < kDags; ++i) {
    dags.push_back(randomDag(i, rng));
    text += dags.back().text;
  }
  text += "}\n";
  auto emulation = cuda::testing::buildEmulation(text);
  ASSERT_TRUE(static_cast<bool>(emulation))
      << llvm::toString(emulation.takeError()) << "\n"
      << text;
  const std::string &source = (*emulation)->source.text;
  cpu::testing::Library &loaded = *(*emulation)->library;

  eval::Interpreter interpreter(*(*emulation)->module);
  double worstShare = 0;
  for (unsigned i = 0; i < kDags; ++i) {
    std::string name = "dag" + std::to_string(i);
    SCOPED_TRACE(name + "\n" + dags[i].text);
    std::string symbol = lowering::entrySymbol(name);
    EXPECT_EQ(launchesOf(source, symbol), 1u);
    auto fn = (*emulation)->module->lookupSymbol<mlir::func::FuncOp>(name);
    std::vector<eval::Tensor> args;
    for (mlir::Type type : fn.getArgumentTypes())
      args.push_back(cpu::testing::randomTensor(
          mlir::cast<mlir::RankedTensorType>(type), rng, {}));
    auto expected = interpreter.run(name, args);
    ASSERT_TRUE(static_cast<bool>(expected))
        << llvm::toString(expected.takeError());

    auto entry = reinterpret_cast<tandem_fragment_fn>(loaded.lookup(symbol));
    auto scratchBytes = reinterpret_cast<tandem_scratch_bytes_fn>(
        loaded.lookup(symbol + "_scratch_bytes"));
    ASSERT_TRUE(entry && scratchBytes);
    std::vector<std::vector<float>> inputs, outputs;
    std::vector<const void *> argPointers;
    for (const eval::Tensor &arg : args)
      inputs.emplace_back(arg.data.begin(), arg.data.end());
    for (auto &in : inputs)
      argPointers.push_back(in.data());
    std::vector<void *> resultPointers;
    for (const eval::Tensor &want : *expected)
      outputs.emplace_back(want.data.size());
    for (auto &out : outputs)
      resultPointers.push_back(out.data());
    std::vector<char> scratch(scratchBytes() + 1);
    tandem_fragment_context ctx = {};
    ctx.abi_version = TANDEM_FRAGMENT_ABI_VERSION;
    ASSERT_EQ(
        entry(&ctx, argPointers.data(), resultPointers.data(), scratch.data()),
        0);
    for (size_t r = 0; r < outputs.size(); ++r) {
      double allowed = dags[i].results[r].error;
      for (size_t e = 0; e < outputs[r].size(); ++e) {
        double got = outputs[r][e], want = (*expected)[r].data[e];
        ASSERT_LE(std::fabs(got - want), allowed)
            << "result " << r << " element " << e << ": got " << got
            << ", want " << want;
        if (allowed > 0)
          worstShare = std::max(worstShare, std::fabs(got - want) / allowed);
      }
    }
  }
  std::cout << "[ emulation ] " << kDags << " random DAGs: worst error at "
            << worstShare << " of its bound\n";
}

} // namespace
