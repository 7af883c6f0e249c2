//===- TranscendentalTest.cpp - the shared exp and tanh -------------------===//
//
// tandem_math::exp and tanh replace the C library's in the evaluator and
// the generated code. They must stay within a few double ulps of the C
// library everywhere (so float results round the same almost always) and
// get the edges right: overflow, underflow, signed zero, infinities, NaN.
//
//===----------------------------------------------------------------------===//

#include "tandem/Support/Transcendental.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <random>

namespace {

double relativeError(double got, double want) {
  if (got == want)
    return 0.0;
  return std::fabs(got - want) / std::fabs(want);
}

/// How far `ours` strays from the C library's `theirs` over a million
/// arguments, half from [wideLo, wideHi] and half from [narrowLo, narrowHi]:
/// the largest relative error (results below DBL_MIN, which keep fewer
/// bits, are checked absolutely instead) and how many float roundings of
/// the two differ.
struct Sweep {
  double worst = 0.0;
  long floatMismatches = 0;
};
Sweep sweep(double (*ours)(double), double (*theirs)(double), unsigned seed,
            double wideLo, double wideHi, double narrowLo, double narrowHi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> wide(wideLo, wideHi),
      narrow(narrowLo, narrowHi);
  Sweep result;
  for (long i = 0; i < 1000000; ++i) {
    double x = i % 2 ? wide(rng) : narrow(rng);
    double got = ours(x), want = theirs(x);
    if (std::fabs(want) < DBL_MIN && want != 0.0)
      EXPECT_LE(std::fabs(got - want), 2 * 4.9406564584124654e-324) << x;
    else
      result.worst = std::max(result.worst, relativeError(got, want));
    result.floatMismatches += (float)got != (float)want;
  }
  return result;
}

double libcExp(double x) { return std::exp(x); }
double libcTanh(double x) { return std::tanh(x); }

TEST(Transcendental, ExpWithinTwoUlpsOfTheCLibrary) {
  Sweep s = sweep(tandem_math::exp, libcExp, 11, -740.0, 709.0, -2.0, 2.0);
  EXPECT_LE(s.worst, 2 * DBL_EPSILON);
  // A float result differs only when the double lies within a few ulps of
  // a float rounding boundary: essentially never.
  EXPECT_LE(s.floatMismatches, 2);
}

TEST(Transcendental, TanhWithinFourUlpsOfTheCLibrary) {
  Sweep s = sweep(tandem_math::tanh, libcTanh, 12, -25.0, 25.0, -0.35, 0.35);
  EXPECT_LE(s.worst, 4 * DBL_EPSILON);
  EXPECT_LE(s.floatMismatches, 2);
  // Tiny arguments: tanh(x) = x to double precision.
  for (double x : {1e-300, -1e-300, 1e-20, -3e-9, 4.9406564584124654e-324})
    EXPECT_EQ(tandem_math::tanh(x), std::tanh(x)) << x;
}

TEST(Transcendental, ExpEdges) {
  EXPECT_EQ(tandem_math::exp(0.0), 1.0);
  EXPECT_EQ(tandem_math::exp(-0.0), 1.0);
  EXPECT_EQ(tandem_math::exp(709.78), std::exp(709.78));
  EXPECT_TRUE(std::isinf(tandem_math::exp(709.79)));
  EXPECT_TRUE(std::isinf(tandem_math::exp(1e308)));
  EXPECT_TRUE(std::isinf(tandem_math::exp(INFINITY)));
  EXPECT_EQ(tandem_math::exp(-745.1), std::exp(-745.1)); // The least subnormal.
  EXPECT_EQ(tandem_math::exp(-745.2), 0.0);
  EXPECT_EQ(tandem_math::exp(-INFINITY), 0.0);
  EXPECT_TRUE(std::isnan(tandem_math::exp(NAN)));
}

TEST(Transcendental, TanhEdges) {
  EXPECT_EQ(tandem_math::tanh(0.0), 0.0);
  EXPECT_TRUE(std::signbit(tandem_math::tanh(-0.0)));
  EXPECT_EQ(tandem_math::tanh(INFINITY), 1.0);
  EXPECT_EQ(tandem_math::tanh(-INFINITY), -1.0);
  EXPECT_EQ(tandem_math::tanh(1e308), 1.0);
  EXPECT_EQ(tandem_math::tanh(-20.0), -1.0);
  EXPECT_TRUE(std::isnan(tandem_math::tanh(NAN)));
  // Both sides of the switch between the two formulas.
  for (double x : {0.29999999999999999, 0.3, 0.30000000000000004, -0.3})
    EXPECT_LE(relativeError(tandem_math::tanh(x), std::tanh(x)),
              4 * DBL_EPSILON)
        << x;
}

} // namespace
