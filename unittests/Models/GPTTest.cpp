//===- GPTTest.cpp - GPT builder ------------------------------------------===//

#include "TestUtils.h"

#include "tandem/Models/GPT.h"
#include "tandem/Models/Summary.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace mlir;
using namespace tandem;
using namespace tandem::models;
using namespace tandem::models::testing;

namespace {

class ModelsGPT : public ::testing::Test {
protected:
  GPTConfig config(llvm::StringRef name) {
    return llvm::cantFail(getGPTConfig(name));
  }

  OwningOpRef<ModuleOp> build(const GPTConfig &config) {
    auto module = buildGPT(context, config);
    if (!module) {
      ADD_FAILURE() << llvm::toString(module.takeError());
      return {};
    }
    return std::move(*module);
  }

  func::FuncOp forward(ModuleOp module) {
    return module.lookupSymbol<func::FuncOp>("forward");
  }

  std::string typeOf(Type type) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << type;
    return text;
  }

  MLIRContext context;
};

TEST_F(ModelsGPT, TinyShapes) {
  OwningOpRef<ModuleOp> module = build(config("tiny"));
  ASSERT_TRUE(module);
  ModuleOp m = *module;
  EXPECT_EQ(paramType(m, "wte"), "tensor<256x32xf32>");
  EXPECT_EQ(paramType(m, "wpe"), "tensor<16x32xf32>");
  EXPECT_EQ(paramType(m, "h.0.ln_1.weight"), "tensor<32xf32>");
  EXPECT_EQ(paramType(m, "h.0.ln_1.bias"), "tensor<32xf32>");
  EXPECT_EQ(paramType(m, "h.0.attn.c_attn.weight"), "tensor<32x96xf32>");
  EXPECT_EQ(paramType(m, "h.0.attn.c_attn.bias"), "tensor<96xf32>");
  EXPECT_EQ(paramType(m, "h.0.attn.c_proj.weight"), "tensor<32x32xf32>");
  EXPECT_EQ(paramType(m, "h.0.attn.c_proj.bias"), "tensor<32xf32>");
  EXPECT_EQ(paramType(m, "h.7.ln_2.weight"), "tensor<32xf32>");
  EXPECT_EQ(paramType(m, "h.7.mlp.c_fc.weight"), "tensor<32x128xf32>");
  EXPECT_EQ(paramType(m, "h.7.mlp.c_fc.bias"), "tensor<128xf32>");
  EXPECT_EQ(paramType(m, "h.7.mlp.c_proj.weight"), "tensor<128x32xf32>");
  EXPECT_EQ(paramType(m, "h.7.mlp.c_proj.bias"), "tensor<32xf32>");
  EXPECT_EQ(paramType(m, "ln_f.weight"), "tensor<32xf32>");
  EXPECT_EQ(paramType(m, "ln_f.bias"), "tensor<32xf32>");
  EXPECT_EQ(paramType(m, "h.8.ln_1.weight"), "missing");
  EXPECT_EQ(paramType(m, "lm_head.weight"), "missing");
  EXPECT_EQ(countOps<nn::ParameterOp>(m), 2 + 8 * 12 + 2);

  func::FuncOp f = forward(m);
  ASSERT_TRUE(f);
  EXPECT_EQ(typeOf(f.getFunctionType()),
            "(tensor<8x16xi32>, tensor<8x16xi32>) -> tensor<f32>");
  EXPECT_EQ(countOps<nn::AttentionOp>(m), 8);
  m.walk([](nn::AttentionOp op) {
    EXPECT_TRUE(op.getCausal());
    EXPECT_EQ(op.getHeads(), 2u);
  });
  EXPECT_EQ(countOps<nn::StageEndOp>(m), 0);
  EXPECT_EQ(countOps<nn::GeluOp>(m), 8);
  EXPECT_EQ(countOps<nn::LayerNormOp>(m), 17);
  EXPECT_EQ(countOps<nn::CrossEntropyOp>(m), 1);
}

