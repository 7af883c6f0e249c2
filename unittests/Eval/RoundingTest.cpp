//===- RoundingTest.cpp - rounding to element types -----------------------===//

#include "EvalTestUtils.h"

#include "tandem/Eval/Rounding.h"
#include "tandem/Support/Rounding.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/APFloat.h"

#include <random>

#include <cmath>
#include <limits>

using namespace tandem::eval;
using namespace tandem::eval::test;

namespace {

class EvalRounding : public ::testing::Test {
protected:
  mlir::MLIRContext context;
  mlir::Builder b{&context};
  double round(double x, mlir::Type type, bool saturate = false) {
    RoundingOptions options;
    options.saturate = saturate;
    return roundToType(x, type, options);
  }
};

/// The reference: APFloat's conversion, round to nearest even, with
/// saturation replacing infinities by the largest finite value.
double roundWithAPFloat(double value, const llvm::fltSemantics &semantics,
                        bool saturate) {
  llvm::APFloat x(value);
  bool losesInfo = false;
  x.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  // A format without infinities (f8E4M3FN) overflows to NaN.
  if (saturate && !std::isnan(value) && (x.isInfinity() || x.isNaN()))
    x = llvm::APFloat::getLargest(semantics, value < 0);
  x.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &losesInfo);
  return x.convertToDouble();
}

// bf16, f16 and the f8 formats round with double arithmetic
// (tandem/Support/Rounding.h, shared with the generated code); they must
// agree with APFloat bit for bit: random values over every exponent the
// formats have, their subnormals and overflow, exact ties and their
// neighbours, zeros and infinities.
TEST_F(EvalRounding, FastRoundingMatchesAPFloat) {
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> mantissa(0.5, 1.0);
  for (auto [type, semantics, minExp, maxExp, precision] :
       {std::tuple<mlir::Type, const llvm::fltSemantics *, int, int, int>{
            b.getBF16Type(), &llvm::APFloat::BFloat(), -140, 130, 8},
        {b.getF16Type(), &llvm::APFloat::IEEEhalf(), -28, 18, 11},
        {b.getType<mlir::Float8E4M3FNType>(), &llvm::APFloat::Float8E4M3FN(),
         -12, 11, 4},
        {b.getType<mlir::Float8E5M2Type>(), &llvm::APFloat::Float8E5M2(), -19,
         18, 3}}) {
    std::vector<double> values = {0.0, -0.0, HUGE_VAL, -HUGE_VAL};
    for (int e = minExp; e <= maxExp; ++e) {
      for (int i = 0; i < 200; ++i)
        values.push_back(std::ldexp(mantissa(random), e) *
                         (i % 2 ? -1.0 : 1.0));
      // A tie between two neighbours at this exponent, and just around it.
      double ulp = std::ldexp(1.0, e - precision);
      double tie = std::ldexp(0.5, e) + 1.5 * ulp;
      for (double v : {tie, std::nextafter(tie, 0.0),
                       std::nextafter(tie, HUGE_VAL), tie + ulp})
        values.push_back(v);
    }
    for (double value : values)
      for (bool saturate : {false, true}) {
        double expected = roundWithAPFloat(value, *semantics, saturate);
        double actual = round(value, type, saturate);
        if (std::isnan(expected)) {
          ASSERT_TRUE(std::isnan(actual)) << value;
          continue;
        }
        ASSERT_EQ(std::signbit(expected), std::signbit(actual)) << value;
        ASSERT_EQ(expected, actual)
            << "value " << value << " saturate " << saturate;
      }
  }
}

