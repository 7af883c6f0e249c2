//===- MemoryTest.cpp - analyzeMemory through its C++ API -----------------===//
//
// The per-rank memory analysis on a hand-written 2-stage program with a
// tied weight (test/Dialect/MPMD/memory.mlir explains every byte): every
// RankMemory field, the same numbers on the per-rank programs of
// mpmd-split-programs (where the owner's prologue is a declaration), the
// element widths, a fragment's temporaries, and the error for a program
// without rank lists.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/MPMD/Analysis/Memory.h"
#include "tandem/Dialect/MPMD/IR/MPMDOps.h"
#include "tandem/Dialect/MPMD/Transforms/Passes.h"
#include "tandem/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "gtest/gtest.h"

#include <string>

using namespace mlir;
using namespace tandem::mpmd;

namespace {

constexpr const char *kModule = R"mlir(
nn.parameter @e : tensor<4x4xf32> = normal(0.1)
nn.parameter @m.e : tensor<4x4xf32> = zeros

mpmd.program @tied stages 2 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @s0.prologue stage 0 chunk 0 kind step_prologue
      (%e: tensor<4x4xf32> {mpmd.param = @e}) -> tensor<4x4xf32> {
    mpmd.yield %e : tensor<4x4xf32>
  }
  mpmd.fragment @s0.fwd stage 0 chunk 0 kind fwd
      (%x: tensor<2x4xf32> {mpmd.input = 0 : i64},
       %e: tensor<4x4xf32> {mpmd.param = @e}) -> tensor<2x4xf32> {
    %h = nn.matmul %x, %e : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    mpmd.yield %h : tensor<2x4xf32>
  }
  mpmd.fragment @s1.fwd stage 1 chunk 0 kind fwd
      (%h: tensor<2x4xf32>, %e: tensor<4x4xf32>)
      -> (tensor<f32>, tensor<2x4xf32>) {
    %y = nn.matmul %h, %e : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    %l = nn.reduce_sum %y [0, 1] : tensor<2x4xf32> -> tensor<f32>
    mpmd.yield %l, %y : tensor<f32>, tensor<2x4xf32>
  }
  mpmd.fragment @s1.bwd stage 1 chunk 0 kind bwd
      (%y: tensor<2x4xf32>, %e: tensor<4x4xf32>) -> tensor<2x4xf32> {
    %et = nn.transpose %e, [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
    %dh = nn.matmul %y, %et : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    mpmd.yield %dh : tensor<2x4xf32>
  }
  mpmd.fragment @s0.bwd stage 0 chunk 0 kind bwd
      (%dh: tensor<2x4xf32>, %x: tensor<2x4xf32> {mpmd.input = 0 : i64})
      -> tensor<4x4xf32> {
    %xt = nn.transpose %x, [1, 0] : tensor<2x4xf32> -> tensor<4x2xf32>
    %g = nn.matmul %xt, %dh : tensor<4x2xf32>, tensor<2x4xf32> -> tensor<4x4xf32>
    mpmd.yield %g : tensor<4x4xf32>
  }
  mpmd.fragment @s0.opt stage 0 chunk 0 kind optimizer
      (%g: tensor<4x4xf32>, %e: tensor<4x4xf32> {mpmd.param = @e},
       %m: tensor<4x4xf32> {mpmd.param = @m.e})
      -> (tensor<4x4xf32> {mpmd.update = @e},
          tensor<4x4xf32> {mpmd.update = @m.e}) {
    %m2 = nn.add %m, %g : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    %e2 = nn.sub %e, %m2 : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    mpmd.yield %e2, %m2 : tensor<4x4xf32>, tensor<4x4xf32>
  }
  mpmd.transfer @s0.prologue[0] -> @s1.fwd[1] : tensor<4x4xf32>
  mpmd.transfer @s0.prologue[0] -> @s1.bwd[1] : tensor<4x4xf32>
  mpmd.transfer @s0.fwd[0] -> @s1.fwd[0] : tensor<2x4xf32>
  mpmd.transfer @s1.fwd[1] -> @s1.bwd[0] : tensor<2x4xf32>
  mpmd.transfer @s1.bwd[0] -> @s0.bwd[0] : tensor<2x4xf32>
  mpmd.transfer @s0.bwd[0] -> @s0.opt[0] : tensor<4x4xf32>
  mpmd.rank 0 {
    mpmd.run @s0.prologue
    mpmd.send @s0.prologue[0] to 1 channel 0 : tensor<4x4xf32> wire f32
    mpmd.run @s0.fwd microbatch 0
    mpmd.send @s0.fwd[0] microbatch 0 to 1 channel 1 : tensor<2x4xf32> wire f32
    mpmd.recv @s1.bwd[0] microbatch 0 from 1 channel 2 : tensor<2x4xf32> wire f32
    mpmd.run @s0.bwd microbatch 0
    mpmd.run @s0.opt
  }
  mpmd.rank 1 {
    mpmd.recv @s0.prologue[0] from 0 channel 0 : tensor<4x4xf32> wire f32
    mpmd.recv @s0.fwd[0] microbatch 0 from 0 channel 1 : tensor<2x4xf32> wire f32
    mpmd.run @s1.fwd microbatch 0
    mpmd.run @s1.bwd microbatch 0
    mpmd.send @s1.bwd[0] microbatch 0 to 0 channel 2 : tensor<2x4xf32> wire f32
  }
}
)mlir";

class MemoryTest : public ::testing::Test {
protected:
  void SetUp() override {
    DialectRegistry registry;
    tandem::registerAllDialects(registry);
    context = std::make_unique<MLIRContext>(registry);
    module = parseSourceString<ModuleOp>(kModule, context.get());
    ASSERT_TRUE(module);
  }