TEST_F(ModelsGPT, Initializers) {
  OwningOpRef<ModuleOp> module = build(config("tiny"));
  ASSERT_TRUE(module);
  auto expectNormal = [&](llvm::StringRef name, double stddev) {
    nn::InitializerAttr init = paramInit(*module, name);
    ASSERT_TRUE(init) << name.str();
    EXPECT_EQ(init.getKind(), nn::InitKind::Normal) << name.str();
    EXPECT_DOUBLE_EQ(init.getAValue(), stddev) << name.str();
  };
  auto expectKind = [&](llvm::StringRef name, nn::InitKind kind) {
    nn::InitializerAttr init = paramInit(*module, name);
    ASSERT_TRUE(init) << name.str();
    EXPECT_EQ(init.getKind(), kind) << name.str();
  };
  double residual = 0.02 / std::sqrt(2.0 * 8);
  expectNormal("wte", 0.02);
  expectNormal("wpe", 0.02);
  expectNormal("h.3.attn.c_attn.weight", 0.02);
  expectNormal("h.3.mlp.c_fc.weight", 0.02);
  expectNormal("h.3.attn.c_proj.weight", residual);
  expectNormal("h.3.mlp.c_proj.weight", residual);
  expectKind("h.3.attn.c_attn.bias", nn::InitKind::Zeros);
  expectKind("h.3.mlp.c_proj.bias", nn::InitKind::Zeros);
  expectKind("h.3.ln_1.weight", nn::InitKind::Ones);
  expectKind("h.3.ln_1.bias", nn::InitKind::Zeros);
  expectKind("ln_f.weight", nn::InitKind::Ones);
}

TEST_F(ModelsGPT, SmallShapes) {
  OwningOpRef<ModuleOp> module = build(config("small"));
  ASSERT_TRUE(module);
  EXPECT_EQ(paramType(*module, "wte"), "tensor<256x256xf32>");
  EXPECT_EQ(paramType(*module, "wpe"), "tensor<64x256xf32>");
  EXPECT_EQ(paramType(*module, "h.3.attn.c_attn.weight"),
            "tensor<256x768xf32>");
  EXPECT_EQ(paramType(*module, "h.4.attn.c_attn.weight"), "missing");
  EXPECT_EQ(typeOf(forward(*module).getFunctionType()),
            "(tensor<4x64xi32>, tensor<4x64xi32>) -> tensor<f32>");
  EXPECT_EQ(countOps<nn::AttentionOp>(*module), 4);
  module->walk([](nn::AttentionOp op) { EXPECT_EQ(op.getHeads(), 4u); });
}

TEST_F(ModelsGPT, StageEvery) {
  GPTConfig c = config("tiny");
  c.stages.every = 2;
  OwningOpRef<ModuleOp> module = build(c);
  ASSERT_TRUE(module);
  EXPECT_EQ(countOps<nn::StageEndOp>(*module), 3);
  // Markers after layers 1, 3 and 5: 2, 4 and 6 attention ops before them.
  EXPECT_EQ(layersBeforeMarkers<nn::AttentionOp>(*module),
            (std::vector<int64_t>{2, 4, 6}));
  EXPECT_EQ(summarize(*module).stages, 4);
  // Each marker carries the residual stream: its operand is the block's
  // last residual add, its result feeds the next block's ln_1 and residual.
  module->walk([](nn::StageEndOp op) {
    ASSERT_EQ(op.getInputs().size(), 1u);
    EXPECT_TRUE(op.getInputs()[0].getDefiningOp<nn::AddOp>());
    EXPECT_EQ(op.getInputs()[0].getType(), op.getResult(0).getType());
    bool feedsLayerNorm = false;
    for (Operation *user : op.getResult(0).getUsers())
      feedsLayerNorm |= isa<nn::LayerNormOp>(user);
    EXPECT_TRUE(feedsLayerNorm);
  });
}

TEST_F(ModelsGPT, StageAt) {
  GPTConfig c = config("tiny");
  c.stages.at = {0, 5};
  OwningOpRef<ModuleOp> module = build(c);
  ASSERT_TRUE(module);
  EXPECT_EQ(layersBeforeMarkers<nn::AttentionOp>(*module),
            (std::vector<int64_t>{1, 6}));

  // After the last layer: the marker precedes ln_f.
  c.stages.at = {7};
  module = build(c);
  ASSERT_TRUE(module);
  EXPECT_EQ(layersBeforeMarkers<nn::AttentionOp>(*module),
            (std::vector<int64_t>{8}));
  int64_t markersBeforeHead = -1;
  module->walk([&](nn::LayerNormOp op) {
    auto name =
        dyn_cast<NameLoc>(cast<FusedLoc>(op.getLoc()).getLocations().front());
    if (name && name.getName() == "ln_f")
      markersBeforeHead = op.getInput().getDefiningOp<nn::StageEndOp>() ? 1 : 0;
  });
  EXPECT_EQ(markersBeforeHead, 1);
}

