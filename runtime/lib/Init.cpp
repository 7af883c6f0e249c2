//===- Init.cpp - parameter initialization from specs ---------------------===//

#include "tandem/Runtime/Init.h"
#include "tandem/Runtime/Philox.h"

#include <cmath>
#include <vector>

using namespace tandem::rng;

uint64_t tandem::rng::parameterStream(std::string_view name) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : name) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

bool tandem::rng::setPadding(InitSpec &spec, const std::vector<int64_t> &stored,
                             const std::vector<int64_t> &logical) {
  if (stored.size() != logical.size())
    return false;
  size_t padded = stored.size();
  for (size_t d = 0; d < stored.size(); ++d) {
    if (logical[d] < 1 || logical[d] > stored[d])
      return false;
    if (logical[d] == stored[d])
      continue;
    if (padded != stored.size())
      return false;
    padded = d;
  }
  InitSpec result = spec;
  result.padInner = 1;
  result.padKept = result.padStored = 0;
  if (padded != stored.size()) {
    for (size_t d = padded + 1; d < stored.size(); ++d)
      result.padInner *= static_cast<uint64_t>(stored[d]);
    result.padKept = static_cast<uint64_t>(logical[padded]);
    result.padStored = static_cast<uint64_t>(stored[padded]);
  }
  spec = result;
  return true;
}

bool tandem::rng::setMatrix(InitSpec &spec, const std::vector<int64_t> &shape) {
  if (spec.kind != InitKind::Orthonormal)
    return true;
  if (shape.size() < 2 || shape.back() < 1)
    return false;
  uint64_t rows = 1;
  for (size_t d = 0; d + 1 < shape.size(); ++d)
    if (shape[d] < 0 ||
        __builtin_mul_overflow(rows, static_cast<uint64_t>(shape[d]), &rows))
      return false;
  uint64_t cols = static_cast<uint64_t>(shape.back());
  if (rows < cols)
    return false;
  spec.rows = rows;
  spec.cols = cols;
  return true;
}

/// One standard normal draw: element `index` of stream `stream`.
static double standardNormal(uint64_t seed, uint64_t stream, uint64_t index) {
  InitSpec normal;
  normal.kind = InitKind::Normal;
  normal.a = 1.0;
  return initValue(normal, seed, stream, index);
}

/// The Q factor of the rows x cols standard normal matrix the stream draws
/// (row-major): classical Gram-Schmidt, each column orthogonalized twice
/// against the ones before it ("twice is enough": the columns are
/// orthonormal to double rounding), then normalized. Column j of Q spans
/// the same space as the first j + 1 draws, and R's diagonal is positive,
/// so Q is unique: plain loops in a fixed order give the same bits on
/// every machine that rounds doubles as IEEE 754 says.
static std::vector<double> orthonormalMatrix(const InitSpec &spec,
                                             uint64_t seed, uint64_t stream) {
  uint64_t rows = spec.rows, cols = spec.cols;
  std::vector<double> q(rows * cols);
  for (uint64_t i = 0; i < rows * cols; ++i)
    q[i] = standardNormal(seed, stream, i);
  std::vector<double> dots(cols);
  for (uint64_t j = 0; j < cols; ++j) {
    for (int pass = 0; pass < 2; ++pass) {
      for (uint64_t p = 0; p < j; ++p) {
        double dot = 0.0;
        for (uint64_t i = 0; i < rows; ++i)
          dot += q[i * cols + p] * q[i * cols + j];
        dots[p] = dot;
      }
      for (uint64_t p = 0; p < j; ++p)
        for (uint64_t i = 0; i < rows; ++i)
          q[i * cols + j] -= dots[p] * q[i * cols + p];
    }
    double norm = 0.0;
    for (uint64_t i = 0; i < rows; ++i)
      norm += q[i * cols + j] * q[i * cols + j];
    // A Gaussian column lies in the span of the ones before it with
    // probability zero; its norm after projection is far from zero.
    norm = std::sqrt(norm);
    for (uint64_t i = 0; i < rows; ++i)
      q[i * cols + j] /= norm;
  }
  return q;
}

double tandem::rng::initValue(const InitSpec &spec, uint64_t seed,
                              uint64_t stream, uint64_t index) {
  if (spec.hasSeed)
    seed = spec.seed;
  if (spec.padStored) {
    // The drawn tensor's element at this index's position, or padding.
    uint64_t slab = spec.padStored * spec.padInner;
    uint64_t outer = index / slab, rest = index % slab;
    uint64_t along = rest / spec.padInner, inner = rest % spec.padInner;
    if (along >= spec.padKept)
      return 0.0;
    index = (outer * spec.padKept + along) * spec.padInner + inner;
  }
  switch (spec.kind) {
  case InitKind::Zeros:
    return 0.0;
  case InitKind::Ones:
    return 1.0;
  case InitKind::Orthonormal:
    // One element costs the whole matrix; initFill computes it once.
    return index < spec.rows * spec.cols
               ? orthonormalMatrix(spec, seed, stream)[index]
               : 0.0;
  case InitKind::Normal:
  case InitKind::Uniform:
    break;
  }
  PhiloxCounter counter = {
      static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32),
      static_cast<uint32_t>(stream), static_cast<uint32_t>(stream >> 32)};
  PhiloxKey key = {static_cast<uint32_t>(seed),
                   static_cast<uint32_t>(seed >> 32)};
  PhiloxCounter bits = philox4x32(counter, key);
  if (spec.kind == InitKind::Uniform) {
    double u = uniformFromBits(bits[0]);
    return spec.a + (spec.b - spec.a) * u;
  }
  // Box-Muller on two uniforms in (0, 1]; the +1 keeps log away from zero.
  double u1 = (static_cast<double>(bits[0] >> 8) + 1.0) / 16777216.0;
  double u2 = static_cast<double>(bits[1] >> 8) / 16777216.0;
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  return spec.a * std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
}

template <typename T>
static void fill(const InitSpec &spec, uint64_t seed, uint64_t stream,
                 uint64_t first, T *out, size_t count) {
  if (spec.kind == InitKind::Orthonormal) {
    std::vector<double> q =
        orthonormalMatrix(spec, spec.hasSeed ? spec.seed : seed, stream);
    for (size_t i = 0; i < count; ++i)
      out[i] = first + i < q.size() ? static_cast<T>(q[first + i]) : T(0);
    return;
  }
  for (size_t i = 0; i < count; ++i)
    out[i] = static_cast<T>(initValue(spec, seed, stream, first + i));
}

void tandem::rng::initFill(const InitSpec &spec, uint64_t seed, uint64_t stream,
                           uint64_t first, float *out, size_t count) {
  fill(spec, seed, stream, first, out, count);
}

void tandem::rng::initFill(const InitSpec &spec, uint64_t seed, uint64_t stream,
                           uint64_t first, double *out, size_t count) {
  fill(spec, seed, stream, first, out, count);
}
