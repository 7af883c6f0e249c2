//===- PipelineFuzzer.cpp - libFuzzer target: tandemc up to --emit=split --===//
//
// Parsing, verification and tandemc's compile phases (CompilePipeline.h)
// up to the per-rank split, in process, on hostile models. Two targets are
// built from this file (scripts/fuzz.sh --mlir, docs/testing.md):
//
//   pipeline      the input is a model's text; an optional first line
//                 `// tandemc: --stages 2 --microbatches 4 ...` sets the
//                 compile options (mutated with the model). Seeded with the
//                 example models and scripts/random_graph.py's graphs.
//   pipeline-gen  (TANDEM_FUZZ_GENERATE) the input's bytes are the choices
//                 of a generator of valid nn graphs (RandomGraph below):
//                 layer stacks, splits, element types, shapes of up to
//                 2^52 elements, stage markers, schedules and options.
//
// Invariants besides no crash, hang or sanitizer report: a model that is
// refused (by the parser, a verifier, an option check or a pass) has an
// error diagnostic; one that compiles splits into a verified module.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/MPMD/IR/MPMDDialect.h"
#include "tandem/Dialect/MPMD/Transforms/Passes.h"
#include "tandem/Dialect/NN/IR/NNDialect.h"
#include "tandem/Dialect/NN/Transforms/Passes.h"

#include "../tools/tandemc/CompilePipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/SourceMgr.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

using namespace tandem::tandemc;

namespace {

[[noreturn]] void violated(const std::string &what, const std::string &model) {
  std::fprintf(stderr, "pipeline fuzzer: invariant violated: %s\n%s\n",
               what.c_str(), model.c_str());
  std::abort();
}

/// Reads `// tandemc: --flag value ...` into `options`; values out of
/// the bounds below are left at their defaults (a huge stage count is a
/// cost, not a finding).
void readHeader(const std::string &line, CompileOptions &options) {
  std::istringstream words(line.substr(line.find(':') + 1));
  std::string flag, value;
  while (words >> flag >> value) {
    long long number = std::strtoll(value.c_str(), nullptr, 10);
    if (flag == "--stages" && number >= 1 && number <= 16)
      options.stages = number;
    else if (flag == "--microbatches" && number >= 1 && number <= 64)
      options.microbatches = number;
    else if (flag == "--chunks" && number >= 1 && number <= 4)
      options.chunks = number;
    else if (flag == "--schedule")
      options.schedule = value;
    else if (flag == "--precision")
      options.precision = value;
    else if (flag == "--remat")
      options.remat = value;
    else if (flag == "--optimizer")
      options.optimizer = "optimizer=" + value;
    else if (flag == "--recompute-splits")
      options.recomputeSplits = value == "1";
  }
}

/// Runs the phases up to Split on `model` and checks the invariants.
void compile(const std::string &model, const CompileOptions &options) {
  static mlir::DialectRegistry *registry = [] {
    auto *r = new mlir::DialectRegistry;
    r->insert<tandem::nn::NNDialect, tandem::mpmd::MPMDDialect,
              mlir::func::FuncDialect>();
    mlir::registerTransformsPasses();
    tandem::nn::registerNNPasses();
    tandem::mpmd::registerMPMDPasses();
    return r;
  }();
  llvm::Expected<std::vector<PhasePipeline>> phases =
      buildPhases(options, Phase::Split);
  if (!phases) {
    // An option check: a message is the whole contract.
    if (llvm::toString(phases.takeError()).empty())
      violated("an option was refused without a message", model);
    return;
  }
  mlir::MLIRContext context(*registry);
  context.printOpOnDiagnostic(false);
  int errors = 0;
  std::string firstError;
  context.getDiagEngine().registerHandler([&](mlir::Diagnostic &d) {
    if (d.getSeverity() == mlir::DiagnosticSeverity::Error && !errors++)
      firstError = d.str();
    return mlir::success();
  });
  // TANDEM_FUZZ_VERBOSE=1: what became of each input (corpus triage).
  static const bool verbose = std::getenv("TANDEM_FUZZ_VERBOSE");
  struct Report {
    const std::string &first;
    ~Report() {
      if (verbose)
        std::fprintf(stderr, "pipeline fuzzer: %s\n",
                     first.empty() ? "compiled (or refused by an option)"
                                   : ("refused: " + first).c_str());
    }
  } report{firstError};
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(model, "model.mlir"), llvm::SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!module) {
    if (errors == 0)
      violated("the parser refused the model without an error", model);
    return;
  }
  for (const PhasePipeline &phase : *phases) {
    if (phase.pipeline.empty())
      continue;
    mlir::PassManager pm(&context, mlir::ModuleOp::getOperationName());
    std::string message;
    llvm::raw_string_ostream os(message);
    if (mlir::failed(mlir::parsePassPipeline(phase.pipeline, pm, os))) {
      if (message.empty())
        violated("a pass pipeline was refused without a message", model);
      return;
    }
    if (mlir::failed(pm.run(*module))) {
      if (errors == 0)
        violated(std::string("phase '") + phaseName(phase.phase) +
                     "' failed without an error",
                 model);
      return;
    }
  }
  if (mlir::failed(mlir::verify(*module)))
    violated("the split module does not verify", model);
}

