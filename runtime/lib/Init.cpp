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

double tandem::rng::initValue(const InitSpec &spec, uint64_t seed,
                              uint64_t stream, uint64_t index) {
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
