//===- FiniteTest.cpp - NaN and Inf by each element type's encoding -------===//

#include "tandem/Runtime/Finite.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using namespace tandem::runtime;

namespace {

template <typename T>
int64_t first(ElementType type, const std::vector<T> &values) {
  return firstNonFinite(type, values.data(), values.size() * sizeof(T));
}

} // namespace

TEST(Finite, F32AndF64) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> f = {1.0f, -0.0f, std::numeric_limits<float>::max(),
                          std::numeric_limits<float>::denorm_min()};
  EXPECT_EQ(first(ElementType::F32, f), -1);
  f.push_back(-inf);
  f.push_back(std::nanf(""));
  EXPECT_EQ(first(ElementType::F32, f), 4);
  EXPECT_EQ(nonFiniteName(ElementType::F32, f.data(), 4), "-Inf");
  EXPECT_EQ(nonFiniteName(ElementType::F32, f.data(), 5), "NaN");
  std::vector<double> d = {std::numeric_limits<double>::max(), 0.0,
                           std::numeric_limits<double>::infinity()};
  EXPECT_EQ(first(ElementType::F64, d), 2);
  EXPECT_EQ(nonFiniteName(ElementType::F64, d.data(), 2), "+Inf");
}

TEST(Finite, HalfTypes) {
  // bf16: 0x7f7f is its largest finite value, 0x7f80 +Inf, 0xffc0 a NaN.
  std::vector<uint16_t> bf16 = {0x3f80, 0x7f7f, 0xff80, 0xffc0};
  EXPECT_EQ(first(ElementType::BF16, bf16), 2);
  EXPECT_EQ(nonFiniteName(ElementType::BF16, bf16.data(), 2), "-Inf");
  EXPECT_EQ(nonFiniteName(ElementType::BF16, bf16.data(), 3), "NaN");
  // f16: 0x7bff is 65504, 0x7c00 +Inf, 0x7e00 a NaN.
  std::vector<uint16_t> f16 = {0x3c00, 0x7bff, 0x7e00};
  EXPECT_EQ(first(ElementType::F16, f16), 2);
  EXPECT_EQ(nonFiniteName(ElementType::F16, f16.data(), 2), "NaN");
  f16.pop_back();
  EXPECT_EQ(first(ElementType::F16, f16), -1);
}

TEST(Finite, Fp8) {
  // e4m3fn: no infinity; 0x7e is 448 (finite), 0x7f and 0xff NaN.
  std::vector<uint8_t> e4m3 = {0x7e, 0xfe, 0x78, 0xff};
  EXPECT_EQ(first(ElementType::F8E4M3FN, e4m3), 3);
  EXPECT_EQ(nonFiniteName(ElementType::F8E4M3FN, e4m3.data(), 3), "NaN");
  // e5m2: 0x7b is 57344, 0x7c +Inf, 0x7d a NaN.
  std::vector<uint8_t> e5m2 = {0x7b, 0x7c, 0x7d};
  EXPECT_EQ(first(ElementType::F8E5M2, e5m2), 1);
  EXPECT_EQ(nonFiniteName(ElementType::F8E5M2, e5m2.data(), 1), "+Inf");
  EXPECT_EQ(nonFiniteName(ElementType::F8E5M2, e5m2.data(), 2), "NaN");
}

TEST(Finite, IntegersAreAlwaysFinite) {
  std::vector<int32_t> ints = {-1, 0x7f800000, 0x7fc00000};
  EXPECT_EQ(first(ElementType::I32, ints), -1);
  std::vector<uint8_t> bytes = {0xff, 0x7f};
  EXPECT_EQ(first(ElementType::I8, bytes), -1);
}
