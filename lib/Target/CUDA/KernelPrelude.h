//===- KernelPrelude.h - the head of every generated CUDA translation unit ===//
//
// Not a header of the compiler: the CUDA emitter pastes this file's text
// into every translation unit it writes, after the fragment ABI
// (tandem/Runtime/FragmentABI.h; PreludeSource.h.in). One text, two
// compilers: nvcc builds it for the GPU, and the host compiler builds it for
// the emulation that runs every kernel on the CPU (--cuda-emulate,
// docs/cuda-backend.md). The macro layer below is the only place the two
// differ; the arithmetic is written once and gives the same bits on both
// (but for a NaN's payload: docs/cuda-backend.md, "Numerics").
//
//===----------------------------------------------------------------------===//

#include <cmath>
#include <cstdint>
#include <cstring>

//===----------------------------------------------------------------------===//
// The macro layer
//
// A kernel's body is a sequence of phases separated by barriers. On the GPU
// every thread runs the body; on the host a launch runs the blocks one after
// another and each phase is a loop over the block's threads, so the end of a
// phase is the barrier. Kernels never synchronize across blocks, so the
// block order does not change a result.
//===----------------------------------------------------------------------===//

#ifdef __CUDACC__
#include <cuda_runtime.h>
// A translation unit uses some of the helpers below, not all.
#pragma nv_diag_suppress 177
#pragma nv_diag_suppress 550
#define TK_HD __host__ __device__ __forceinline__
#define TK_KERNEL static __global__ void __launch_bounds__(256)
#define TK_KERNEL_ARGS
#define TK_PHASE {
#define TK_END_PHASE                                                           \
  }                                                                            \
  __syncthreads();
#define TK_THREAD ((int64_t)threadIdx.x)
#define TK_BLOCK ((int64_t)blockIdx.x)
#define TK_BLOCK_DIM ((int64_t)blockDim.x)
#define TK_GRID_DIM ((int64_t)gridDim.x)
#define TK_CONSTANT __device__ const
// A value each thread keeps across barriers, and block-shared memory.
#define TK_LOCAL(type, name) type name
#define TK_AT(name) name
// 16-byte aligned, so that rows of 16 bytes' multiple are read a chunk
// (one vector load) at a time (AttentionPrelude.h).
#define TK_SHARED(type, name, n) __shared__ __align__(16) type name[n]
// Every lane ends with Op over its warp's 32 values, combined by the
// butterfly of __shfl_xor_sync (offsets 16, 8, 4, 2, 1). Between phases,
// with every thread of the block present.
#define TK_WARP_REDUCE(name, Op) name = tk_warp_reduce<Op>(name)
// How far nvcc unrolls the loop that follows (register pressure).
#define TK_UNROLL(n) _Pragma(TK_STRINGIFY(unroll n))
#define TK_STRINGIFY(x) #x
extern "C" const char tandem_cuda_emulated[] = "no";
#else
#define TK_HD inline
// A launch runs its blocks one after another (ProgramPrelude.h), each with
// its index and the launch's sizes.
struct tk_launch {
  int64_t block, blockDim, gridDim;
};
#define TK_KERNEL static void
#define TK_KERNEL_ARGS const tk_launch &tk_l,
#define TK_PHASE for (int64_t tk_t = 0; tk_t < tk_l.blockDim; ++tk_t) {
#define TK_END_PHASE }
#define TK_THREAD tk_t
#define TK_BLOCK tk_l.block
#define TK_BLOCK_DIM tk_l.blockDim
#define TK_GRID_DIM tk_l.gridDim
#define TK_CONSTANT static const
// One slot per thread of the block (at most 256, the launch bound).
#define TK_LOCAL(type, name) type name[256]
#define TK_AT(name) name[tk_t]
#define TK_SHARED(type, name, n) alignas(16) type name[n]
// The GPU's butterfly replayed: at each offset every lane combines its value
// with its partner's from before the step, own value first.
#define TK_WARP_REDUCE(name, Op) tk_warp_reduce<Op>(name, tk_l.blockDim)
#define TK_UNROLL(n)
// The runtime runs an emulated library on the host, through the host
// context, whatever its manifest's target says.
extern "C" const char tandem_cuda_emulated[] = "yes";
#endif

