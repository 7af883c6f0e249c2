//===- CostModelTest.cpp - FLOPs, bytes and roofline times of nn ops ------===//

#include "tandem/Analysis/CostModel.h"
#include "tandem/InitAll.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace tandem::analysis;

namespace {

/// Parses `body` as the body of a function with arguments `args` and
/// returns its first op.
class CostModelTest : public ::testing::Test {
protected:
  CostModelTest() {
    DialectRegistry registry;
    tandem::registerAllDialects(registry);
    context = std::make_unique<MLIRContext>(registry);
    context->loadAllAvailableDialects();
    context->allowUnregisteredDialects();
  }

  Operation *firstOp(StringRef args, StringRef body) {
    std::string source =
        ("func.func @f(" + args + ") {\n" + body + "\n  func.return\n}\n")
            .str();
    module = parseSourceString<ModuleOp>(source, context.get());
    if (!module)
      return nullptr;
    auto func = *module->getBody()->getOps<func::FuncOp>().begin();
    return &func.getBody().front().front();
  }

  OpCost cost(StringRef args, StringRef body) {
    Operation *op = firstOp(args, body);
    EXPECT_NE(op, nullptr) << body.str();
    if (!op)
      return {};
    llvm::Expected<OpCost> c = estimateOp(op);
    EXPECT_TRUE(static_cast<bool>(c)) << llvm::toString(c.takeError());
    return c ? *c : OpCost();
  }

  /// A device with round numbers: 1000 FLOP/s at f32, 4000 at bf16, 100
  /// bytes/s, 0.5 s per launch.
  static Device toy() {
    Device d;
    d.name = "toy";
    d.peakFlops = {{"f32", 1000.0}, {"tf32", 2000.0}, {"bf16", 4000.0}};
    d.memoryBandwidth = 100.0;
    d.launchOverhead = 0.5;
    d.linkBandwidth = 10.0;
    return d;
  }

