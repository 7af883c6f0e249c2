//===- ParametersTest.cpp - initialization and safetensors ----------------===//

#include "EvalTestUtils.h"

#include "tandem/Eval/Parameters.h"
#include "tandem/Runtime/Init.h"
#include "tandem/Runtime/Safetensors.h"

#include "llvm/Support/FileSystem.h"

using namespace tandem::eval;
using namespace tandem::eval::test;

namespace {

const char *kModel = R"(
  nn.parameter @w : tensor<3x4xf32> = normal(0.02)
  nn.parameter @u : tensor<5xf32> = uniform(-0.5, 0.5)
  nn.parameter @h : tensor<4xbf16> = normal(1.0)
  nn.parameter @b : tensor<4xf32> = ones
  func.func @f(%x: tensor<2x3xf32>) -> tensor<2x4xf32> {
    %w = nn.param @w : tensor<3x4xf32>
    %b = nn.param @b : tensor<4xf32>
    %y = nn.matmul %x, %w : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
    %r = nn.add %y, %b : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
    return %r : tensor<2x4xf32>
  })";

std::string tempPath(const char *name) {
  llvm::SmallString<128> path;
  llvm::sys::fs::createUniquePath(std::string("eval-%%%%%%-") + name, path,
                                  /*MakeAbsolute=*/true);
  return std::string(path);
}

TEST(EvalParameters, InitializationEqualsInitFill) {
  Program p = parse(kModel);
  ASSERT_TRUE(p.module);
  auto params = initializeParameters(*p.module, 7);
  ASSERT_TRUE(static_cast<bool>(params)) << llvm::toString(params.takeError());
  ASSERT_EQ(params->size(), 4u);

  for (const char *name : {"w", "u"}) {
    const Tensor &t = params->at(name);
    tandem::rng::InitSpec spec =
        std::string(name) == "w"
            ? tandem::rng::InitSpec{tandem::rng::InitKind::Normal, 0.02, 0}
            : tandem::rng::InitSpec{tandem::rng::InitKind::Uniform, -0.5, 0.5};
    std::vector<float> expected(t.data.size());
    tandem::rng::initFill(spec, 7, tandem::rng::parameterStream(name), 0,
                          expected.data(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i)
      EXPECT_EQ(t.data[i], static_cast<double>(expected[i])) << name << i;
  }
  EXPECT_EQ(params->at("b").data, std::vector<double>(4, 1.0));
  // Another seed gives other values; the same seed the same ones.
  auto other = initializeParameters(*p.module, 8);
  auto again = initializeParameters(*p.module, 7);
  ASSERT_TRUE(other && again);
  EXPECT_NE(other->at("w").data, params->at("w").data);
  EXPECT_EQ(again->at("w").data, params->at("w").data);
}

TEST(EvalParameters, SafetensorsRoundTrip) {
  Program p = parse(kModel);
  ASSERT_TRUE(p.module);
  auto params = initializeParameters(*p.module, 3);
  ASSERT_TRUE(static_cast<bool>(params));
  std::string path = tempPath("roundtrip.safetensors");
  ASSERT_FALSE(static_cast<bool>(saveParameters(*params, path)));
  auto loaded = loadParameters(*p.module, path);
  ASSERT_TRUE(static_cast<bool>(loaded)) << llvm::toString(loaded.takeError());
  for (const auto &[name, tensor] : *params) {
    EXPECT_EQ(loaded->at(name).data, tensor.data) << name;
    EXPECT_EQ(loaded->at(name).getType(), tensor.getType()) << name;
  }
  // Evaluating with the loaded parameters gives the same result.
  Tensor x = tensorOf(p.context.get(), "tensor<2x3xf32>", {1, 2, 3, 4, 5, 6});
  auto a = evaluate(p, {x}, {}, *params);
  auto b = evaluate(p, {x}, {}, *loaded);
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(a[0].data, b[0].data);
  llvm::sys::fs::remove(path);
}

TEST(EvalParameters, MismatchesAreListed) {
  Program p = parse(kModel);
  ASSERT_TRUE(p.module);
  auto params = initializeParameters(*p.module, 3);
  ASSERT_TRUE(static_cast<bool>(params));
  ParameterMap bad = *params;
  bad.erase("u");                                                  // missing
  bad["extra"] = bad.at("b");                                      // extra
  bad["w"] = Tensor(bad.at("w").elementType, {4, 3});              // shape
  bad["b"] = Tensor(mlir::Float64Type::get(p.context.get()), {4}); // dtype
  std::string path = tempPath("bad.safetensors");
  ASSERT_FALSE(static_cast<bool>(saveParameters(bad, path)));
  auto loaded = loadParameters(*p.module, path);
  ASSERT_FALSE(static_cast<bool>(loaded));
  std::string e = llvm::toString(loaded.takeError());
  EXPECT_NE(e.find("missing tensor 'u'"), std::string::npos) << e;
  EXPECT_NE(e.find("extra tensor 'extra'"), std::string::npos) << e;
  EXPECT_NE(e.find("'w' has shape [4, 3], the parameter needs [3, 4]"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("'b' has dtype F64, the parameter needs F32"),
            std::string::npos)
      << e;
  llvm::sys::fs::remove(path);

  auto missing = loadParameters(*p.module, path);
  ASSERT_FALSE(static_cast<bool>(missing));
  llvm::consumeError(missing.takeError());
}

TEST(EvalParameters, MissingParameterValueIsAnError) {
  Program p = parse(kModel);
  ASSERT_TRUE(p.module);
  Interpreter interpreter(*p.module);
  auto r = interpreter.run(
      "f", {tensorOf(p.context.get(), "tensor<2x3xf32>", {1, 2, 3, 4, 5, 6})});
  ASSERT_FALSE(static_cast<bool>(r));
  std::string e = llvm::toString(r.takeError());
  EXPECT_NE(e.find("no value for parameter 'w'"), std::string::npos) << e;
}

} // namespace