TEST_F(ModelsGPT, Gpt2ParameterCount) {
  GPTConfig c = config("gpt2-124m");
  EXPECT_EQ(gptParameterCount(c), 124439808);
  OwningOpRef<ModuleOp> module = build(c);
  ASSERT_TRUE(module);
  EXPECT_EQ(countParameters(*module), 124439808);
  EXPECT_EQ(countOps<nn::ParameterOp>(*module), 148);
  EXPECT_EQ(countOps<nn::AttentionOp>(*module), 12);

  // wpe has one row per position.
  c.seq = 128;
  int64_t shorter = 124439808 - 1024 * 768 + 128 * 768;
  EXPECT_EQ(gptParameterCount(c), shorter);
  module = build(c);
  ASSERT_TRUE(module);
  EXPECT_EQ(countParameters(*module), shorter);

  // An untied head adds lm_head.weight, vocab x dim.
  c = config("gpt2-124m");
  c.tied = false;
  EXPECT_EQ(gptParameterCount(c), 124439808 + 50257 * 768);
  module = build(c);
  ASSERT_TRUE(module);
  EXPECT_EQ(countParameters(*module), 124439808 + 50257 * 768);
  EXPECT_EQ(paramType(*module, "lm_head.weight"), "tensor<768x50257xf32>");
}

TEST_F(ModelsGPT, UntiedHead) {
  GPTConfig c = config("tiny");
  c.tied = false;
  OwningOpRef<ModuleOp> module = build(c);
  ASSERT_TRUE(module);
  EXPECT_EQ(paramType(*module, "lm_head.weight"), "tensor<32x256xf32>");
  EXPECT_EQ(paramType(*module, "lm_head.bias"), "missing");
  // wte is read once (the embedding) instead of twice.
  int64_t wteReads = 0;
  module->walk([&](nn::ParamOp op) { wteReads += op.getName() == "wte"; });
  EXPECT_EQ(wteReads, 1);
}

TEST_F(ModelsGPT, EveryConfigVerifies) {
  for (llvm::StringRef name : gptConfigNames()) {
    for (bool tied : {true, false}) {
      GPTConfig c = config(name);
      c.tied = tied;
      c.stages.every = 2;
      OwningOpRef<ModuleOp> module = build(c);
      ASSERT_TRUE(module) << name.str();
      EXPECT_TRUE(succeeded(verify(*module))) << name.str();
      EXPECT_EQ(countParameters(*module), gptParameterCount(c)) << name.str();
      EXPECT_EQ(countOps<nn::StageEndOp>(*module), (c.layers - 1) / 2)
          << name.str();
    }
  }
}

TEST_F(ModelsGPT, InvalidConfigIsAnError) {
  GPTConfig c = config("tiny");
  c.heads = 3;
  auto module = buildGPT(context, c);
  ASSERT_FALSE(static_cast<bool>(module));
  EXPECT_EQ(message(module.takeError()),
            "invalid GPT config: heads (3) must divide dim (32)");

  c = config("tiny");
  c.stages.every = 2;
  c.stages.at = {3};
  module = buildGPT(context, c);
  ASSERT_FALSE(static_cast<bool>(module));
  EXPECT_EQ(message(module.takeError()),
            "invalid stage markers: give either markers every k layers or "
            "markers at explicit layers, not both");
}

TEST_F(ModelsGPT, Locations) {
  OwningOpRef<ModuleOp> module = build(config("tiny"));
  ASSERT_TRUE(module);
  std::vector<std::string> names;
  module->walk([&](nn::AttentionOp op) {
    auto fused = dyn_cast<FusedLoc>(op.getLoc());
    ASSERT_TRUE(fused);
    auto config = dyn_cast_or_null<StringAttr>(fused.getMetadata());
    ASSERT_TRUE(config);
    EXPECT_EQ(config.str(), "gpt tiny: layers=8 dim=32 heads=2 vocab=256 "
                            "seq=16 batch=8 tied");
    auto name = dyn_cast<NameLoc>(fused.getLocations().front());
    ASSERT_TRUE(name);
    names.push_back(name.getName().str());
  });
  ASSERT_EQ(names.size(), 8u);
  EXPECT_EQ(names[0], "h.0.attn");
  EXPECT_EQ(names[3], "h.3.attn");
}

TEST_F(ModelsGPT, Summary) {
  GPTConfig c = config("tiny");
  c.stages.at = {3};
  OwningOpRef<ModuleOp> module = build(c);
  ASSERT_TRUE(module);
  ModelSummary s = summarize(*module);
  EXPECT_EQ(s.parameters, 110400);
  EXPECT_EQ(s.parameters, gptParameterCount(c));
  EXPECT_EQ(s.parameterTensors, 100);
  EXPECT_EQ(s.stages, 2);
  EXPECT_EQ(s.opCounts["nn.attention"], 8);
  EXPECT_EQ(s.opCounts["nn.stage_end"], 1);
  EXPECT_EQ(s.opCounts["nn.embedding"], 1);
  // 100 declared parameters, wte read twice.
  EXPECT_EQ(s.opCounts["nn.param"], 101);
}

} // namespace
