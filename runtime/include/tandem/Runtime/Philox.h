//===- Philox.h - counter-based random numbers ------------------*- C++ -*-===//
//
// Philox4x32-10 (Salmon et al., "Parallel Random Numbers: As Easy as 1, 2,
// 3", SC'11). A counter-based generator: the i-th random word is a pure
// function of (key, i), so any process can produce any element of any
// parameter without generating the ones before it. The compiler's reference
// evaluator and the runtime both initialize parameters through this file,
// which is what makes their parameters bitwise equal. No MLIR dependency.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_PHILOX_H
#define TANDEM_RUNTIME_PHILOX_H

#include <array>
#include <cstdint>

namespace tandem::rng {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

/// Ten rounds of Philox4x32 on `counter` with `key`.
PhiloxCounter philox4x32(PhiloxCounter counter, PhiloxKey key);

/// A float in [0, 1) from the top 24 bits of `bits` (every value is exactly
/// representable in f32, so the mapping is the same on every platform).
inline float uniformFromBits(uint32_t bits) {
  return static_cast<float>(bits >> 8) * (1.0f / 16777216.0f);
}

} // namespace tandem::rng

#endif // TANDEM_RUNTIME_PHILOX_H
