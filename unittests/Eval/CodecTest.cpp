//===- CodecTest.cpp - nn.quantize and nn.dequantize round trips ----------===//
//
// Every element decodes within the bound NNCodecOps.td states for its
// block's scale, for every payload type and input type, on blocks chosen
// for their edge cases: all zeros, one large outlier, magnitudes over many
// orders, f32 subnormals, an infinity, a NaN, and a last block shorter than
// the others.
//
//===----------------------------------------------------------------------===//

#include "EvalTestUtils.h"

#include "tandem/Support/Codec.h"

#include "llvm/Support/FormatVariadic.h"

#include <cfloat>
#include <cmath>
#include <random>

using namespace tandem::eval;
using namespace tandem::eval::test;

namespace {

constexpr int kRows = 4, kWidth = 300, kBlock = 128, kBlocks = 3;

struct Payload {
  const char *type;
  tandem_codec::Code code;
  /// Significant bits and smallest normal exponent of the f8 formats.
  int precision, minExponent;
};

const Payload kPayloads[] = {{"i8", tandem_codec::kInt8, 0, 0},
                             {"f8E4M3FN", tandem_codec::kF8E4M3FN, 4, -6},
                             {"f8E5M2", tandem_codec::kF8E5M2, 3, -14}};

/// Rows of blocks built for their edge cases (values exact in bf16 where
/// the input is bf16: the test rounds them first).
std::vector<double> edgeCaseRows(std::mt19937 &rng) {
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> exponent(-20.0, 20.0);
  std::vector<double> x(kRows * kWidth);
  auto at = [&](int row, int j) -> double & { return x[row * kWidth + j]; };
  for (int j = 0; j < kWidth; ++j) {
    at(0, j) = normal(rng);
    // Block 0 of row 1 stays zero; block 1 has one outlier.
    if (j >= kBlock)
      at(1, j) = j == kBlock + 17 ? 4096.0 : normal(rng) * 1e-2;
    // Magnitudes over 40 binary orders.
    at(2, j) = std::copysign(std::exp2(exponent(rng)), normal(rng));
    // f32 subnormals in block 0, an infinity in block 1, a NaN in block 2.
    at(3, j) = normal(rng) * 1e-42;
  }
  at(3, kBlock + 5) = INFINITY;
  at(3, 2 * kBlock + 9) = NAN;
  return x;
}

TEST(Codec, EveryElementDecodesWithinItsBlocksBound) {
  std::mt19937 rng(11);
  for (const char *input : {"f32", "bf16"})
    for (const Payload &p : kPayloads) {
      SCOPED_TRACE(std::string(input) + " to " + p.type);
      std::string x =
          llvm::formatv("tensor<{0}x{1}x{2}>", kRows, kWidth, input).str();
      std::string q =
          llvm::formatv("tensor<{0}x{1}x{2}>", kRows, kWidth, p.type).str();
      std::string s =
          llvm::formatv("tensor<{0}x{1}xf32>", kRows, kBlocks).str();
      std::string y = llvm::formatv("tensor<{0}x{1}xf32>", kRows, kWidth).str();
      Program program = parse(
          "func.func @f(%x: " + x + ") -> (" + q + ", " + s + ", " + y +
          ") {\n  %q, %s = nn.quantize %x {block = " + std::to_string(kBlock) +
          "} : " + x + " to " + q + ", " + s +
          "\n  %y = nn.dequantize %q, %s {block = " + std::to_string(kBlock) +
          "} : " + q + ", " + s + " to " + y + "\n  return %q, %s, %y : " + q +
          ", " + s + ", " + y + "\n}\n");
      ASSERT_TRUE(program.module);
      Tensor in = tensorOf(program.context.get(), x, edgeCaseRows(rng));
      // tensorOf keeps the doubles: round them to the input's type.
      for (double &v : in.data)
        v = std::string(input) == "bf16"
                ? tandem_round::roundBinary(v, tandem_round::kBF16, false)
                : (double)(float)v;
      std::vector<Tensor> out = evaluate(program, {in});
      ASSERT_EQ(out.size(), 3u);
      const Tensor &codes = out[0], &scales = out[1], &decoded = out[2];
      double largest = tandem_codec::largestCode(p.code);
      for (int r = 0; r < kRows; ++r)
        for (int b = 0; b < kBlocks; ++b) {
          int begin = b * kBlock, end = std::min(kWidth, begin + kBlock);
          double amax = 0.0;
          bool finite = true;
          for (int j = begin; j < end; ++j) {
            finite = finite && std::isfinite(in.data[r * kWidth + j]);
            amax = std::max(amax, std::fabs(in.data[r * kWidth + j]));
          }
          double scale = scales.data[r * kBlocks + b];
          SCOPED_TRACE(llvm::formatv("row {0} block {1}", r, b).str());
          if (!finite) {
            EXPECT_TRUE(std::isnan(scale));
            for (int j = begin; j < end; ++j)
              EXPECT_TRUE(std::isnan(decoded.data[r * kWidth + j]));
            continue;
          }
          if (amax == 0.0) {
            EXPECT_EQ(scale, 0.0);
            for (int j = begin; j < end; ++j)
              EXPECT_EQ(decoded.data[r * kWidth + j], 0.0);
            continue;
          }
          // The scale is amax / L rounded up to f32: no code beyond L.
          EXPECT_EQ(scale, (double)(float)scale);
          EXPECT_GE(scale * largest, amax);
          EXPECT_TRUE(scale == FLT_TRUE_MIN ||
                      (double)std::nextafter((float)scale, 0.0f) * largest <
                          amax);
          for (int j = begin; j < end; ++j) {
            int i = r * kWidth + j;
            double v = in.data[i], c = codes.data[i], d = decoded.data[i];
            ASSERT_LE(std::fabs(c), largest);
            double bound;
            if (p.code == tandem_codec::kInt8) {
              EXPECT_EQ(c, std::nearbyint(c));
              bound = scale / 2;
            } else {
              // A value of the f8 format, half a unit in its last place
              // (relative, or the subnormal step's half) from v / s.
              EXPECT_EQ(
                  c, tandem_round::roundBinary(c,
                                               p.code == tandem_codec::kF8E4M3FN
                                                   ? tandem_round::kF8E4M3FN
                                                   : tandem_round::kF8E5M2,
                                               false));
              bound =
                  scale *
                  std::max(std::fabs(v / scale) * std::ldexp(1.0, -p.precision),
                           std::ldexp(1.0, p.minExponent - p.precision));
            }
            // v / s rounds once in double; the decode rounds once to f32
            // (or to its subnormal step of 2^-150 at the bottom).
            bound += std::fabs(v) * 0x1p-52 +
                     std::max(std::fabs(d) * 0x1p-24, 0x1p-150);
            EXPECT_LE(std::fabs(v - d), bound) << "element " << j;
          }
        }
    }
}

// The arithmetic on its own: blocks of one value at the edges of the
// scale's range, and the bytes a code is stored as.
TEST(Codec, ScalesAtTheEdgesAndStorageBytes) {
  using namespace tandem_codec;
  EXPECT_EQ(blockScale(0.0, kInt8), 0.0f);
  EXPECT_TRUE(std::isnan(blockScale(INFINITY, kInt8)));
  EXPECT_TRUE(std::isnan(blockScale(NAN, kF8E4M3FN)));
  // amax / 127 beyond f32: NaN, and the block decodes to NaN.
  EXPECT_TRUE(std::isnan(blockScale(1e300, kInt8)));
  EXPECT_TRUE(std::isnan(decode(encode(1e300, blockScale(1e300, kInt8), kInt8),
                                blockScale(1e300, kInt8))));
  // The smallest positive double: the scale is the smallest positive f32.
  EXPECT_EQ(blockScale(4.9e-324, kInt8), FLT_TRUE_MIN);
  EXPECT_EQ(encode(4.9e-324, FLT_TRUE_MIN, kInt8), 0.0);
  // 127 exactly: scale 1, code 127.
  EXPECT_EQ(blockScale(127.0, kInt8), 1.0f);
  EXPECT_EQ(encode(-127.0, 1.0f, kInt8), -127.0);
  EXPECT_EQ(encode(448.0, 1.0f, kF8E4M3FN), 448.0);
  // Ties to even: 2.5 codes to 2.
  EXPECT_EQ(encode(2.5, 1.0f, kInt8), 2.0);
  for (Code code : {kInt8, kF8E4M3FN, kF8E5M2})
    for (int byte = 0; byte < 256; ++byte) {
      double c = codeOfByte(static_cast<uint8_t>(byte), code);
      if (std::isnan(c) || std::isinf(c) || std::fabs(c) > largestCode(code) ||
          (code == kInt8 && byte == 0x80))
        continue;
      // Every code a byte holds comes back as that byte (but -0 and the
      // i8 code -128, which the encoder never writes).
      if (c == 0.0 && std::signbit(c))
        continue;
      EXPECT_EQ(codeByte(c, code), byte) << "code " << code;
    }
}

} // namespace