// Every bit pattern of every format the generated code stores decodes to
// APFloat's value and encodes back to itself (NaNs to the format's quiet
// NaN).
TEST(SharedRounding, EncodingsMatchAPFloat) {
  for (auto [format, semantics, bits] :
       {std::tuple<tandem_round::BinaryFormat, const llvm::fltSemantics *,
                   unsigned>{tandem_round::kBF16, &llvm::APFloat::BFloat(), 16},
        {tandem_round::kF16, &llvm::APFloat::IEEEhalf(), 16},
        {tandem_round::kF8E4M3FN, &llvm::APFloat::Float8E4M3FN(), 8},
        {tandem_round::kF8E5M2, &llvm::APFloat::Float8E5M2(), 8}}) {
    for (uint32_t pattern = 0; pattern < (1u << bits); ++pattern) {
      double expected = llvm::APFloat(*semantics, llvm::APInt(bits, pattern))
                            .convertToDouble();
      double value = tandem_round::decodeBinary(pattern, format);
      if (std::isnan(expected)) {
        ASSERT_TRUE(std::isnan(value)) << pattern;
        uint32_t quiet = tandem_round::encodeBinary(value, format);
        ASSERT_TRUE(std::isnan(tandem_round::decodeBinary(quiet, format)));
        continue;
      }
      ASSERT_EQ(value, expected) << pattern;
      ASSERT_EQ(std::signbit(value), std::signbit(expected)) << pattern;
      ASSERT_EQ(tandem_round::encodeBinary(value, format), pattern) << pattern;
    }
  }
  // The byte and half-word helpers are these encodings after rounding.
  EXPECT_EQ(tandem_round::toBF16(1.0), 0x3f80);
  EXPECT_EQ(tandem_round::fromBF16(0x3f80), 1.0);
  EXPECT_EQ(tandem_round::toF16(65520.0), 0x7c00); // Rounds up: infinity.
  EXPECT_EQ(tandem_round::toF8E4M3FN(1000.0, /*saturate=*/true), 0x7e); // 448
  EXPECT_EQ(tandem_round::fromF8E4M3FN(0x7e), 448.0);
  EXPECT_TRUE(std::isnan(
      tandem_round::fromF8E4M3FN(tandem_round::toF8E4M3FN(1000.0, false))));
  EXPECT_EQ(tandem_round::toF8E5M2(-1e9, /*saturate=*/false), 0xfc); // -inf
  EXPECT_EQ(tandem_round::fromF8E5M2(0x7b), 57344.0);
}

TEST_F(EvalRounding, Bf16RoundsToNearestEven) {
  mlir::Type bf16 = b.getBF16Type();
  // bf16 has 7 fraction bits: 1 + 2^-8 is a tie between 1 (even) and
  // 1 + 2^-7 (odd); 1 + 3·2^-8 is a tie between 1 + 2^-7 (odd) and 1 + 2^-6.
  EXPECT_EQ(round(1.0 + std::ldexp(1.0, -8), bf16), 1.0);
  EXPECT_EQ(round(1.0 + 3 * std::ldexp(1.0, -8), bf16),
            1.0 + std::ldexp(1.0, -6));
  EXPECT_EQ(round(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -20), bf16),
            1.0 + std::ldexp(1.0, -7));
  EXPECT_TRUE(std::isinf(round(1e39, bf16)));
}

TEST_F(EvalRounding, F16RoundsToNearestEvenAndOverflowsToInfinity) {
  mlir::Type f16 = b.getF16Type();
  EXPECT_EQ(round(1.0 + std::ldexp(1.0, -11), f16), 1.0);
  EXPECT_EQ(round(1.0 + 3 * std::ldexp(1.0, -11), f16),
            1.0 + std::ldexp(1.0, -9));
  EXPECT_EQ(round(65519.0, f16), 65504.0);
  EXPECT_EQ(round(65520.0, f16), std::numeric_limits<double>::infinity());
  EXPECT_EQ(round(-1e6, f16), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(round(NAN, f16)));
}

