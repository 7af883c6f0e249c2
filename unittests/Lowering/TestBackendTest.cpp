//===- TestBackendTest.cpp - a target registered from a test --------------===//
//
// Proof that the seam is real: a backend defined here, and registered from
// here, lowers the tiny GPT (2 stages, 1F1B) through the same driver as the
// CPU target, with no change to target-neutral code. It makes every choice
// the CPU target does not (device memory, 256-byte alignment, gradients
// accumulated by the fragments, its own file names and symbols, scratch on
// every forward), and the manifests it yields carry those choices and pass
// the runtime's reader, memory-plan check included.
//
//===----------------------------------------------------------------------===//

#include "tandem/InitAll.h"
#include "tandem/Lowering/RankLowering.h"
#include "tandem/Lowering/TargetBackend.h"
#include "tandem/Runtime/Manifest.h"
#include "tandem/Runtime/MemoryPlan.h"
#include "tandem/Runtime/RankProgram.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <fstream>
#include <set>

using namespace tandem;
using namespace tandem::lowering;

namespace {

constexpr uint64_t kTestAlignment = 256;
constexpr uint64_t kTestScratch = 1000;

/// Lists each fragment's ops instead of generating code; its "library" is
/// that listing.
class TestBackend : public TargetBackend {
public:
  explicit TestBackend(std::string libraryDir)
      : libraryDir(std::move(libraryDir)) {}

  llvm::StringRef name() const override { return "test"; }
  llvm::StringRef sourceLanguage() const override { return "op listing"; }
  std::vector<TargetOption> options() const override {
    return {{"test-arch", "the architecture to record"}};
  }
  llvm::Error configure(const TargetOptionValues &values) override {
    if (llvm::Error error = TargetBackend::configure(values))
      return error;
    if (values.count("test-arch"))
      arch = values.at("test-arch");
    return llvm::Error::success();
  }
  runtime::TargetInfo targetInfo() const override {
    return {runtime::TargetKind::Cuda, arch, {}, kTestAlignment};
  }
  runtime::MemorySpace memorySpace() const override {
    return runtime::MemorySpace::Device;
  }
  runtime::Accumulation accumulation() const override {
    return runtime::Accumulation::Fragment;
  }
  std::vector<std::string> supportedOps() const override { return {}; }
  llvm::StringRef sourceExtension() const override { return ".lst"; }
  llvm::StringRef libraryExtension() const override { return ".tlib"; }

  mlir::FailureOr<EmittedSource>
  emit(llvm::ArrayRef<mlir::Operation *> functions) override {
    EmittedSource source;
    for (mlir::Operation *function : functions) {
      std::string name = function
                             ->getAttrOfType<mlir::StringAttr>(
                                 mlir::SymbolTable::getSymbolAttrName())
                             .getValue()
                             .str();
      std::string symbol = "test_" + name;
      for (char &c : symbol)
        if (!llvm::isAlnum(c))
          c = '_';
      llvm::raw_string_ostream os(source.text);
      os << "entry " << symbol << "\n";
      function->walk([&](mlir::Operation *op) {
        if (op != function)
          os << "  " << op->getName() << "\n";
      });
      bool forward = llvm::StringRef(name).ends_with(".fwd");
      source.fragments.push_back(
          {name, symbol, forward ? kTestScratch : 0, {}});
      emitted.push_back(name);
    }
    return source;
  }

  llvm::Expected<CompiledLibrary> compile(llvm::StringRef source) override {
    llvm::SmallString<256> path(libraryDir);
    llvm::sys::path::append(path, "lib" + std::to_string(compiled++) + ".tlib");
    std::ofstream(std::string(path)) << source.str();
    return CompiledLibrary{std::string(path), false};
  }

  /// The fragments emit() was given, in order.
  std::vector<std::string> emitted;

private:
  std::string libraryDir;
  std::string arch = "test_sm_1";
  int compiled = 0;
};

std::string tempDir(const char *name) {
  llvm::SmallString<256> dir;
  EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory(name, dir));
  return std::string(dir);
}

/// The tiny GPT through autodiff, SGD, 2 stages and 1F1B: what the lowering
/// takes.
mlir::OwningOpRef<mlir::ModuleOp> loweredTinyGpt(mlir::MLIRContext &context) {
  auto buffer = llvm::MemoryBuffer::getFile(TANDEM_TEST_SOURCE_DIR
                                            "/examples/tiny-gpt.mlir");
  EXPECT_TRUE(static_cast<bool>(buffer));
  if (!buffer)
    return nullptr;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>((*buffer)->getBuffer(), &context);
  EXPECT_TRUE(module);
  if (!module)
    return nullptr;
  mlir::PassManager pm(&context, mlir::ModuleOp::getOperationName());
  std::string errors;
  llvm::raw_string_ostream os(errors);
  EXPECT_TRUE(mlir::succeeded(mlir::parsePassPipeline(
      "nn-autodiff{function=forward},"
      "nn-optimizer{function=forward_grad optimizer=sgd},"
      "mpmd-partition{function=train_step stages=2 chunks=1 microbatches=2 "
      "split-backward=false},"
      "mpmd-schedule{schedule=1f1b},mpmd-lower-transfers,mpmd-verify",
      pm, os)))
      << errors;
  EXPECT_TRUE(mlir::succeeded(pm.run(*module)));
  return module;
}

struct LoweringFixture : ::testing::Test {
  void SetUp() override {
    registerAllPasses();
    registerAllDialects(registry);
    context = std::make_unique<mlir::MLIRContext>(registry);
    context->printOpOnDiagnostic(false);
  }
  mlir::DialectRegistry registry;
  std::unique_ptr<mlir::MLIRContext> context;
};

