//===- ConfigTest.cpp - configuration validation and named configs -------===//

#include "TestUtils.h"

#include "tandem/Models/Config.h"

#include "gtest/gtest.h"

using namespace tandem::models;
using tandem::models::testing::message;

namespace {

GPTConfig tiny() { return llvm::cantFail(getGPTConfig("tiny")); }

TEST(ModelsGPTConfig, NamedConfigs) {
  GPTConfig t = tiny();
  EXPECT_EQ(t.layers, 8);
  EXPECT_EQ(t.dim, 32);
  EXPECT_EQ(t.heads, 2);
  EXPECT_EQ(t.vocab, 256);
  EXPECT_EQ(t.seq, 16);
  EXPECT_EQ(t.batch, 8);

  GPTConfig s = llvm::cantFail(getGPTConfig("small"));
  EXPECT_EQ(s.layers, 4);
  EXPECT_EQ(s.dim, 256);
  EXPECT_EQ(s.heads, 4);
  EXPECT_EQ(s.vocab, 256);
  EXPECT_EQ(s.seq, 64);
  EXPECT_EQ(s.batch, 4);

  GPTConfig g = llvm::cantFail(getGPTConfig("gpt2-124m"));
  EXPECT_EQ(g.layers, 12);
  EXPECT_EQ(g.dim, 768);
  EXPECT_EQ(g.heads, 12);
  EXPECT_EQ(g.vocab, 50257);
  EXPECT_EQ(g.seq, 1024);
  EXPECT_EQ(g.batch, 1);
  EXPECT_TRUE(g.tied);

  for (llvm::StringRef name : gptConfigNames()) {
    llvm::Expected<GPTConfig> config = getGPTConfig(name);
    ASSERT_TRUE(static_cast<bool>(config)) << name.str();
    EXPECT_EQ(config->name, name.str());
    EXPECT_EQ(message(config->validate()), "") << name.str();
  }
}

TEST(ModelsGPTConfig, UnknownName) {
  EXPECT_EQ(message(getGPTConfig("huge").takeError()),
            "unknown GPT config 'huge'; known configs: tiny, small, "
            "gpt2-124m");
  EXPECT_EQ(message(getMLPConfig("small").takeError()),
            "unknown MLP config 'small'; known configs: tiny");
}

TEST(ModelsGPTConfig, BadHeads) {
  GPTConfig config = tiny();
  config.heads = 3;
  EXPECT_EQ(message(config.validate()),
            "invalid GPT config: heads (3) must divide dim (32)");
}

TEST(ModelsGPTConfig, NonPositiveSizes) {
  GPTConfig config = tiny();
  config.seq = 0;
  EXPECT_EQ(message(config.validate()),
            "invalid GPT config: seq must be positive, found 0");
  config = tiny();
  config.heads = -4;
  EXPECT_EQ(message(config.validate()),
            "invalid GPT config: heads must be positive, found -4");
}

TEST(ModelsStageMarkers, OutOfRange) {
  GPTConfig config = tiny();
  config.stages.at = {2, 8};
  EXPECT_EQ(message(config.validate()),
            "invalid stage markers: a marker after layer 8 is out of range; "
            "the model has 8 layers, so markers go after layers 0..7");
  config.stages.at = {-1};
  EXPECT_EQ(message(config.validate()),
            "invalid stage markers: a marker after layer -1 is out of range; "
            "the model has 8 layers, so markers go after layers 0..7");
}

TEST(ModelsStageMarkers, BothKinds) {
  GPTConfig config = tiny();
  config.stages.every = 2;
  config.stages.at = {1};
  EXPECT_EQ(message(config.validate()),
            "invalid stage markers: give either markers every k layers or "
            "markers at explicit layers, not both");
}

TEST(ModelsStageMarkers, UnsortedOrDuplicate) {
  StageMarkers markers;
  markers.at = {3, 1};
  EXPECT_EQ(message(markers.validate(8)),
            "invalid stage markers: layer indices must be sorted and unique, "
            "found 1 after 3");
  markers.at = {2, 2};
  EXPECT_EQ(message(markers.validate(8)),
            "invalid stage markers: layer indices must be sorted and unique, "
            "found 2 after 2");
}

TEST(ModelsStageMarkers, Interval) {
  StageMarkers markers;
  markers.every = 9;
  EXPECT_EQ(message(markers.validate(8)),
            "invalid stage markers: the interval 9 exceeds the number of "
            "layers (8)");
  markers.every = -2;
  EXPECT_EQ(message(markers.validate(8)),
            "invalid stage markers: the interval must be positive, found -2");
}

TEST(ModelsStageMarkers, LayersWithMarker) {
  StageMarkers markers;
  EXPECT_TRUE(markers.empty());
  EXPECT_EQ(markers.layersWithMarker(8), std::vector<int64_t>{});
  markers.every = 2;
  EXPECT_EQ(markers.layersWithMarker(8), (std::vector<int64_t>{1, 3, 5}));
  markers.every = 3;
  EXPECT_EQ(markers.layersWithMarker(8), (std::vector<int64_t>{2, 5}));
  // Every layer is a stage; never a marker after the last one.
  markers.every = 1;
  EXPECT_EQ(markers.layersWithMarker(3), (std::vector<int64_t>{0, 1}));
  markers.every = 8;
  EXPECT_EQ(markers.layersWithMarker(8), std::vector<int64_t>{});
  markers.every = 0;
  markers.at = {0, 7};
  EXPECT_EQ(message(markers.validate(8)), "");
  EXPECT_EQ(markers.layersWithMarker(8), (std::vector<int64_t>{0, 7}));
}

TEST(ModelsMLPConfig, TinyAndValidation) {
  MLPConfig config = llvm::cantFail(getMLPConfig("tiny"));
  EXPECT_EQ(config.layers, 4);
  EXPECT_EQ(config.dim, 64);
  EXPECT_EQ(config.inputs, 32);
  EXPECT_EQ(config.classes, 10);
  EXPECT_EQ(config.batch, 16);
  EXPECT_EQ(message(config.validate()), "");

  config.inputs = 0;
  EXPECT_EQ(message(config.validate()),
            "invalid MLP config: inputs must be positive, found 0");
  config.inputs = 32;
  config.stages.at = {4};
  EXPECT_EQ(message(config.validate()),
            "invalid stage markers: a marker after layer 4 is out of range; "
            "the model has 4 layers, so markers go after layers 0..3");
}

} // namespace
