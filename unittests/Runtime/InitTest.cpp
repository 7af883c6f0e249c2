//===- InitTest.cpp - parameter initialization ----------------------------===//

#include "tandem/Runtime/Init.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace tandem::rng;

namespace {

struct Moments {
  double mean = 0, stddev = 0, min = 1e300, max = -1e300;
};

Moments moments(const std::vector<float> &v) {
  Moments m;
  for (float x : v) {
    m.mean += x;
    m.min = std::min<double>(m.min, x);
    m.max = std::max<double>(m.max, x);
  }
  m.mean /= v.size();
  for (float x : v)
    m.stddev += (x - m.mean) * (x - m.mean);
  m.stddev = std::sqrt(m.stddev / v.size());
  return m;
}

std::vector<float> draw(InitSpec spec, std::string_view name, size_t n,
                        uint64_t seed = 1234) {
  std::vector<float> v(n);
  initFill(spec, seed, parameterStream(name), 0, v.data(), n);
  return v;
}

} // namespace

TEST(Init, ConstantKinds) {
  for (float x : draw({InitKind::Zeros}, "b", 16))
    EXPECT_EQ(x, 0.0f);
  for (float x : draw({InitKind::Ones}, "ln.weight", 16))
    EXPECT_EQ(x, 1.0f);
}

TEST(Init, NormalMoments) {
  const size_t n = 200000;
  Moments m = moments(draw({InitKind::Normal, 0.02}, "wte", n));
  // Standard error of the mean is 0.02/sqrt(n) ~ 4.5e-5; allow 5 sigma.
  EXPECT_NEAR(m.mean, 0.0, 5 * 0.02 / std::sqrt(double(n)));
  EXPECT_NEAR(m.stddev, 0.02, 0.02 * 0.01);
  // Box-Muller on 24-bit uniforms reaches about 5.9 sigma at most.
  EXPECT_GT(m.max, 0.02 * 3.5);
  EXPECT_LT(m.max, 0.02 * 6.0);
}

TEST(Init, UniformRangeAndMoments) {
  const size_t n = 200000;
  Moments m = moments(draw({InitKind::Uniform, -0.5, 1.5}, "w", n));
  EXPECT_GE(m.min, -0.5);
  EXPECT_LT(m.max, 1.5);
  EXPECT_NEAR(m.mean, 0.5, 0.01);
  EXPECT_NEAR(m.stddev, 2.0 / std::sqrt(12.0), 0.01);
}

TEST(Init, PureFunctionOfSeedNameAndIndex) {
  InitSpec spec{InitKind::Normal, 1.0};
  std::vector<float> whole = draw(spec, "h.0.attn.c_attn.weight", 1000);
  // A slice starting in the middle equals the same slice of the whole.
  std::vector<float> slice(100);
  initFill(spec, 1234, parameterStream("h.0.attn.c_attn.weight"), 450,
           slice.data(), slice.size());
  for (size_t i = 0; i < slice.size(); ++i)
    EXPECT_EQ(slice[i], whole[450 + i]);
  EXPECT_EQ(whole, draw(spec, "h.0.attn.c_attn.weight", 1000));
  EXPECT_NE(whole, draw(spec, "h.1.attn.c_attn.weight", 1000));
  EXPECT_NE(whole, draw(spec, "h.0.attn.c_attn.weight", 1000, /*seed=*/1235));
}

TEST(Init, DoubleAndFloatAgree) {
  InitSpec spec{InitKind::Normal, 0.02};
  std::vector<double> d(64);
  std::vector<float> f(64);
  uint64_t stream = parameterStream("wpe");
  initFill(spec, 7, stream, 0, d.data(), d.size());
  initFill(spec, 7, stream, 0, f.data(), f.size());
  for (size_t i = 0; i < d.size(); ++i)
    EXPECT_EQ(f[i], static_cast<float>(d[i]));
}