// The fragment ABI this library's entry points follow (FragmentABI.h,
// pasted in above).
extern "C" const uint32_t tandem_fragment_abi = TANDEM_FRAGMENT_ABI_VERSION;

namespace {

//===----------------------------------------------------------------------===//
// Storage types: bf16 and f16 bits in a uint16_t on both sides (not CUDA's
// __nv_bfloat16, so that conversion is this code on both).
//===----------------------------------------------------------------------===//

struct tk_bf16 {
  uint16_t bits;
};
struct tk_f16 {
  uint16_t bits;
};

TK_HD uint32_t tk_bits(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  return u;
}
TK_HD float tk_float(uint32_t u) {
  float x;
  memcpy(&x, &u, 4);
  return x;
}

// Exact: every bf16 and f16 value is a float.
TK_HD float tk_widen(tk_bf16 x) { return tk_float((uint32_t)x.bits << 16); }
TK_HD float tk_widen(tk_f16 x) {
  uint32_t sign = (uint32_t)(x.bits & 0x8000) << 16;
  uint32_t exponent = (x.bits >> 10) & 0x1f, mantissa = x.bits & 0x3ff;
  if (exponent == 0x1f) // infinity or NaN (quiet, payload kept)
    return tk_float(sign | 0x7f800000 | (mantissa << 13) |
                    (mantissa ? 0x400000 : 0));
  if (exponent == 0) // zero or subnormal: mantissa * 2^-24, exact
    return tk_float(sign) +
           (sign ? -1.0f : 1.0f) * (float)mantissa * 5.9604644775390625e-08f;
  return tk_float(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

// Round to nearest, ties to even, overflow to infinity; NaN stays NaN.
TK_HD tk_bf16 tk_to_bf16(float x) {
  uint32_t u = tk_bits(x);
  if ((u & 0x7fffffff) > 0x7f800000)
    return tk_bf16{(uint16_t)((u >> 16) | 0x40)};
  u += 0x7fff + ((u >> 16) & 1);
  return tk_bf16{(uint16_t)(u >> 16)};
}
TK_HD tk_f16 tk_to_f16(float x) {
  uint32_t u = tk_bits(x);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
  uint32_t a = u & 0x7fffffff;
  if (a > 0x7f800000) // NaN: quiet, top payload bits kept
    return tk_f16{(uint16_t)(sign | 0x7e00 | ((a >> 13) & 0x3ff))};
  if (a >= 0x477ff000) // at or above 65520: rounds to infinity
    return tk_f16{(uint16_t)(sign | 0x7c00)};
  if (a < 0x38800000) {
    // Below 2^-14: a subnormal f16, a multiple of 2^-24. The scaled value
    // is exact in float below 2^-14 * 2^24; rintf rounds it to even.
    float scaled = tk_float(a) * 16777216.0f;
    return tk_f16{(uint16_t)(sign | (uint16_t)rintf(scaled))};
  }
  // Normal: drop 13 mantissa bits, ties to even; a carry into the exponent
  // is the correct rounding (up to 65504's neighbor, excluded above).
  uint32_t rounded = a + 0xfff + ((a >> 13) & 1);
  return tk_f16{(uint16_t)(sign | ((rounded - 0x38000000) >> 13))};
}

// A float value rounded to the storage type and back: what a fused kernel
// keeps of each op's result, as the IR's types say.
TK_HD float tk_round(float x, tk_bf16 *) { return tk_widen(tk_to_bf16(x)); }
TK_HD float tk_round(float x, tk_f16 *) { return tk_widen(tk_to_f16(x)); }

TK_HD float tk_load(const float *p, int64_t i) { return p[i]; }
TK_HD float tk_load(const tk_bf16 *p, int64_t i) { return tk_widen(p[i]); }
TK_HD float tk_load(const tk_f16 *p, int64_t i) { return tk_widen(p[i]); }
TK_HD int32_t tk_load(const int32_t *p, int64_t i) { return p[i]; }
TK_HD int64_t tk_load(const int64_t *p, int64_t i) { return p[i]; }
TK_HD void tk_store(float *p, int64_t i, float x) { p[i] = x; }
TK_HD void tk_store(tk_bf16 *p, int64_t i, float x) { p[i] = tk_to_bf16(x); }
TK_HD void tk_store(tk_f16 *p, int64_t i, float x) { p[i] = tk_to_f16(x); }
TK_HD void tk_store(int32_t *p, int64_t i, int32_t x) { p[i] = x; }
TK_HD void tk_store(int64_t *p, int64_t i, int64_t x) { p[i] = x; }

// The blockwise codecs (nn.quantize, nn.dequantize) compute in double with
// tandem_codec's functions (Codec.h, pasted above), as the evaluator and
// the CPU target do: an element enters as the double it is (exact), and a
// decoded value, exact in double, is rounded once to the result's type
// (not through f32, which would round twice).
TK_HD double tk_codec_load(const float *p, int64_t i) { return p[i]; }
TK_HD double tk_codec_load(const tk_bf16 *p, int64_t i) {
  return tk_widen(p[i]);
}
TK_HD double tk_codec_load(const tk_f16 *p, int64_t i) {
  return tk_widen(p[i]);
}
TK_HD void tk_codec_store(float *p, int64_t i, double x) { p[i] = (float)x; }
TK_HD void tk_codec_store(tk_bf16 *p, int64_t i, double x) {
  p[i].bits = tandem_round::toBF16(x);
}
TK_HD void tk_codec_store(tk_f16 *p, int64_t i, double x) {
  p[i].bits = tandem_round::toF16(x);
}

// N elements from `src` to `dst` (both 16-byte aligned, N elements a
// multiple of 16 bytes), as 16-byte transactions on the GPU; the bytes are
// the same either way. tk_load_vec fills a local array from memory,
// tk_store_vec writes one back.
template <int N, typename T> TK_HD void tk_move_vec(T *dst, const T *src) {
  static_assert(N * sizeof(T) % 16 == 0, "whole 16-byte vectors");
#ifdef __CUDA_ARCH__
  for (int k = 0; k < (int)(N * sizeof(T) / 16); ++k)
    reinterpret_cast<uint4 *>(dst)[k] = reinterpret_cast<const uint4 *>(src)[k];
#else
  memcpy(dst, src, N * sizeof(T));
#endif
}
template <int N, typename T> TK_HD void tk_load_vec(const T *p, T *local) {
  tk_move_vec<N>(local, p);
}
template <int N, typename T> TK_HD void tk_store_vec(T *p, const T *local) {
  tk_move_vec<N>(p, local);
}

// The tensors of a multi-tensor launch (one kernel, the same loop over up
// to K tensors of different sizes): tensor t's P buffers, its loop's steps,
// and its blocks, [first[t], first[t + 1]) of the grid. A kernel parameter,
// at most 4 KiB (the emitter sizes K).
template <int P, int K> struct tk_tensors {
  void *ptr[K][P];
  int64_t steps[K];
  int64_t first[K + 1];
  int32_t n;
};
template <int P, int K>
TK_HD int32_t tk_tensor_of(const tk_tensors<P, K> &m, int64_t block) {
  int32_t t = 0;
  while (t + 1 < m.n && m.first[t + 1] <= block)
    ++t;
  return t;
}

// Whether a kernel that writes a summed result (one the fragment
// accumulates over microbatches) adds its values to the sum (on) or, on a
// step's first microbatch, writes them over it: the call's
// TANDEM_FRAGMENT_ACCUMULATE flag. A kernel parameter.
struct tk_sum {
  int32_t on;
};
// The new sum of a summed result's element: the value (already rounded to the
// result's f32) added to the sum in f32 as the accumulate kernel adds it,
// or on the first microbatch the value itself (a copy keeps a -0 that
// 0 + x would not).
TK_HD float tk_summed(const tk_sum &s, const float *sum, float value) {
  return s.on ? *sum + value : value;
}

// Where a kernel reports an index outside its range (FragmentABI.h): the
// rank's status word, the check's entry in the library's table and the
// run's number. A kernel parameter.
struct tk_check {
  tandem_fragment_status *status;
  uint32_t check;
  uint64_t call;
};
// The first report claims the word (its code), so a later one, from this
// kernel's other threads or a later kernel, leaves it alone; the runtime
// reads it only after the stream has finished, when every field is
// written. The value computed from the bad index stays NaN, as before.
TK_HD void tk_report(const tk_check &c, int64_t position, int64_t value) {
  if (!c.status)
    return;
#ifdef __CUDA_ARCH__
  if (atomicCAS(&c.status->code, 0u, 1u) != 0u)
    return;
#else
  if (c.status->code != 0)
    return;
  c.status->code = 1;
#endif
  c.status->check = c.check;
  c.status->call = c.call;
  c.status->position = position;
  c.status->value = value;
}

//===----------------------------------------------------------------------===//
// f32 arithmetic. +, -, *, / and sqrt are IEEE operations, rounded once on
// both sides (nvcc: -fmad=false -prec-div=true -prec-sqrt=true -ftz=false;
// host: -ffp-contract=off); every multiply-add is an explicit fma, correctly
// rounded on both. Transcendentals are our own, built from those, so the
// GPU and its emulation agree bit for bit; docs/cuda-backend.md derives
// their error bounds.
//===----------------------------------------------------------------------===//

TK_HD float tk_fma(float a, float b, float c) {
#ifdef __CUDA_ARCH__
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}
TK_HD double tk_fma(double a, double b, double c) {
#ifdef __CUDA_ARCH__
  return __fma_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}
TK_HD bool tk_isnan(float x) { return x != x; }

// 2^k for k in [-126, 127], exactly.
TK_HD float tk_pow2(int k) { return tk_float((uint32_t)(k + 127) << 23); }

// exp: x = k ln2 + r with |r| <= ln2/2 (Cody-Waite: ln2 in two parts, the
// first with 12 significant bits so k * ln2_hi is exact), e^r by its Taylor
// polynomial of degree 7 (truncation below 6e-9 relative), times 2^k in two
// exact steps so that subnormal results round once.
TK_HD float tk_exp(float x) {
  if (tk_isnan(x))
    return x;
  if (x > 88.72283935546875f)
    return INFINITY;
  if (x < -103.97208404541015625f)
    return 0.0f;
  float k = rintf(x * 1.44269502162933349609375f);
  float r = tk_fma(k, -0.693145751953125f, x);
  r = tk_fma(k, -1.428606765330187045e-06f, r);
  float p = 1.98412701e-4f;         // 1/7!
  p = tk_fma(p, r, 1.38888892e-3f); // 1/6!
  p = tk_fma(p, r, 8.33333377e-3f); // 1/5!
  p = tk_fma(p, r, 4.16666679e-2f); // 1/4!
  p = tk_fma(p, r, 1.66666672e-1f); // 1/3!
  p = tk_fma(p, r, 0.5f);
  p = tk_fma(p, r, 1.0f);
  p = tk_fma(p, r, 1.0f);
  int n = (int)k, half = n / 2;
  return p * tk_pow2(half) * tk_pow2(n - half);
}

// log: x = m 2^e with m in [sqrt(1/2), sqrt(2)); log m = 2 atanh(s),
// s = (m - 1) / (m + 1), |s| <= 0.1716, by its series to s^9 (truncation
// below 1e-9 relative); e ln2 in two parts.
TK_HD float tk_log(float x) {
  if (tk_isnan(x) || x < 0.0f)
    return NAN;
  if (x == 0.0f)
    return -INFINITY;
  if (x == INFINITY)
    return x;
  int e = 0;
  if (x < 1.17549435e-38f) { // subnormal: scale into the normal range
    x *= 8388608.0f;
    e = -23;
  }
  uint32_t u = tk_bits(x);
  e += (int)((u >> 23) & 0xff) - 127;
  float m = tk_float((u & 0x7fffff) | 0x3f800000);
  if (m > 1.41421353816986083984375f) {
    m *= 0.5f;
    e += 1;
  }
  float f = m - 1.0f; // exact (Sterbenz)
  float s = f / (2.0f + f);
  float z = s * s;
  float R = tk_fma(z, 0.222222224f, 0.285714298f); // 2/9, 2/7
  R = tk_fma(R, z, 0.4f);
  R = tk_fma(R, z, 0.666666687f);
  float logm = tk_fma(s * z, R, 2.0f * s);
  float fe = (float)e;
  return tk_fma(fe, 0.693145751953125f,
                tk_fma(fe, 1.428606765330187045e-06f, logm));
}

// tanh: odd Taylor polynomial below 0.55 (truncation below 1e-9 relative),
// else 1 - 2 / (e^{2|x|} + 1), which rounds to 1 from 9.1 on.
TK_HD float tk_tanh(float x) {
  if (tk_isnan(x))
    return x;
  float a = fabsf(x);
  float t;
  if (a < 0.55f) {
    float z = a * a;
    float p = -2.39129e-4f; // the coefficients of x^19 .. x^3
    p = tk_fma(p, z, 5.900274e-4f);
    p = tk_fma(p, z, -1.4558344e-3f);
    p = tk_fma(p, z, 3.5921280e-3f);
    p = tk_fma(p, z, -8.8632355e-3f);
    p = tk_fma(p, z, 2.1869488e-2f);
    p = tk_fma(p, z, -5.3968254e-2f);
    p = tk_fma(p, z, 0.13333334f);
    p = tk_fma(p, z, -0.33333334f);
    t = tk_fma(p * z, a, a);
  } else if (a < 10.0f) {
    t = 1.0f - 2.0f / (tk_exp(2.0f * a) + 1.0f);
  } else {
    t = 1.0f;
  }
  return x < 0.0f ? -t : t;
}

// sin and cos: x = k pi/2 + r, reduced in double (pi/2 in two parts with
// fma), |r| <= pi/4; Taylor polynomials in float
// (truncation below 2e-9 relative); the quadrant picks the function and sign.
TK_HD void tk_sincos(float x, float *sinOut, float *cosOut) {
  if (tk_isnan(x) || fabsf(x) == INFINITY) {
    *sinOut = *cosOut = NAN;
    return;
  }
  double k = rint((double)x * 0.63661977236758134308);
  double rd = tk_fma(k, -1.5707963267948965580, (double)x);
  rd = tk_fma(k, -6.1232339957367658e-17, rd);
  float r = (float)rd, z = r * r;
  float s = 2.75573192e-6f; // 1/9!
  s = tk_fma(s, z, -1.98412701e-4f);
  s = tk_fma(s, z, 8.33333377e-3f);
  s = tk_fma(s, z, -1.66666672e-1f);
  s = tk_fma(s * z, r, r);
  float c = -2.755731922e-7f; // -1/10!
  c = tk_fma(c, z, 2.48015876e-5f);
  c = tk_fma(c, z, -1.38888892e-3f);
  c = tk_fma(c, z, 4.16666679e-2f);
  c = tk_fma(c, z, -0.5f);
  c = tk_fma(c, z, 1.0f);
  int64_t q = (int64_t)k & 3;
  float sn = q == 0 ? s : q == 1 ? c : q == 2 ? -s : -c;
  float cs = q == 0 ? c : q == 1 ? -s : q == 2 ? -c : s;
  *sinOut = sn;
  *cosOut = cs;
}
TK_HD float tk_sin(float x) {
  float s, c;
  tk_sincos(x, &s, &c);
  return s;
}
TK_HD float tk_cos(float x) {
  float s, c;
  tk_sincos(x, &s, &c);
  return c;
}

// erf and erfc: in double, from IEEE operations and fma only (so both sides
// give the same bits), then rounded once to float. A float x squares
// exactly in double. |x| < 2: erf(x) = 2/sqrt(pi) e^{-x^2} sum_n 2^n
// x^{2n+1} / (2n+1)!!, whose terms all have x's sign (no cancellation), to
// n = 28 (truncation below 1e-15 relative there); erfc = 1 - erf cancels by
// at most 1 / erfc(2), about 214. |x| >= 2: erfc(|x|) = e^{-x^2}/sqrt(pi) /
// (|x| + (1/2) / (|x| + 1 / (|x| + (3/2) / ...))), the continued fraction to
// 60 terms (truncation below 1e-14 relative at 2, less beyond); erf = 1 -
// erfc and erfc(-a) = 2 - erfc(a) do not cancel. The double results are
// within 1e-11 relative, so the float is the correctly rounded one except
// within that distance of a rounding boundary: within 1 unit in the last
// place of the evaluator's (double, rounded once) in every case.
// e^x for x in [-121, 0] (the -x^2 above): Cody-Waite with ln2 in two parts
// (the first with 32 low zero bits), the Taylor polynomial of degree 13
// (truncation below 5e-18 relative), times 2^k (a normal double).
TK_HD double tk_exp_erf(double x) {
  double k = rint(x * 1.4426950408889634);
  double r = tk_fma(k, -6.93147180369123816490e-01, x);
  r = tk_fma(k, -1.90821492927058770002e-10, r);
  double p = 1.6059043836821613e-10; // 1/13!
  p = tk_fma(p, r, 2.08767569878681e-09);
  p = tk_fma(p, r, 2.505210838544172e-08);
  p = tk_fma(p, r, 2.755731922398589e-07);
  p = tk_fma(p, r, 2.7557319223985893e-06);
  p = tk_fma(p, r, 2.48015873015873e-05);
  p = tk_fma(p, r, 0.0001984126984126984);
  p = tk_fma(p, r, 0.001388888888888889);
  p = tk_fma(p, r, 0.008333333333333333);
  p = tk_fma(p, r, 0.041666666666666664);
  p = tk_fma(p, r, 0.16666666666666666);
  p = tk_fma(p, r, 0.5);
  p = tk_fma(p, r, 1.0);
  p = tk_fma(p, r, 1.0);
  uint64_t bits = (uint64_t)((int64_t)k + 1023) << 52;
  double scale;
  memcpy(&scale, &bits, 8);
  return p * scale;
}
// erf(x) for |x| < 2, the series above.
TK_HD double tk_erf_series(double x) {
  double x2 = x * x, term = x, sum = x;
  for (int n = 1; n <= 28; ++n) {
    term = term * (2.0 * x2 / (double)(2 * n + 1));
    sum = sum + term;
  }
  return sum * tk_exp_erf(-x2) * 1.1283791670955126; // 2/sqrt(pi)
}
// erfc(a) for a in [2, 11], the continued fraction above.
TK_HD double tk_erfc_fraction(double a) {
  double t = a;
  for (int k = 60; k >= 1; --k)
    t = a + (double)k * 0.5 / t;
  return tk_exp_erf(-(a * a)) * 0.5641895835477563 / t; // 1/sqrt(pi)
}
TK_HD float tk_erf(float x) {
  if (tk_isnan(x))
    return x;
  double a = fabs((double)x);
  if (a >= 6.0) // erf(6) = 1 - 2e-17
    return x < 0.0f ? -1.0f : 1.0f;
  if (a < 2.0)
    return (float)tk_erf_series((double)x);
  double e = 1.0 - tk_erfc_fraction(a);
  return (float)(x < 0.0f ? -e : e);
}
TK_HD float tk_erfc(float x) {
  if (tk_isnan(x))
    return x;
  if (x >= 11.0f) // erfc(11) = 1e-54, below half the smallest float
    return 0.0f;
  if (x <= -6.0f) // 2 - erfc(6), 2 - 2e-17
    return 2.0f;
  double a = fabs((double)x);
  if (a < 2.0)
    return (float)(1.0 - tk_erf_series((double)x));
  double c = tk_erfc_fraction(a);
  return (float)(x > 0.0f ? c : 2.0 - c);
}

//===----------------------------------------------------------------------===//
// Reductions: the combining operations and the warp step.
//===----------------------------------------------------------------------===//

struct tk_op_add {
  static TK_HD float apply(float a, float b) { return a + b; }
};
struct tk_op_max {
  // NaN in either operand gives NaN, so the order of a max does not matter.
  static TK_HD float apply(float a, float b) {
    return tk_isnan(a) || tk_isnan(b) ? NAN : (a < b ? b : a);
  }
};

#ifdef __CUDACC__
template <typename Op>
__device__ __forceinline__ float tk_warp_reduce(float v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v = Op::apply(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}
#else
template <typename Op> inline void tk_warp_reduce(float *v, int64_t threads) {
  for (int64_t warp = 0; warp < threads; warp += 32)
    for (int offset = 16; offset > 0; offset /= 2) {
      float before[32];
      memcpy(before, v + warp, sizeof before);
      for (int lane = 0; lane < 32; ++lane)
        v[warp + lane] = Op::apply(before[lane], before[lane ^ offset]);
    }
}
#endif

// The evaluator's definitions (lib/Eval/ElementwiseKernels.cpp), in float.
TK_HD float tk_sqrt(float x) { return sqrtf(x); }
TK_HD float tk_rsqrt(float x) { return 1.0f / sqrtf(x); }
TK_HD float tk_relu(float x) { return tk_isnan(x) ? x : (x > 0.0f ? x : 0.0f); }
TK_HD float tk_gelu(float x) {
  float inner = 0.797884583f * tk_fma(0.044715f * x * x, x, x);
  return 0.5f * x * (1.0f + tk_tanh(inner));
}
// GELU's derivative (the tanh form): 0.5 (1 + t) + 0.5 x (1 - t^2) c
// (1 + 3a x^2), t = tanh(c (x + a x^3)); nn.gelu_grad multiplies it by the
// cotangent, and the GEMM epilogue DGELU runs the same in the emulation.
TK_HD float tk_gelu_grad(float x) {
  float x2 = x * x;
  float t = tk_tanh(0.797884583f * tk_fma(0.044715f * x2, x, x));
  float inner = 0.797884583f * tk_fma(0.134145f, x2, 1.0f);
  return tk_fma(0.5f * x * (1.0f - t * t), inner, 0.5f * (1.0f + t));
}
TK_HD float tk_silu(float x) { return x / (1.0f + tk_exp(-x)); }
TK_HD float tk_maximum(float a, float b) {
  return tk_isnan(a) || tk_isnan(b) ? NAN : (a < b ? b : a);
}
TK_HD float tk_minimum(float a, float b) {
  return tk_isnan(a) || tk_isnan(b) ? NAN : (b < a ? b : a);
}
// x^e for a constant e: the exact cases as products, else through exp and
// log (a negative base only with an integral exponent).
TK_HD float tk_pow(float x, float e) {
  if (e == 1.0f)
    return x;
  if (e == 2.0f)
    return x * x;
  if (e == 3.0f)
    return x * x * x;
  if (e == 0.5f)
    return sqrtf(x);
  if (e == -1.0f)
    return 1.0f / x;
  if (e == 0.0f)
    return 1.0f;
  if (x < 0.0f) {
    if (rintf(e) != e)
      return NAN;
    float magnitude = tk_exp(e * tk_log(-x));
    bool odd = fmodf(e, 2.0f) != 0.0f;
    return odd ? -magnitude : magnitude;
  }
  return tk_exp(e * tk_log(x));
}

} // namespace
