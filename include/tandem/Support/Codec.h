//===- Codec.h - blockwise quantization arithmetic --------------*- C++ -*-===//
//
// nn.quantize and nn.dequantize (include/tandem/Dialect/NN/IR/
// NNCodecOps.td): one f32 scale per block, codes in i8 (symmetric) or an f8
// format. The one definition the evaluator (lib/Eval/CodecKernels.cpp) and
// the generated code share: the CPU emitter pastes this file into its
// prelude after tandem/Support/Rounding.h, so both encode to the same bits
// by construction. Header-only, free of project dependencies, and written
// in plain double arithmetic: x / s and q * s are computed in double from
// the f32 scale, and the division's single rounding is far below a code's.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_SUPPORT_CODEC_H
#define TANDEM_SUPPORT_CODEC_H

// Generated code has Rounding.h pasted in above and no include path.
#ifndef TANDEM_SUPPORT_ROUNDING_H
#include "tandem/Support/Rounding.h"
#endif

#include <cfloat>
#include <cmath>
#include <cstdint>

// The CUDA emitter pastes this file into its translation units too, whose
// kernels encode on the device: TANDEM_HD (Rounding.h) is __host__
// __device__ there and empty everywhere else.

namespace tandem_codec {

enum Code : int { kInt8 = 0, kF8E4M3FN = 1, kF8E5M2 = 2 };

/// Blocks of `block` elements along a row of `width` (the last one may be
/// short).
TANDEM_HD inline int64_t blockCount(int64_t width, int64_t block) {
  return width / block + (width % block != 0);
}

/// The f8 format of an f8 code.
TANDEM_HD inline const tandem_round::BinaryFormat &formatOf(Code code) {
  return code == kF8E4M3FN ? tandem_round::kF8E4M3FN : tandem_round::kF8E5M2;
}

/// The largest code's magnitude.
TANDEM_HD inline double largestCode(Code code) {
  return code == kInt8 ? 127.0 : formatOf(code).largest;
}

/// The running largest magnitude of a block after element `x` (start from
/// 0): a NaN wins over every number, where fmax would drop it.
TANDEM_HD inline double foldMagnitude(double amax, double x) {
  double a = std::fabs(x);
  return std::isnan(a) || a > amax ? a : amax;
}

/// The scale of a block whose largest magnitude is `amax` (NaN or infinity
/// when the block holds one): 0 for a block of zeros, NaN for a block with
/// a non-finite element or one whose amax / L overflows f32, else amax / L
/// rounded up to f32 (so at least the smallest positive f32).
TANDEM_HD inline float blockScale(double amax, Code code) {
  if (amax == 0.0)
    return 0.0f;
  if (!std::isfinite(amax))
    return NAN;
  double largest = largestCode(code);
  float s = (float)(amax / largest);
  // Rounded up, so that no element's x / s exceeds the largest code (s * L
  // is exact in double: at most 24 + 7 significant bits).
  if ((double)s * largest < amax)
    s = std::nextafter(s, INFINITY);
  return std::isinf(s) ? NAN : s;
}

/// The code of `x` under scale `s` (a blockScale result), as the double it
/// represents: an integer in [-127, 127] for i8, a value of the f8 format
/// otherwise. Zero when the scale is 0 or NaN (the decoder's q * s then
/// gives 0 or NaN).
TANDEM_HD inline double encode(double x, float s, Code code) {
  if (!(s > 0.0f))
    return 0.0;
  double v = x / (double)s;
  if (code == kInt8) {
    // An i8 code has no -0: + 0.0 makes nearbyint's -0 (of a small
    // negative value) the +0 its byte decodes to.
    double q = std::nearbyint(v) + 0.0;
    return q > 127.0 ? 127.0 : (q < -127.0 ? -127.0 : q);
  }
  return tandem_round::roundBinary(v, formatOf(code),
                                   /*saturate=*/true);
}

/// The value a code stands for, exactly (a code has at most 8 significant
/// bits and the scale 24): the caller rounds it once to its result type.
TANDEM_HD inline double decode(double q, float s) { return q * (double)s; }

/// The storage byte of code `q` (encode's result): two's complement for i8,
/// the format's encoding for f8.
TANDEM_HD inline uint8_t codeByte(double q, Code code) {
  if (code == kInt8)
    return (uint8_t)(int8_t)q;
  return (uint8_t)tandem_round::encodeBinary(q, formatOf(code));
}

/// The code a storage byte holds.
TANDEM_HD inline double codeOfByte(uint8_t byte, Code code) {
  if (code == kInt8)
    return (double)(int8_t)byte;
  return tandem_round::decodeBinary(byte, formatOf(code));
}

} // namespace tandem_codec

#endif // TANDEM_SUPPORT_CODEC_H