TEST(Init, StreamIsFnv1a) {
  // FNV-1a 64 of the empty string and of "a" (published test values).
  EXPECT_EQ(parameterStream(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(parameterStream("a"), 0xaf63dc4c8601ec8cull);
}

// A padded parameter holds the drawn tensor at the same multi-indices, and
// zeros (even for `ones`) in the padding: rows, columns, or a middle
// dimension.
TEST(Init, PaddingKeepsTheDrawnValuesInPlace) {
  struct Case {
    std::vector<int64_t> stored, logical;
  };
  for (const Case &c : {Case{{8, 3}, {5, 3}}, Case{{3, 8}, {3, 5}},
                        Case{{2, 6, 3}, {2, 4, 3}}, Case{{4, 4}, {4, 4}}}) {
    for (InitKind kind : {InitKind::Normal, InitKind::Ones}) {
      InitSpec plain{kind, 0.5, 0.0};
      InitSpec padded = plain;
      ASSERT_TRUE(setPadding(padded, c.stored, c.logical));
      size_t storedCount = 1, logicalCount = 1;
      for (size_t d = 0; d < c.stored.size(); ++d) {
        storedCount *= c.stored[d];
        logicalCount *= c.logical[d];
      }
      std::vector<float> drawn = draw(plain, "wte", logicalCount);
      std::vector<float> stored = draw(padded, "wte", storedCount);
      size_t next = 0;
      for (size_t i = 0; i < storedCount; ++i) {
        // The multi-index of element i, inside the logical shape or not.
        size_t rest = i;
        bool inside = true;
        for (size_t d = c.stored.size(); d-- > 0;) {
          inside =
              inside && static_cast<int64_t>(rest % c.stored[d]) < c.logical[d];
          rest /= c.stored[d];
        }
        if (inside)
          EXPECT_EQ(stored[i], drawn[next++]) << "element " << i;
        else
          EXPECT_EQ(stored[i], 0.0f) << "element " << i;
      }
      EXPECT_EQ(next, logicalCount);
    }
  }
}

TEST(Init, PaddingNeedsOneSmallerDimension) {
  InitSpec spec{InitKind::Normal, 0.5, 0.0};
  EXPECT_FALSE(setPadding(spec, {8, 3}, {5}));
  EXPECT_FALSE(setPadding(spec, {8, 3}, {9, 3}));
  EXPECT_FALSE(setPadding(spec, {8, 3}, {0, 3}));
  EXPECT_FALSE(setPadding(spec, {8, 3}, {5, 2}));
  EXPECT_EQ(spec.padStored, 0u);
  EXPECT_TRUE(setPadding(spec, {8, 3}, {5, 3}));
  EXPECT_EQ(spec.padStored, 8u);
  EXPECT_EQ(spec.padKept, 5u);
  EXPECT_EQ(spec.padInner, 3u);
}

TEST(Init, OrthonormalColumns) {
  InitSpec spec{InitKind::Orthonormal};
  ASSERT_TRUE(setMatrix(spec, {4, 16, 8})); // rows 64, columns 8
  EXPECT_EQ(spec.rows, 64u);
  EXPECT_EQ(spec.cols, 8u);
  std::vector<double> q(64 * 8);
  initFill(spec, 1234, parameterStream("subspace.basis"), 0, q.data(),
           q.size());
  std::vector<float> f = draw(spec, "subspace.basis", q.size());
  // QᵀQ = I: in double to the rounding of Gram-Schmidt run twice; from the
  // f32 values, each rounded by at most 2^-24 relative, a dot product of
  // two unit columns moves by at most 2·2^-24 (Cauchy-Schwarz) plus the
  // double sum's own rounding.
  const double f32Bound = 3.0 * std::ldexp(1.0, -24);
  for (int a = 0; a < 8; ++a)
    for (int b = 0; b < 8; ++b) {
      double dot = 0, dotF = 0;
      for (int i = 0; i < 64; ++i) {
        dot += q[i * 8 + a] * q[i * 8 + b];
        dotF += double(f[i * 8 + a]) * double(f[i * 8 + b]);
      }
      EXPECT_NEAR(dot, a == b ? 1.0 : 0.0, 1e-13) << a << "," << b;
      EXPECT_NEAR(dotF, a == b ? 1.0 : 0.0, f32Bound) << a << "," << b;
    }
  // Column 0 is the first drawn column, normalized (R's diagonal is
  // positive): the Q of the seeded Gaussian, not some other basis.
  InitSpec normal{InitKind::Normal, 1.0, 0.0};
  double norm = 0;
  for (int i = 0; i < 64; ++i) {
    double g =
        initValue(normal, 1234, parameterStream("subspace.basis"), i * 8);
    norm += g * g;
  }
  norm = std::sqrt(norm);
  for (int i = 0; i < 64; ++i)
    EXPECT_NEAR(
        q[i * 8],
        initValue(normal, 1234, parameterStream("subspace.basis"), i * 8) /
            norm,
        1e-14);
  // initValue agrees with initFill element by element.
  for (uint64_t i : {0u, 9u, 511u})
    EXPECT_EQ(initValue(spec, 1234, parameterStream("subspace.basis"), i),
              q[i]);
}

TEST(Init, OrthonormalNeedsATallMatrix) {
  InitSpec spec{InitKind::Orthonormal};
  EXPECT_FALSE(setMatrix(spec, {4, 8}));
  EXPECT_FALSE(setMatrix(spec, {8}));
  EXPECT_FALSE(setMatrix(spec, {8, 0}));
  EXPECT_EQ(spec.rows, 0u);
  EXPECT_TRUE(setMatrix(spec, {8, 8}));
  InitSpec normal{InitKind::Normal, 1.0, 0.0};
  EXPECT_TRUE(setMatrix(normal, {1, 8})); // nothing to set
  EXPECT_EQ(normal.rows, 0u);
}

TEST(Init, OwnSeedReplacesTheRunSeed) {
  for (InitKind kind : {InitKind::Normal, InitKind::Orthonormal}) {
    InitSpec spec{kind, 0.02, 0.0};
    ASSERT_TRUE(setMatrix(spec, {16, 4}));
    EXPECT_NE(draw(spec, "t", 64, 1), draw(spec, "t", 64, 2));
    spec.hasSeed = true;
    spec.seed = 7;
    EXPECT_EQ(draw(spec, "t", 64, 1), draw(spec, "t", 64, 2));
    InitSpec other = spec;
    other.seed = 8;
    EXPECT_NE(draw(spec, "t", 64, 1), draw(other, "t", 64, 1));
  }
}
