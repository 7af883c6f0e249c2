//===- Rounding.h - round-to-nearest-even into narrow formats ---*- C++ -*-===//
//
// bf16, f16, f8E4M3FN and f8E5M2: rounding a double to nearest, ties to
// even, with each format's overflow (infinity, or NaN for f8E4M3FN, which
// has none) or saturation to its largest finite value, and the formats' bit
// encodings. The one definition the evaluator (lib/Eval/Rounding.cpp) and
// the generated code share: the CPU emitter pastes this file into every
// translation unit (its prelude), so both sides round to the same bits by
// construction, and every later emitter includes it the same way.
//
// Plain double arithmetic (scaling by powers of two is exact; nearbyint
// rounds ties to even in the default rounding mode): APFloat's generic
// conversion made low-precision evaluation several times slower, and
// generated code cannot use it. RoundingTest checks every format against
// APFloat. Header-only and free of project dependencies on purpose.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_SUPPORT_ROUNDING_H
#define TANDEM_SUPPORT_ROUNDING_H

#include <cmath>
#include <cstdint>
#include <cstring>

// The CUDA emitter pastes this file (and Codec.h) into its translation
// units too, whose kernels round on the device (lib/Target/CUDA/
// PreludeSource.h.in): there the functions are __host__ __device__ and the
// formats __device__ constants; everywhere else both qualifiers are empty.
#ifndef TANDEM_HD
#ifdef __CUDACC__
#define TANDEM_HD __host__ __device__
#define TANDEM_DEVICE_CONSTANT __device__
#else
#define TANDEM_HD
#define TANDEM_DEVICE_CONSTANT
#endif
#endif

namespace tandem_round {

/// A binary floating-point format: `precision` significant bits (the
/// implicit one included), smallest normal 2^minExponent, largest finite
/// value, `exponentBits` in its encoding, and whether it has infinities
/// (f8E4M3FN has none: its all-ones pattern is NaN, and the exponent field
/// 1111 holds finite values).
struct BinaryFormat {
  int precision;
  int minExponent;
  double largest;
  int exponentBits;
  bool hasInfinity;
};

TANDEM_DEVICE_CONSTANT constexpr BinaryFormat kBF16 = {8, -126, 0x1.fep127, 8,
                                                       true};
TANDEM_DEVICE_CONSTANT constexpr BinaryFormat kF16 = {11, -14, 65504.0, 5,
                                                      true};
TANDEM_DEVICE_CONSTANT constexpr BinaryFormat kF8E4M3FN = {4, -6, 448.0, 4,
                                                           false};
TANDEM_DEVICE_CONSTANT constexpr BinaryFormat kF8E5M2 = {3, -14, 57344.0, 5,
                                                         true};

/// `v` rounded to nearest, ties to even, into `f`, as the double it
/// represents. Beyond the largest finite value: infinity (NaN for a format
/// without one), or with `saturate` the largest finite value of v's sign
/// (infinities too; NaN stays NaN).
TANDEM_HD inline double roundBinary(double v, const BinaryFormat &f,
                                    bool saturate) {
  if (std::isinf(v) && saturate)
    return std::copysign(f.largest, v);
  if (std::isinf(v))
    return f.hasInfinity ? v : NAN;
  if (std::isnan(v) || v == 0.0)
    return v;
  int e;
  std::frexp(v, &e); // v = m 2^e, 0.5 <= |m| < 1
  // The unit in the last place: 2^(e - precision) for normals, the
  // subnormal step below the smallest normal.
  int ulp = (e - 1 > f.minExponent ? e - 1 : f.minExponent) - (f.precision - 1);
  double r = std::ldexp(std::nearbyint(std::ldexp(v, -ulp)), ulp);
  if (std::fabs(r) > f.largest)
    return saturate ? std::copysign(f.largest, v)
                    : (f.hasInfinity ? std::copysign(HUGE_VAL, v) : NAN);
  return r;
}

/// The encoding of `r`, a value of `f` (roundBinary's result), for the
/// formats up to 16 bits: sign, exponent field, fraction.
TANDEM_HD inline uint32_t encodeBinary(double r, const BinaryFormat &f) {
  int fractionBits = f.precision - 1;
  uint32_t sign = std::signbit(r) ? 1u << (f.exponentBits + fractionBits) : 0;
  uint32_t allOnes = (1u << f.exponentBits) - 1;
  double a = std::fabs(r);
  if (std::isnan(r)) // The quiet NaN; f8E4M3FN's only NaN is all ones.
    return sign | (allOnes << fractionBits) |
           (f.hasInfinity ? 1u << (fractionBits - 1)
                          : (1u << fractionBits) - 1);
  if (std::isinf(r))
    return sign | (allOnes << fractionBits);
  if (a < std::ldexp(1.0, f.minExponent)) // Subnormal or zero.
    return sign | (uint32_t)std::ldexp(a, fractionBits - f.minExponent);
  int e;
  double m = std::frexp(a, &e); // a = m 2^e, m in [0.5, 1)
  int bias = 1 - f.minExponent;
  return sign | ((uint32_t)(e - 1 + bias) << fractionBits) |
         (uint32_t)std::ldexp(m * 2.0 - 1.0, fractionBits);
}

/// The value of encoding `bits` of `f`.
TANDEM_HD inline double decodeBinary(uint32_t bits, const BinaryFormat &f) {
  int fractionBits = f.precision - 1;
  uint32_t allOnes = (1u << f.exponentBits) - 1;
  double s = (bits >> (f.exponentBits + fractionBits)) & 1 ? -1.0 : 1.0;
  uint32_t e = (bits >> fractionBits) & allOnes;
  uint32_t m = bits & ((1u << fractionBits) - 1);
  if (f.hasInfinity && e == allOnes)
    return m ? (double)NAN : s * HUGE_VAL;
  if (!f.hasInfinity && e == allOnes && m == (1u << fractionBits) - 1)
    return NAN;
  if (e == 0)
    return s * std::ldexp((double)m, f.minExponent - fractionBits);
  int bias = 1 - f.minExponent;
  return s * std::ldexp((double)((1u << fractionBits) + m),
                        (int)e - bias - fractionBits);
}

/// bf16 is the upper half of an f32: rounding to bf16 gives a float whose
/// low 16 bits are zero.
TANDEM_HD inline uint16_t toBF16(double v) {
  float f = (float)roundBinary(v, kBF16, false);
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return (uint16_t)(u >> 16);
}
TANDEM_HD inline double fromBF16(uint16_t bits) {
  uint32_t u = (uint32_t)bits << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
TANDEM_HD inline uint16_t toF16(double v) {
  return (uint16_t)encodeBinary(roundBinary(v, kF16, false), kF16);
}
TANDEM_HD inline double fromF16(uint16_t bits) {
  return decodeBinary(bits, kF16);
}
TANDEM_HD inline uint8_t toF8E4M3FN(double v, bool saturate) {
  return (uint8_t)encodeBinary(roundBinary(v, kF8E4M3FN, saturate), kF8E4M3FN);
}
TANDEM_HD inline double fromF8E4M3FN(uint8_t bits) {
  return decodeBinary(bits, kF8E4M3FN);
}
TANDEM_HD inline uint8_t toF8E5M2(double v, bool saturate) {
  return (uint8_t)encodeBinary(roundBinary(v, kF8E5M2, saturate), kF8E5M2);
}
TANDEM_HD inline double fromF8E5M2(uint8_t bits) {
  return decodeBinary(bits, kF8E5M2);
}

} // namespace tandem_round

#endif // TANDEM_SUPPORT_ROUNDING_H
