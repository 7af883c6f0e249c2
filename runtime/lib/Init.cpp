//===- Init.cpp - parameter initialization from specs ---------------------===//

#include "tandem/Runtime/Init.h"
#include "tandem/Runtime/Philox.h"

#include <cmath>

using namespace tandem::rng;

uint64_t tandem::rng::parameterStream(std::string_view name) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : name) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

double tandem::rng::initValue(const InitSpec &spec, uint64_t seed,
                              uint64_t stream, uint64_t index) {
  switch (spec.kind) {
  case InitKind::Zeros:
    return 0.0;
  case InitKind::Ones:
    return 1.0;
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
