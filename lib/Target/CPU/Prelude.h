//===- Prelude.h - the head of every generated CPU translation unit -------===//
//
// Not a header of the compiler: the CPU emitter pastes this file's text into
// every translation unit it writes, after the shared pieces
// (tandem/Support/Transcendental.h, tandem/Support/Rounding.h and
// tandem/Runtime/FragmentABI.h, pasted before it; PreludeSource.h.in). It is
// kept a real file so that it is read, formatted and diffed as code.
//
//===----------------------------------------------------------------------===//

// The instruction-set extensions this library was compiled for (-march):
// the runtime reads this before calling anything and refuses a CPU that
// lacks one, rather than dying of an illegal instruction.
extern "C" const char tandem_cpu_features[] = ""
#ifdef __SSE4_2__
                                              " sse4.2"
#endif
#ifdef __AVX__
                                              " avx"
#endif
#ifdef __AVX2__
                                              " avx2"
#endif
#ifdef __FMA__
                                              " fma"
#endif
#ifdef __F16C__
                                              " f16c"
#endif
#ifdef __BMI2__
                                              " bmi2"
#endif
#ifdef __AVX512F__
                                              " avx512f"
#endif
#ifdef __AVX512DQ__
                                              " avx512dq"
#endif
#ifdef __AVX512BW__
                                              " avx512bw"
#endif
#ifdef __AVX512VL__
                                              " avx512vl"
#endif
                                              "";

// The fragment ABI this library's entry points follow (FragmentABI.h,
// pasted in above); the runtime refuses a library without it or with
// another version.
extern "C" const uint32_t tandem_fragment_abi = TANDEM_FRAGMENT_ABI_VERSION;

// CBLAS, declared here so no header is needed (enums passed as int).
extern "C" void cblas_sgemm(int, int, int, int, int, int, float, const float *,
                            int, const float *, int, float, float *, int);
extern "C" void cblas_dgemm(int, int, int, int, int, int, double,
                            const double *, int, const double *, int, double,
                            double *, int);

namespace {
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;

// An index outside its range: check `check` of the library's table found
// `value` at `position`. Recorded in the status word when the caller gave
// one and nothing was reported before; the entry point's status (1).
inline int tk_index_error(const tandem_fragment_context *context,
                          uint32_t check, int64_t position, int64_t value) {
  tandem_fragment_status *status = context ? context->status : nullptr;
  if (status && status->code == 0)
    *status = {1, check, context->call, position, value};
  return 1;
}
// bf16 and f16 storage: the bits in a uint16_t, rounded and encoded by the
// evaluator's own code (tandem/Support/Rounding.h, pasted in above), so
// bf16/f16 results are its values bit for bit. Values read as double
// exactly; constructing from double rounds once. Arithmetic runs in double
// and rounds once, as every evaluator op.
struct tk_bf16 {
  uint16_t bits;
  tk_bf16() = default;
  explicit tk_bf16(double v) : bits(tandem_round::toBF16(v)) {}
  operator double() const { return tandem_round::fromBF16(bits); }
};
struct tk_f16 {
  uint16_t bits;
  tk_f16() = default;
  explicit tk_f16(double v) : bits(tandem_round::toF16(v)) {}
  operator double() const { return tandem_round::fromF16(bits); }
};
#define TK_ARITHMETIC(T)                                                       \
  inline T operator+(T a, T b) { return T((double)a + (double)b); }            \
  inline T operator-(T a, T b) { return T((double)a - (double)b); }            \
  inline T operator*(T a, T b) { return T((double)a * (double)b); }            \
  inline T operator/(T a, T b) { return T((double)a / (double)b); }            \
  inline T operator-(T a) { return T(-(double)a); }
TK_ARITHMETIC(tk_bf16)
TK_ARITHMETIC(tk_f16)
#undef TK_ARITHMETIC
// The evaluator's definitions (lib/Eval/ElementwiseKernels.cpp), in double.
inline double tk_rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline double tk_relu(double x) {
  return std::isnan(x) ? x : (x > 0.0 ? x : 0.0);
}
inline double tk_gelu(double x) {
  constexpr double kSqrt2OverPi = 0.79788456080286535587989211986876;
  return 0.5 * x *
         (1.0 + tandem_math::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
}
inline double tk_silu(double x) { return x / (1.0 + tandem_math::exp(-x)); }
// A constant array's address, which the optimizer cannot see through: the
// array's bytes are then read from memory. GCC 12 miscompiles a copy of a
// fixed size out of a constant array, which it expands into vector stores
// of the array's contents, under the tuning of recent Intel cores
// (-mtune=icelake-server, sapphirerapids or rocketlake, which -march=native
// picks on such machines): a 32-byte piece whose first 16 bytes repeat one
// value is stored as that value repeated (a causal mask's row [1 1 1 1 0 0
// 0 0] became eight ones). Every read of a tk_const array goes through
// this (CppEmitter.cpp).
template <typename T> inline T *tk_opaque(T *p) {
  asm("" : "+r"(p));
  return p;
}
template <typename T> inline T tk_maximum(T a, T b) {
  return std::isnan(a) || std::isnan(b) ? (T)NAN : (a < b ? b : a);
}
template <typename T> inline T tk_minimum(T a, T b) {
  return std::isnan(a) || std::isnan(b) ? (T)NAN : (b < a ? b : a);
}
} // namespace