TEST_F(LoweringFixture, TheTestBackendLowersTheTinyGpt) {
  mlir::OwningOpRef<mlir::ModuleOp> module = loweredTinyGpt(*context);
  ASSERT_TRUE(module);
  std::string out = tempDir("tandem-test-backend");
  TestBackend backend(out);
  ASSERT_FALSE(
      static_cast<bool>(backend.configure({{"test-arch", "test_sm_7"}})));
  LowerRanksOptions options;
  options.outputDir = out + "/ranks";
  mlir::FailureOr<std::vector<LoweredRank>> ranks =
      lowerRanks(*module, backend, options);
  ASSERT_TRUE(mlir::succeeded(ranks));
  ASSERT_EQ(ranks->size(), 2u);

  std::set<std::string> allEmitted(backend.emitted.begin(),
                                   backend.emitted.end());
  size_t fragments = 0;
  int summed = 0;
  for (const LoweredRank &rank : *ranks) {
    std::string stem = out + "/ranks/rank" + std::to_string(rank.rank);
    EXPECT_EQ(rank.sourcePath, stem + ".lst");
    EXPECT_EQ(rank.libraryPath, stem + ".tlib");
    EXPECT_TRUE(llvm::sys::fs::exists(rank.libraryPath));
    // The runtime's reader, with every check it makes (the memory plan
    // against the action list and the target's alignment included).
    std::string error;
    std::optional<runtime::Manifest> m =
        runtime::readManifest(rank.manifestPath, error);
    ASSERT_TRUE(m) << error;
    EXPECT_EQ(m->library, "rank" + std::to_string(rank.rank) + ".tlib");
    EXPECT_EQ(m->source, "rank" + std::to_string(rank.rank) + ".lst");
    runtime::TargetInfo target = backend.targetInfo();
    EXPECT_EQ(m->target, target);
    EXPECT_EQ(m->target.arch, "test_sm_7");
    EXPECT_EQ(m->memory.space, runtime::MemorySpace::Device);
    EXPECT_EQ(m->memory.alignment, kTestAlignment);
    for (const runtime::PlanBufferInfo &b : m->memory.buffers)
      EXPECT_EQ(b.offset % kTestAlignment, 0u);
    EXPECT_EQ(m->memory.arenaBytes % kTestAlignment, 0u);
    EXPECT_FALSE(m->parameters.empty());
    for (const runtime::ParameterInfo &p : m->parameters)
      EXPECT_EQ(p.space, runtime::MemorySpace::Device) << p.name;
    for (const runtime::InputInfo &in : m->inputs)
      EXPECT_EQ(in.space, runtime::MemorySpace::Device);
    for (const runtime::FragmentInfo &f : m->fragments) {
      ++fragments;
      EXPECT_TRUE(allEmitted.count(f.name)) << f.name;
      EXPECT_EQ(f.symbol.rfind("test_", 0), 0u) << f.symbol;
      EXPECT_EQ(f.scratchSymbol, f.symbol + "_scratch_bytes");
      bool forward = llvm::StringRef(f.name).ends_with(".fwd");
      EXPECT_EQ(f.scratchBytes, forward ? kTestScratch : 0) << f.name;
      for (const runtime::ArgumentInfo &arg : f.arguments)
        if (arg.rule == runtime::SlotRule::SumMicrobatches) {
          // Every weight gradient is read only by the step, which runs
          // after the microbatches in order: the fragment sums them.
          ++summed;
          EXPECT_EQ(arg.accumulatedBy, runtime::Accumulation::Fragment)
              << f.name;
          // Its result has no slot per microbatch: the runs write the
          // sum's buffer.
          for (const runtime::PlanBufferInfo &b : m->memory.buffers)
            EXPECT_FALSE(b.kind == runtime::PlanBufferKind::Slot &&
                         b.slot.fragment == arg.slot.fragment &&
                         b.slot.result == arg.slot.result)
                << runtime::bufferText(b);
        }
    }
  }
  // Each rank's own fragments, each emitted once.
  EXPECT_EQ(fragments, backend.emitted.size());
  EXPECT_GT(summed, 0); // The weight gradients of both stages.
  llvm::sys::fs::remove_directories(out);
}

TEST(TargetRegistry, BackendsAreFoundByName) {
  registerAllTargets();
  registerTargetBackend("test", [] {
    return std::make_unique<TestBackend>(
        llvm::sys::path::get_separator().str());
  });
  std::vector<std::string> names = registeredTargetBackends();
  EXPECT_TRUE(llvm::is_contained(names, "cpu"));
  EXPECT_TRUE(llvm::is_contained(names, "test"));
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  std::unique_ptr<TargetBackend> test = createTargetBackend("test");
  ASSERT_TRUE(test);
  EXPECT_EQ(test->name(), "test");
  EXPECT_FALSE(createTargetBackend("tpu"));
  // Options belong to their target.
  EXPECT_EQ(llvm::toString(test->configure({{"cpu-arch", "native"}})),
            "--cpu-arch is not an option of --target test");
  std::unique_ptr<TargetBackend> cpu = createTargetBackend("cpu");
  ASSERT_TRUE(cpu);
  EXPECT_EQ(llvm::toString(cpu->configure({{"test-arch", "x"}})),
            "--test-arch is not an option of --target cpu");
  EXPECT_FALSE(static_cast<bool>(cpu->configure({{"cpu-arch", "x86-64"}})));
  EXPECT_EQ(cpu->targetInfo().arch, "x86-64");
  EXPECT_EQ(cpu->targetInfo().kind, runtime::TargetKind::Cpu);
  EXPECT_EQ(cpu->memorySpace(), runtime::MemorySpace::Host);
  EXPECT_EQ(cpu->accumulation(), runtime::Accumulation::Runtime);
}

} // namespace