#ifdef TANDEM_FUZZ_GENERATE
/// A valid nn graph from the fuzzer's bytes: every choice is a byte or
/// two, so mutations move between nearby graphs.
class RandomGraph {
public:
  explicit RandomGraph(FuzzedDataProvider &in) : in(in) {}

  std::string build(CompileOptions &options) {
    static const char *const types[] = {"f32", "f32", "bf16", "f16", "f64"};
    dtype = types[in.ConsumeIntegralInRange<int>(0, 4)];
    // Mostly small; sometimes a dimension of 2^10 to 2^26, so that a
    // matrix holds up to 2^52 elements: past 2^40 (more than any machine
    // holds) and past the 2^48 bytes the verifiers accept.
    auto dim = [&] {
      if (in.ConsumeIntegralInRange<int>(0, 15) == 0)
        return int64_t(1) << in.ConsumeIntegralInRange<int>(10, 26);
      return int64_t(in.ConsumeIntegralInRange<int>(1, 32));
    };
    int64_t batch = dim(), width = dim(), vocab = dim() + 1;
    bool tokens = in.ConsumeBool();
    std::string x = "%arg0";
    std::vector<int64_t> shape = {batch, width};
    if (tokens) {
      std::string table = param("wte", {vocab, width});
      x = op("nn.embedding " + table + ", %arg0 : " + ty({vocab, width}) +
             ", " + ty({batch}, "i32") + " -> " + ty(shape));
    }
    int blocks = in.ConsumeIntegralInRange<int>(1, 8);
    for (int i = 0; i < blocks; ++i) {
      std::string name = "b" + std::to_string(i);
      switch (in.ConsumeIntegralInRange<int>(0, 7)) {
      case 0: { // linear, maybe with a bias, maybe changing the width
        int64_t out = in.ConsumeBool() ? shape.back() : dim();
        std::string w = param(name + ".w", {shape.back(), out});
        std::vector<int64_t> result = {shape[0], out};
        x = op("nn.matmul " + x + ", " + w + " : " + ty(shape) + ", " +
               ty({shape.back(), out}) + " -> " + ty(result));
        shape = result;
        if (in.ConsumeBool()) {
          std::string b = param(name + ".b", {out});
          x = op("nn.add " + x + ", " + b + " : " + ty(shape) + ", " +
                 ty({out}) + " -> " + ty(shape));
        }
        break;
      }
      case 1: {
        static const char *const acts[] = {"gelu", "relu", "tanh", "silu",
                                           "exp",  "neg",  "sqrt"};
        x = op(std::string("nn.") + acts[in.ConsumeIntegralInRange<int>(0, 6)] +
               " " + x + " : " + ty(shape));
        break;
      }
      case 2: {
        std::string w = param(name + ".g", {shape.back()});
        if (in.ConsumeBool()) {
          std::string b = param(name + ".beta", {shape.back()});
          x = op("nn.layer_norm " + x + ", " + w + ", " + b +
                 " {epsilon = 1.0e-05 : f64} : " + ty(shape) + ", " +
                 ty({shape.back()}) + ", " + ty({shape.back()}));
        } else {
          x = op("nn.rms_norm " + x + ", " + w +
                 " {epsilon = 1.0e-06 : f64} : " + ty(shape) + ", " +
                 ty({shape.back()}));
        }
        break;
      }
      case 3:
        x = op("nn.softmax " + x + " {axis = 1 : i64} : " + ty(shape));
        break;
      case 4: { // a residual around a square linear layer
        std::string w = param(name + ".r", {shape.back(), shape.back()});
        std::string y =
            op("nn.matmul " + x + ", " + w + " : " + ty(shape) + ", " +
               ty({shape.back(), shape.back()}) + " -> " + ty(shape));
        x = op("nn.add " + x + ", " + y + " : " + ty(shape) + ", " + ty(shape) +
               " -> " + ty(shape));
        break;
      }
      case 5:
        x = op("nn.mul " + x + ", " + x + " : " + ty(shape) + ", " + ty(shape) +
               " -> " + ty(shape));
        break;
      case 6: { // a split, both pieces squared or one, then concatenated:
                // the backward reads the pieces whole or in part
        if (shape.back() < 2)
          break;
        int64_t first = in.ConsumeIntegralInRange<int64_t>(1, shape.back() - 1);
        std::vector<int64_t> a = {shape[0], first},
                             b = {shape[0], shape.back() - first};
        std::string pieces =
            op("nn.split " + x +
               " {axis = 1 : i64, sizes = "
               "array<i64: " +
               std::to_string(first) + ", " + std::to_string(b[1]) +
               ">} : " + ty(shape) + " -> " + ty(a) + ", " + ty(b));
        // op() names the split's results %N:2.
        std::string pa = pieces + "#0", pb = pieces + "#1";
        body.replace(body.rfind(pieces + " ="), pieces.size(), pieces + ":2");
        pa = op("nn.mul " + pa + ", " + pa + " : " + ty(a) + ", " + ty(a) +
                " -> " + ty(a));
        if (in.ConsumeBool())
          pb = op("nn.mul " + pb + ", " + pb + " : " + ty(b) + ", " + ty(b) +
                  " -> " + ty(b));
        x = op("nn.concat " + pa + ", " + pb + " {axis = 1 : i64} : (" + ty(a) +
               ", " + ty(b) + ") -> " + ty(shape));
        break;
      }
      default:
        x = op("nn.stage_end " + x + " : " + ty(shape));
        break;
      }
    }
    std::string loss;
    if (in.ConsumeBool()) {
      loss = op("nn.cross_entropy " + x + ", %arg1 : " + ty(shape) + ", " +
                ty({batch}, "i32") + " -> " + ty({}));
    } else {
      loss = op("nn.reduce_mean " + x + " [0, 1] : " + ty(shape) + " -> " +
                ty({}));
    }
    static const char *const schedules[] = {"gpipe", "1f1b", "zb-h1",
                                            "interleaved-1f1b"};
    options.schedule = schedules[in.ConsumeIntegralInRange<int>(0, 3)];
    options.stages = in.ConsumeIntegralInRange<int>(1, 4);
    options.microbatches = in.ConsumeIntegralInRange<int>(1, 8);
    static const char *const precisions[] = {"f32", "bf16", "fp16"};
    options.precision = precisions[in.ConsumeIntegralInRange<int>(0, 2)];
    static const char *const remats[] = {"none", "full", "selective"};
    options.remat = remats[in.ConsumeIntegralInRange<int>(0, 2)];
    options.recomputeSplits = in.ConsumeBool();

    std::string text = "module {\n" + parameters;
    text += "  func.func @forward(%arg0: " +
            (tokens ? ty({batch}, "i32") : ty({batch, width})) +
            ", %arg1: " + ty({batch}, "i32") + ") -> " + ty({}) + " {\n" +
            body + "    return " + loss + " : " + ty({}) + "\n  }\n}\n";
    return text;
  }

private:
  std::string ty(const std::vector<int64_t> &shape,
                 const std::string &type = "") const {
    std::string text = "tensor<";
    for (int64_t d : shape)
      text += std::to_string(d) + "x";
    return text + (type.empty() ? dtype : type) + ">";
  }
  std::string param(const std::string &name,
                    const std::vector<int64_t> &shape) {
    parameters +=
        "  nn.parameter @" + name + " : " + ty(shape) + " = normal(2.0e-02)\n";
    return op("nn.param @" + name + " : " + ty(shape));
  }
  std::string op(const std::string &text) {
    std::string value = "%" + std::to_string(next++);
    body += "    " + value + " = " + text + "\n";
    return value;
  }

  FuzzedDataProvider &in;
  std::string dtype = "f32", parameters, body;
  int next = 0;
};
#endif

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  CompileOptions options;
  options.outputDir = "/nonexistent"; // Split writes no files.
#ifdef TANDEM_FUZZ_GENERATE
  FuzzedDataProvider in(data, size);
  std::string model = RandomGraph(in).build(options);
#else
  std::string model(reinterpret_cast<const char *>(data), size);
  if (model.rfind("// tandemc:", 0) == 0)
    readHeader(model.substr(0, model.find('\n')), options);
#endif
  compile(model, options);
  return 0;
}