  std::unique_ptr<MLIRContext> context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(CostModelTest, MatmulCountsBatchAndK) {
  // 2 batches of (4x8)·(8x16): 2·(2·4·16)·8 FLOPs; (64 + 128 + 128)·4 bytes.
  OpCost c = cost("%a: tensor<2x4x8xf32>, %b: tensor<8x16xf32>",
                  "%y = nn.matmul %a, %b : tensor<2x4x8xf32>, "
                  "tensor<8x16xf32> -> tensor<2x4x16xf32>");
  EXPECT_EQ(c.flops, 2048.0);
  EXPECT_EQ(c.bytes, 1280.0);
  EXPECT_EQ(c.dtype, "f32");
  EXPECT_TRUE(c.matrix);
}

TEST_F(CostModelTest, MatmulTransposeFlagsPickK) {
  // transpose_lhs: lhs is K×M, K = 8; bf16 is 2 bytes.
  OpCost lhs = cost("%a: tensor<3x8x4xbf16>, %b: tensor<3x8x16xbf16>",
                    "%y = nn.matmul %a, %b {transpose_lhs} : "
                    "tensor<3x8x4xbf16>, tensor<3x8x16xbf16> -> "
                    "tensor<3x4x16xbf16>");
  EXPECT_EQ(lhs.flops, 2.0 * 3 * 4 * 16 * 8);
  EXPECT_EQ(lhs.bytes, (96 + 384 + 192) * 2.0);
  EXPECT_EQ(lhs.dtype, "bf16");
  // transpose_rhs: rhs is N×K; K is still lhs's last dimension, 8.
  OpCost rhs = cost("%a: tensor<4x8xf32>, %b: tensor<16x8xf32>",
                    "%y = nn.matmul %a, %b {transpose_rhs} : "
                    "tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>");
  EXPECT_EQ(rhs.flops, 2.0 * 4 * 16 * 8);
}

TEST_F(CostModelTest, RooflinePicksTheMax) {
  Operation *mm = firstOp("%a: tensor<2x4x8xf32>, %b: tensor<8x16xf32>",
                          "%y = nn.matmul %a, %b : tensor<2x4x8xf32>, "
                          "tensor<8x16xf32> -> tensor<2x4x16xf32>");
  ASSERT_NE(mm, nullptr);
  Device d = toy();
  // Memory bound: 1280 B / 100 B/s = 12.8 s > 2048 / 1000 = 2.048 s.
  llvm::Expected<double> t = estimateTime(mm, d);
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  EXPECT_DOUBLE_EQ(*t, 12.8 + 0.5);
  // Compute bound once memory is fast: 2.048 s > 1280 / 1e4 = 0.128 s.
  d.memoryBandwidth = 1e4;
  t = estimateTime(mm, d);
  ASSERT_TRUE(static_cast<bool>(t));
  EXPECT_DOUBLE_EQ(*t, 2.048 + 0.5);
}

TEST_F(CostModelTest, DTypePeaks) {
  Device d = toy();
  d.memoryBandwidth = 1e9; // compute bound throughout
  d.launchOverhead = 0.0;
  // bf16 matmul at the bf16 peak: 2·4·16·8 = 1024 FLOPs / 4000.
  Operation *mm = firstOp("%a: tensor<4x8xbf16>, %b: tensor<8x16xbf16>",
                          "%y = nn.matmul %a, %b : tensor<4x8xbf16>, "
                          "tensor<8x16xbf16> -> tensor<4x16xbf16>");
  ASSERT_NE(mm, nullptr);
  EXPECT_DOUBLE_EQ(*estimateTime(mm, d), 1024.0 / 4000.0);
  // An elementwise bf16 op is off the matrix units: the f32 peak.
  Operation *add =
      firstOp("%a: tensor<4x8xbf16>", "%y = nn.add %a, %a : tensor<4x8xbf16>, "
                                      "tensor<4x8xbf16> -> tensor<4x8xbf16>");
  ASSERT_NE(add, nullptr);
  EXPECT_DOUBLE_EQ(*estimateTime(add, d), 32.0 / 1000.0);
  // f32 matmul: f32 peak, or tf32 when asked.
  Operation *f32 = firstOp("%a: tensor<4x8xf32>, %b: tensor<8x16xf32>",
                           "%y = nn.matmul %a, %b : tensor<4x8xf32>, "
                           "tensor<8x16xf32> -> tensor<4x16xf32>");
  ASSERT_NE(f32, nullptr);
  EXPECT_DOUBLE_EQ(*estimateTime(f32, d), 1024.0 / 1000.0);
  CostOptions options;
  options.tf32 = true;
  EXPECT_DOUBLE_EQ(*estimateTime(f32, d, options), 1024.0 / 2000.0);
  // A dtype the device has no peak for.
  Operation *f8 = firstOp(
      "%a: tensor<4x8xf8E4M3FN>, %b: tensor<8x16xf8E4M3FN>",
      "%y = nn.matmul %a, %b : tensor<4x8xf8E4M3FN>, tensor<8x16xf8E4M3FN> "
      "-> tensor<4x16xf8E4M3FN>");
  ASSERT_NE(f8, nullptr);
  llvm::Expected<double> missing = estimateTime(f8, d);
  ASSERT_FALSE(static_cast<bool>(missing));
  EXPECT_EQ(llvm::toString(missing.takeError()),
            "device 'toy' has no peak_flops for f8");
}

TEST_F(CostModelTest, ElementwiseAndReductions) {
  // Transcendental: kTranscendentalFlops per element.
  OpCost exp = cost("%a: tensor<10xf32>", "%y = nn.exp %a : tensor<10xf32>");
  EXPECT_EQ(exp.flops, 10 * kTranscendentalFlops);
  EXPECT_EQ(exp.bytes, 80.0);
  // Broadcasting: one FLOP per result element; both operands read.
  OpCost add = cost("%a: tensor<4x8xf32>, %b: tensor<8xf32>",
                    "%y = nn.add %a, %b : tensor<4x8xf32>, tensor<8xf32> -> "
                    "tensor<4x8xf32>");
  EXPECT_EQ(add.flops, 32.0);
  EXPECT_EQ(add.bytes, (32 + 8 + 32) * 4.0);
  // A mean: a sum over the input and a division per result element.
  OpCost mean = cost("%a: tensor<4x8xf32>", "%y = nn.reduce_mean %a [1] : "
                                            "tensor<4x8xf32> -> tensor<4xf32>");
  EXPECT_EQ(mean.flops, 32.0 + 4.0);
  EXPECT_EQ(mean.bytes, (32 + 4) * 4.0);
  OpCost softmax =
      cost("%a: tensor<4x8xf32>", "%y = nn.softmax %a {axis = 1 : i64} : "
                                  "tensor<4x8xf32>");
  EXPECT_EQ(softmax.flops, 32 * (4 + kTranscendentalFlops));
}

TEST_F(CostModelTest, AttentionCountsItsMatmulsAndSoftmax) {
  // B = 2, T = 16, D = 32, 4 heads: QKᵀ and PV are 2·B·T·T·D FLOPs each;
  // the scale and the softmax act on B·heads·T·T scores.
  OpCost c = cost("%q: tensor<2x16x32xf32>",
                  "%y = nn.attention %q, %q, %q {heads = 4 : i64} : "
                  "tensor<2x16x32xf32>, tensor<2x16x32xf32>, "
                  "tensor<2x16x32xf32> -> tensor<2x16x32xf32>");
  double scores = 2.0 * 4 * 16 * 16;
  EXPECT_EQ(c.flops,
            4.0 * 2 * 16 * 16 * 32 + scores * (5 + kTranscendentalFlops));
  EXPECT_EQ(c.bytes, 4 * 1024 * 4.0);
  EXPECT_TRUE(c.matrix);
  // Grouped-query attention, 4 query heads on 1 key and value head of 8:
  // every query head still scores every key, but the key and value are a
  // quarter as wide, and so are their bytes.
  OpCost g = cost("%q: tensor<2x16x32xf32>, %k: tensor<2x16x8xf32>",
                  "%y = nn.attention %q, %k, %k {heads = 4 : i64, kv_heads = "
                  "1 : i64} : tensor<2x16x32xf32>, tensor<2x16x8xf32>, "
                  "tensor<2x16x8xf32> -> tensor<2x16x32xf32>");
  EXPECT_EQ(g.flops, c.flops);
  EXPECT_EQ(g.bytes, (2 * 1024 + 2 * 256) * 4.0);
}

TEST_F(CostModelTest, ShapeOpsMoveBytesOnly) {
  Device d = toy();
  OpCost t = cost("%a: tensor<4x8xf32>",
                  "%y = nn.transpose %a, [1, 0] : tensor<4x8xf32> -> "
                  "tensor<8x4xf32>");
  EXPECT_EQ(t.flops, 0.0);
  EXPECT_EQ(t.bytes, 256.0);
  EXPECT_DOUBLE_EQ(*timeOn(t, d), 2.56 + 0.5);
  // A gather reads the ids and the rows it selects, writes the result.
  OpCost emb = cost("%t: tensor<100x8xf32>, %i: tensor<2x3xi32>",
                    "%y = nn.embedding %t, %i : tensor<100x8xf32>, "
                    "tensor<2x3xi32> -> tensor<2x3x8xf32>");
  EXPECT_EQ(emb.flops, 0.0);
  EXPECT_EQ(emb.bytes, 24.0 + 2 * 192.0);
  // A view and a parameter read cost nothing, not even a launch.
  OpCost view = cost("%a: tensor<4x8xf32>",
                     "%y = nn.reshape %a : tensor<4x8xf32> to tensor<32xf32>");
  EXPECT_TRUE(view.isFree());
  EXPECT_EQ(*timeOn(view, d), 0.0);
}

// The ops a JAX import needs: erf and erfc a transcendental per element,
// stop_gradient an identity (bytes, no FLOPs), one_hot a write of its rows
// after reading the ids.
TEST_F(CostModelTest, ErrorFunctionsStopGradientAndOneHot) {
  for (const char *op : {"nn.erf", "nn.erfc"}) {
    OpCost c = cost("%a: tensor<4x8xf32>",
                    std::string("%y = ") + op + " %a : tensor<4x8xf32>");
    EXPECT_EQ(c.flops, 32.0 * kTranscendentalFlops) << op;
    EXPECT_EQ(c.bytes, 256.0) << op;
  }
  OpCost stop = cost("%a: tensor<4x8xbf16>",
                     "%y = nn.stop_gradient %a : tensor<4x8xbf16>");
  EXPECT_EQ(stop.flops, 0.0);
  EXPECT_EQ(stop.bytes, 128.0);
  OpCost hot =
      cost("%i: tensor<2x3xi32>", "%y = nn.one_hot %i {classes = 10 : i64} : "
                                  "tensor<2x3xi32> -> tensor<2x3x10xf32>");
  EXPECT_EQ(hot.flops, 0.0);
  EXPECT_EQ(hot.bytes, 24.0 + 240.0);
}

TEST_F(CostModelTest, BytesPerElementType) {
  Builder b(context.get());
  EXPECT_EQ(bytesOf(RankedTensorType::get({3}, b.getI1Type())), 3.0);
  EXPECT_EQ(bytesOf(RankedTensorType::get({3}, b.getType<Float8E4M3FNType>())),
            3.0);
  EXPECT_EQ(bytesOf(RankedTensorType::get({3}, b.getBF16Type())), 6.0);
  EXPECT_EQ(bytesOf(RankedTensorType::get({3}, b.getF64Type())), 24.0);
  EXPECT_EQ(peakKey(b.getType<Float8E5M2Type>()), "f8");
  EXPECT_EQ(peakKey(b.getI32Type()), "f32");
}

TEST_F(CostModelTest, AnOpWithoutARuleIsAnErrorNamingIt) {
  Operation *op = firstOp("%a: tensor<4xf32>",
                          "%y = \"test.mystery\"(%a) : (tensor<4xf32>) -> "
                          "tensor<4xf32>");
  ASSERT_NE(op, nullptr);
  llvm::Expected<OpCost> c = estimateOp(op);
  ASSERT_FALSE(static_cast<bool>(c));
  EXPECT_EQ(llvm::toString(c.takeError()),
            "no cost rule for op 'test.mystery'");
}

} // namespace