  ProgramOp program() { return *module->getOps<ProgramOp>().begin(); }

  std::unique_ptr<MLIRContext> context;
  OwningOpRef<ModuleOp> module;
};

void expectRank0(const RankMemory &m) {
  EXPECT_EQ(m.rank, 0);
  EXPECT_EQ(m.parameters, 64);         // @e
  EXPECT_EQ(m.optimizerState, 64);     // @m.e, only the optimizer binds it
  EXPECT_EQ(m.parameterCopies, 64);    // the prologue's copy, until sent
  EXPECT_EQ(m.gradients, 64);          // one buffer for @s0.bwd[0]
  EXPECT_EQ(m.stashPerMicrobatch, 32); // the input slice @s0.bwd rereads
  EXPECT_EQ(m.peakInFlight, 1);
  EXPECT_EQ(m.stash, 32);
  EXPECT_EQ(m.temporaries, 32); // %xt in @s0.bwd
  // The activation sent before @s0.bwd stays in flight to the end (no later
  // post to wait before): 32 more than without it (test/Dialect/MPMD/
  // memory.mlir derives both).
  EXPECT_EQ(m.peak, 384);
}

void expectRank1(const RankMemory &m) {
  EXPECT_EQ(m.rank, 1);
  EXPECT_EQ(m.parameters, 0);
  EXPECT_EQ(m.optimizerState, 0);
  EXPECT_EQ(m.parameterCopies, 64); // @e received from its owner
  EXPECT_EQ(m.gradients, 0);
  EXPECT_EQ(m.stashPerMicrobatch, 32); // y
  EXPECT_EQ(m.peakInFlight, 1);
  EXPECT_EQ(m.stash, 32);
  EXPECT_EQ(m.temporaries, 64); // %et in @s1.bwd
  EXPECT_EQ(m.peak, 192);
}

TEST_F(MemoryTest, EveryFieldPerRank) {
  FailureOr<SmallVector<RankMemory>> memory = analyzeMemory(program());
  ASSERT_TRUE(succeeded(memory));
  ASSERT_EQ(memory->size(), 2u);
  expectRank0((*memory)[0]);
  expectRank1((*memory)[1]);
}

TEST_F(MemoryTest, SplitProgramsGiveTheSameNumbers) {
  PassManager pm(context.get());
  pm.addPass(createMPMDSplitPrograms());
  ASSERT_TRUE(succeeded(pm.run(*module)));
  int seen = 0;
  for (auto rankModule : module->getOps<ModuleOp>()) {
    auto programs = rankModule.getOps<ProgramOp>();
    ASSERT_FALSE(programs.empty());
    FailureOr<SmallVector<RankMemory>> memory =
        analyzeMemory(*programs.begin());
    ASSERT_TRUE(succeeded(memory));
    ASSERT_EQ(memory->size(), 1u);
    if ((*memory)[0].rank == 0)
      expectRank0((*memory)[0]);
    else
      expectRank1((*memory)[0]);
    ++seen;
  }
  EXPECT_EQ(seen, 2);
}

TEST_F(MemoryTest, ElementWidths) {
  MLIRContext &ctx = *context;
  auto tensor = [&](ArrayRef<int64_t> shape, Type element) {
    return RankedTensorType::get(shape, element);
  };
  EXPECT_EQ(memoryBytesOf(tensor({2, 3}, Float32Type::get(&ctx))), 24);
  EXPECT_EQ(memoryBytesOf(tensor({2, 3}, BFloat16Type::get(&ctx))), 12);
  EXPECT_EQ(memoryBytesOf(tensor({2, 3}, Float16Type::get(&ctx))), 12);
  EXPECT_EQ(memoryBytesOf(tensor({2, 3}, Float8E4M3FNType::get(&ctx))), 6);
  EXPECT_EQ(memoryBytesOf(tensor({4}, IntegerType::get(&ctx, 32))), 16);
  EXPECT_EQ(memoryBytesOf(tensor({8}, IntegerType::get(&ctx, 1))), 8);
  EXPECT_EQ(memoryBytesOf(tensor({}, Float32Type::get(&ctx))), 4);
  EXPECT_EQ(
      memoryBytesOf(tensor({ShapedType::kDynamic}, Float32Type::get(&ctx))), 0);
}

TEST_F(MemoryTest, FragmentTemporaries) {
  ProgramOp p = program();
  // Yielded values are results, not temporaries; an argument yielded as is
  // allocates nothing.
  EXPECT_EQ(fragmentTemporaries(p.lookupSymbol<FragmentOp>("s0.prologue")), 0);
  EXPECT_EQ(fragmentTemporaries(p.lookupSymbol<FragmentOp>("s1.fwd")), 0);
  EXPECT_EQ(fragmentTemporaries(p.lookupSymbol<FragmentOp>("s1.bwd")), 64);
  EXPECT_EQ(fragmentTemporaries(p.lookupSymbol<FragmentOp>("s0.opt")), 0);
}

TEST_F(MemoryTest, UnscheduledProgramIsAnError) {
  ProgramOp p = program();
  for (RankOp rank :
       llvm::make_early_inc_range(p.getBodyBlock().getOps<RankOp>()))
    rank.erase();
  std::string message;
  ScopedDiagnosticHandler handler(context.get(), [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  EXPECT_TRUE(failed(analyzeMemory(p)));
  EXPECT_NE(message.find("has no mpmd.rank action lists"), std::string::npos)
      << message;
}

} // namespace