TEST_F(EvalRounding, F8E4M3FNSaturatesOrBecomesNaN) {
  mlir::Type e4m3 = mlir::Float8E4M3FNType::get(&context);
  EXPECT_EQ(round(448.0, e4m3), 448.0);
  EXPECT_EQ(round(460.0, e4m3), 448.0); // rounds down to the largest
  EXPECT_TRUE(std::isnan(round(1000.0, e4m3)));
  EXPECT_TRUE(std::isnan(round(INFINITY, e4m3)));
  EXPECT_EQ(round(1000.0, e4m3, /*saturate=*/true), 448.0);
  EXPECT_EQ(round(-1000.0, e4m3, /*saturate=*/true), -448.0);
  EXPECT_EQ(round(-INFINITY, e4m3, /*saturate=*/true), -448.0);
  EXPECT_TRUE(std::isnan(round(NAN, e4m3, /*saturate=*/true)));
  // 3 fraction bits: 1.0625 ties to 1.0, 1.1875 ties to 1.25.
  EXPECT_EQ(round(1.0625, e4m3), 1.0);
  EXPECT_EQ(round(1.1875, e4m3), 1.25);
}

TEST_F(EvalRounding, F8E5M2SaturatesOrBecomesInfinity) {
  mlir::Type e5m2 = mlir::Float8E5M2Type::get(&context);
  EXPECT_EQ(round(57344.0, e5m2), 57344.0);
  EXPECT_EQ(round(1e6, e5m2), std::numeric_limits<double>::infinity());
  EXPECT_EQ(round(-1e6, e5m2), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(round(1e6, e5m2, /*saturate=*/true), 57344.0);
  EXPECT_EQ(round(INFINITY, e5m2, /*saturate=*/true), 57344.0);
  EXPECT_TRUE(std::isnan(round(NAN, e5m2)));
}

TEST_F(EvalRounding, F32AndIntegers) {
  EXPECT_EQ(round(0.1, b.getF32Type()), static_cast<double>(0.1f));
  RoundingOptions wide;
  wide.keepF32AsF64 = true;
  EXPECT_EQ(roundToType(0.1, b.getF32Type(), wide), 0.1);
  EXPECT_EQ(round(0.1, b.getF64Type()), 0.1);
  EXPECT_EQ(round(2.5, b.getI32Type()), 2.0);
  EXPECT_EQ(round(3.5, b.getI32Type()), 4.0);
  EXPECT_EQ(round(1e10, b.getI32Type()), 2147483647.0);
  EXPECT_EQ(round(-1e10, b.getI32Type()), -2147483648.0);
}

TEST_F(EvalRounding, CastOpAppliesItsSaturateChoice) {
  Program p = parse(R"(
    func.func @f(%a: tensor<3xf32>) -> (tensor<3xf8E4M3FN>, tensor<3xf8E4M3FN>, tensor<3xbf16>) {
      %s = nn.cast %a {saturate = true} : tensor<3xf32> to tensor<3xf8E4M3FN>
      %n = nn.cast %a {saturate = false} : tensor<3xf32> to tensor<3xf8E4M3FN>
      %h = nn.cast %a : tensor<3xf32> to tensor<3xbf16>
      return %s, %n, %h : tensor<3xf8E4M3FN>, tensor<3xf8E4M3FN>, tensor<3xbf16>
    })");
  ASSERT_TRUE(p.module);
  auto r = evaluate(p, {tensorOf(p.context.get(), "tensor<3xf32>",
                                 {1000.0, -0.3, 1.0 + std::ldexp(1.0, -8)})});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].data[0], 448.0);
  EXPECT_TRUE(std::isnan(r[1].data[0]));
  EXPECT_EQ(r[0].data[1], round(-0.3, mlir::Float8E4M3FNType::get(&context)));
  EXPECT_EQ(r[2].data[2], 1.0);
}

TEST_F(EvalRounding, ResultsOfNarrowOpsAreRounded) {
  Program p = parse(R"(
    func.func @f(%a: tensor<1xbf16>, %b: tensor<1xbf16>) -> tensor<1xbf16> {
      %r = nn.add %a, %b : tensor<1xbf16>, tensor<1xbf16> -> tensor<1xbf16>
      return %r : tensor<1xbf16>
    })");
  ASSERT_TRUE(p.module);
  auto *ctx = p.context.get();
  auto r =
      evaluate(p, {tensorOf(ctx, "tensor<1xbf16>", {1.0}),
                   tensorOf(ctx, "tensor<1xbf16>", {std::ldexp(1.0, -8)})});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].data[0], 1.0); // the tie rounds to even
}

} // namespace
