//===- Transcendental.h - exp and tanh of the evaluator and generated code ===//
//
// The reference evaluator computes every op in double and rounds once to
// the result type; the CPU backend's generated code must produce the same
// bits. With the C library's exp and tanh that meant a scalar call per
// element in the generated loops, a fifth of a GPT's training step. These
// versions are branch-free (so compilers vectorize the loops calling them)
// and accurate to a few units in the last place of a double, far below a
// float's rounding. The evaluator and the generated code both use them: the
// CPU emitter embeds this file's text in every translation unit
// (TranscendentalSource.h), so both sides compute the same bits by
// construction.
//
// Every operation is a separate IEEE double operation: compile with
// -ffp-contract=off (a fused multiply-add would round differently).
// Header-only and free of project dependencies on purpose: it is pasted
// into generated C++.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_SUPPORT_TRANSCENDENTAL_H
#define TANDEM_SUPPORT_TRANSCENDENTAL_H

#include <cstdint>
#include <cstring>

namespace tandem_math {

inline double fromBits(uint64_t bits) {
  double value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

inline uint64_t toBits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

/// 1/k! for k <= 16, each rounded once (k! is exact in a double).
constexpr double inverseFactorial(int k) {
  double factorial = 1.0;
  for (int i = 2; i <= k; ++i)
    factorial *= i;
  return 1.0 / factorial;
}

/// Horner's rule from the term of degree K down to First: p * x + 1/K!,
/// and so on. Recursive so that it is straight-line code (a loop here kept
/// GCC from vectorizing the loops that call exp).
template <int K, int First> inline double hornerDown(double p, double x) {
  if constexpr (K < First) {
    return p;
  } else {
    constexpr double kTerm = inverseFactorial(K);
    return hornerDown<K - 1, First>(p * x + kTerm, x);
  }
}

/// sum over k in [First, Last] of x^(k - First) / k!, by Horner's rule from
/// the smallest term: one multiply and one add per term, in this order, so
/// every compiler computes the same bits.
template <int First, int Last> inline double taylorTail(double x) {
  constexpr double kLast = inverseFactorial(Last);
  return hornerDown<Last - 1, First>(kLast, x);
}

/// e^x. x = n ln2 + r with |r| <= ln2/2 (Cody-Waite: n ln2's high part is
/// exact), e^r from its Taylor series to degree 13 (truncation below 2^-58
/// relative), then scaled by 2^n in two halves so that neither factor
/// leaves the normal range: results overflow to infinity and underflow
/// through the subnormals to zero as the true value does. NaN gives NaN.
inline double exp(double x) {
  // Outside [-800, 800] the result is 0 or infinity anyway; the clamp keeps
  // n small. (NaN fails both comparisons and stays NaN.)
  x = x < -800.0 ? -800.0 : x;
  x = x > 800.0 ? 800.0 : x;
  // Round-to-nearest of x / ln2 by the 1.5 * 2^52 trick: afterwards the
  // low bits of t hold n.
  const double kShifter = 0x1.8p52;
  double t = x * 0x1.71547652b82fep0 + kShifter;
  double n = t - kShifter;
  // ln2 split as in fdlibm: n * kLn2Hi is exact for |n| < 2^20.
  double r = (x - n * 0x1.62e42feep-1) - n * 0x1.a39ef35793c76p-33;
  double p = taylorTail<0, 13>(r);
  // n + 2048 as an unsigned integer (t's bits minus the shifter's), split
  // into halves h1 + h2 = n + 2048 with each h - 1024 in [-578, 578].
  uint64_t biased = toBits(t) - toBits(kShifter) + 2048;
  uint64_t h1 = biased >> 1, h2 = biased - h1;
  double scale1 = fromBits((h1 - 1) << 52); // 2^(h1 - 1024)
  double scale2 = fromBits((h2 - 1) << 52);
  return p * scale1 * scale2;
}

/// e^y - 1 for |y| <= 0.6 from its Taylor series to degree 16 (relative
/// truncation below 2^-55): no cancellation near zero.
inline double expm1Small(double y) { return taylorTail<1, 16>(y) * y; }

/// tanh(x). For |x| < 0.3, expm1(2x) / (expm1(2x) + 2), exact near zero
/// (and -0 stays -0); otherwise 1 - 2 / (e^(2|x|) + 1) with x's sign, whose
/// cancellation at |x| = 0.3 costs under two bits of a double. Both are
/// computed and one selected, so loops stay branch-free. NaN gives NaN,
/// +-infinity +-1.
inline double tanh(double x) {
  double em = expm1Small(2.0 * x);
  double small = em / (em + 2.0);
  double a = x < 0.0 ? -x : x;
  double large = 1.0 - 2.0 / (exp(2.0 * a) + 1.0);
  large = x < 0.0 ? -large : large;
  return a < 0.3 ? small : large;
}

} // namespace tandem_math

#endif // TANDEM_SUPPORT_TRANSCENDENTAL_H
