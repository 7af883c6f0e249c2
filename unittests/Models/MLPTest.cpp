//===- MLPTest.cpp - MLP builder ------------------------------------------===//

#include "TestUtils.h"

#include "tandem/Models/MLP.h"
#include "tandem/Models/Summary.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace tandem;
using namespace tandem::models;
using namespace tandem::models::testing;

namespace {

MLPConfig tiny() { return llvm::cantFail(getMLPConfig("tiny")); }

TEST(ModelsMLP, TinyShapes) {
  MLIRContext context;
  auto module = buildMLP(context, tiny());
  ASSERT_TRUE(static_cast<bool>(module)) << toString(module.takeError());
  ModuleOp m = **module;
  EXPECT_TRUE(succeeded(verify(m)));
  EXPECT_EQ(paramType(m, "fc.0.weight"), "tensor<32x64xf32>");
  EXPECT_EQ(paramType(m, "fc.0.bias"), "tensor<64xf32>");
  EXPECT_EQ(paramType(m, "fc.3.weight"), "tensor<64x64xf32>");
  EXPECT_EQ(paramType(m, "fc.4.weight"), "missing");
  EXPECT_EQ(paramType(m, "head.weight"), "tensor<64x10xf32>");
  EXPECT_EQ(paramType(m, "head.bias"), "tensor<10xf32>");

  nn::InitializerAttr init = paramInit(m, "fc.1.weight");
  ASSERT_TRUE(init);
  EXPECT_EQ(init.getKind(), nn::InitKind::Uniform);
  EXPECT_DOUBLE_EQ(init.getAValue(), -0.125);
  EXPECT_DOUBLE_EQ(init.getBValue(), 0.125);
  EXPECT_EQ(paramInit(m, "head.bias").getKind(), nn::InitKind::Zeros);

  auto f = m.lookupSymbol<func::FuncOp>("forward");
  ASSERT_TRUE(f);
  std::string type;
  llvm::raw_string_ostream os(type);
  os << f.getFunctionType();
  EXPECT_EQ(type, "(tensor<16x32xf32>, tensor<16xi32>) -> tensor<f32>");
  EXPECT_EQ(countOps<nn::GeluOp>(m), 4);
  EXPECT_EQ(countOps<nn::MatmulOp>(m), 5);
  EXPECT_EQ(countOps<nn::CrossEntropyOp>(m), 1);
  EXPECT_EQ(countOps<nn::StageEndOp>(m), 0);
  EXPECT_EQ(countParameters(m), 15242);
  EXPECT_EQ(mlpParameterCount(tiny()), 15242);
}

TEST(ModelsMLP, StageMarkers) {
  MLIRContext context;
  MLPConfig config = tiny();
  config.stages.every = 2;
  auto module = buildMLP(context, config);
  ASSERT_TRUE(static_cast<bool>(module)) << toString(module.takeError());
  EXPECT_EQ(layersBeforeMarkers<nn::GeluOp>(**module),
            (std::vector<int64_t>{2}));

  config.stages.every = 0;
  config.stages.at = {0, 1, 3};
  module = buildMLP(context, config);
  ASSERT_TRUE(static_cast<bool>(module)) << toString(module.takeError());
  EXPECT_EQ(layersBeforeMarkers<nn::GeluOp>(**module),
            (std::vector<int64_t>{1, 2, 4}));
  EXPECT_EQ(summarize(**module).stages, 4);
}

TEST(ModelsMLP, OneLayerAndOverrides) {
  MLIRContext context;
  MLPConfig config = tiny();
  config.layers = 1;
  config.dim = 16;
  config.inputs = 8;
  config.classes = 3;
  config.batch = 2;
  auto module = buildMLP(context, config);
  ASSERT_TRUE(static_cast<bool>(module)) << toString(module.takeError());
  EXPECT_EQ(countParameters(**module), 8 * 16 + 16 + 16 * 3 + 3);
  EXPECT_EQ(mlpParameterCount(config), 8 * 16 + 16 + 16 * 3 + 3);
}

TEST(ModelsMLP, InvalidConfigIsAnError) {
  MLIRContext context;
  MLPConfig config = tiny();
  config.stages.at = {1, 9};
  auto module = buildMLP(context, config);
  ASSERT_FALSE(static_cast<bool>(module));
  EXPECT_EQ(message(module.takeError()),
            "invalid stage markers: a marker after layer 9 is out of range; "
            "the model has 4 layers, so markers go after layers 0..3");
}

} // namespace
