//===- GemmPrelude.h - GEMM call sites of generated CUDA code ------------===//
//
// Not a header of the compiler: pasted into every generated translation
// unit after KernelPrelude.h (PreludeSource.h.in). A matmul becomes one
// call of tk_gemm with its shape written as a constant by the emitter; on
// the GPU that call is cuBLASLt, on the host (--cuda-emulate) the CPU BLAS
// over f32 copies of the operands, rounded once to the result type, as the
// cuBLASLt call with f32 accumulation rounds once.
//
// Row-major C (m×n) = op(A) (m×k) · op(B) (k×n), `batches` times at the
// given element strides (a stride of 0 shares the operand across batches).
// cuBLASLt is column-major: a row-major matrix is its transpose there, so
// the call computes Cᵀ = op(B)ᵀ · op(A)ᵀ with A and B exchanged.
//
//===----------------------------------------------------------------------===//

// Element types of GEMM operands and results.
enum tk_gemm_type { TK_GEMM_F32 = 0, TK_GEMM_BF16 = 1, TK_GEMM_F16 = 2 };

struct tk_gemm_shape {
  int32_t transA, transB;
  int32_t abType, cType;
  int64_t m, n, k, lda, ldb, ldc;
  int64_t batches, strideA, strideB, strideC;
  float alpha, beta;
};

// What runs on a GEMM's f32 result before it is stored, as cuBLASLt's
// epilogues do. TK_GEMM_BIAS: plus bias[column] (n values of the result's
// type), then optionally plus a residual (m×n of the result's type;
// cuBLASLt's C with beta = 1, so the output is another buffer).
// TK_GEMM_GELU: plus bias, then GELU (tanh form; with `aux`, the value
// before it is stored there too, m×n like the result). TK_GEMM_DGELU: times
// GELU's derivative at `aux` (m×n of the result's type, the forward's value
// before GELU: an input). The result is rounded to its type once, at the
// end.
enum tk_gemm_epilogue_kind {
  TK_GEMM_BIAS = 0,
  TK_GEMM_GELU = 1,
  TK_GEMM_DGELU = 2
};
struct tk_gemm_epilogue {
  int32_t kind;
  const void *bias;
  const void *residual;
  void *aux;
};

// A fragment's status when a GEMM cannot run (FragmentABI.h).
#define TK_GEMM_FAILED 3

namespace {

TK_HD float tk_gemm_load(const void *p, int32_t type, int64_t i) {
  if (type == TK_GEMM_BF16)
    return tk_widen(((const tk_bf16 *)p)[i]);
  if (type == TK_GEMM_F16)
    return tk_widen(((const tk_f16 *)p)[i]);
  return ((const float *)p)[i];
}

TK_HD void tk_gemm_store(void *p, int32_t type, int64_t i, float x) {
  if (type == TK_GEMM_BF16)
    ((tk_bf16 *)p)[i] = tk_to_bf16(x);
  else if (type == TK_GEMM_F16)
    ((tk_f16 *)p)[i] = tk_to_f16(x);
  else
    ((float *)p)[i] = x;
}

// The epilogue on the product v (f32) of element `at` (row-major offset,
// column `col`) of a one-batch result of type `type`: the emulation's
// arithmetic, and the GPU's where cuBLASLt offers no fused algorithm (below).
TK_HD float tk_gemm_epilogue_value(const tk_gemm_epilogue &e, int32_t type,
                                   float v, int64_t at, int64_t col) {
  if (e.kind == TK_GEMM_DGELU)
    // dy · gelu'(x), as nn.gelu_grad's kernel computes it.
    return v * tk_gelu_grad(tk_gemm_load(e.aux, type, at));
  v = v + tk_gemm_load(e.bias, type, col);
  if (e.aux)
    tk_gemm_store(e.aux, type, at, v);
  if (e.kind == TK_GEMM_GELU)
    v = tk_gelu(v);
  if (e.residual)
    v = tk_gemm_load(e.residual, type, at) + v;
  return v;
}

} // namespace

#ifdef __CUDACC__
#include <cublasLt.h>

#include <cstdlib>

namespace {

cudaDataType_t tk_cuda_type(int32_t type) {
  return type == TK_GEMM_BF16  ? CUDA_R_16BF
         : type == TK_GEMM_F16 ? CUDA_R_16F
                               : CUDA_R_32F;
}

int64_t tk_type_bytes(int32_t type) { return type == TK_GEMM_F32 ? 4 : 2; }

// The largest power of two up to 256 dividing the address and every batch
// offset: what the heuristic may assume of a matrix.
uint32_t tk_alignment(const void *p, int64_t strideBytes, int64_t batches) {
  uint64_t bits = (uint64_t)(uintptr_t)p | 256;
  if (batches > 1)
    bits |= (uint64_t)strideBytes;
  return (uint32_t)(bits & (~bits + 1));
}

// The plan cache's key: the call's shape and its operands' alignments.
void tk_plan_key(const tk_gemm_shape &s, const uint32_t align[4],
                 const tk_gemm_epilogue *e,
                 uint64_t key[TANDEM_PLAN_KEY_WORDS]) {
  // The heuristic reads the epilogue and its pointers' alignments.
  uint64_t epilogue = 0, epilogueAlign = 0;
  if (e) {
    epilogue = 1 | (uint64_t)e->kind << 4 |
               (uint64_t)(e->residual != nullptr) << 2 |
               (uint64_t)(e->aux != nullptr) << 3;
    // (The residual's alignment is C's, align[2].)
    epilogueAlign = (uint64_t)tk_alignment(e->bias, 0, 1) |
                    (uint64_t)(e->aux ? tk_alignment(e->aux, 0, 1) : 0) << 16;
  }
  uint64_t words[TANDEM_PLAN_KEY_WORDS] = {
      (uint64_t)s.transA | (uint64_t)s.transB << 8 | (uint64_t)s.abType << 16 |
          (uint64_t)s.cType << 24,
      (uint64_t)s.m,
      (uint64_t)s.n,
      (uint64_t)s.k,
      (uint64_t)s.lda,
      (uint64_t)s.ldb,
      (uint64_t)s.ldc,
      (uint64_t)s.batches,
      (uint64_t)s.strideA,
      (uint64_t)s.strideB,
      (uint64_t)s.strideC,
      (uint64_t)(s.beta != 0.0f),
      (uint64_t)align[0] | (uint64_t)align[1] << 16 | (uint64_t)align[2] << 32 |
          (uint64_t)align[3] << 48,
      epilogue,
      epilogueAlign,
      0};
  memcpy(key, words, sizeof words);
}

// The entry for `key`: the one holding it, else the empty one where it
// belongs; null when the cache is absent or full.
tandem_plan_entry *tk_plan_slot(tandem_plan_cache *cache,
                                const uint64_t key[TANDEM_PLAN_KEY_WORDS]) {
  if (!cache || cache->capacity == 0)
    return nullptr;
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < TANDEM_PLAN_KEY_WORDS; ++i)
    h = (h ^ key[i]) * 1099511628211ull;
  for (uint64_t probe = 0; probe < cache->capacity; ++probe) {
    tandem_plan_entry *e = &cache->entries[(h + probe) % cache->capacity];
    if (!e->valid || memcmp(e->key, key, sizeof e->key) == 0)
      return e;
  }
  return nullptr;
}

// Why a GEMM could not run: the failing call and its status, and how many
// algorithms the heuristic offered.
struct tk_gemm_failure {
  const char *stage = "";
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  int algorithms = -1;
};

struct tk_lt_layouts {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  ~tk_lt_layouts() {
    if (op)
      cublasLtMatmulDescDestroy(op);
    if (a)
      cublasLtMatrixLayoutDestroy(a);
    if (b)
      cublasLtMatrixLayoutDestroy(b);
    if (c)
      cublasLtMatrixLayoutDestroy(c);
  }
};

bool tk_layout(cublasLtMatrixLayout_t *layout, int32_t type, int64_t rows,
               int64_t cols, int64_t ld, int64_t batches, int64_t stride) {
  if (cublasLtMatrixLayoutCreate(layout, tk_cuda_type(type), (uint64_t)rows,
                                 (uint64_t)cols, ld) != CUBLAS_STATUS_SUCCESS)
    return false;
  if (batches == 1)
    return true;
  int32_t count = (int32_t)batches;
  return cublasLtMatrixLayoutSetAttribute(
             *layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
             sizeof count) == CUBLAS_STATUS_SUCCESS &&
         cublasLtMatrixLayoutSetAttribute(
             *layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
             sizeof stride) == CUBLAS_STATUS_SUCCESS;
}

// Picks an algorithm without a split-K reduction (so every run sums in the
// same order) for the call, or says there is none.
// `align`: A's, B's, C's (the matrix passed as cuBLASLt's C: the residual
// when there is one) and D's. On failure `why` says which call.
bool tk_pick_algo(cublasLtHandle_t handle, const tk_lt_layouts &d,
                  const tandem_fragment_context *ctx, const uint32_t align[4],
                  cublasLtMatmulAlgo_t *algo, tk_gemm_failure *why) {
  cublasLtMatmulPreference_t pref = nullptr;
  why->status = cublasLtMatmulPreferenceCreate(&pref);
  why->stage = "cublasLtMatmulPreferenceCreate";
  if (why->status != CUBLAS_STATUS_SUCCESS)
    return false;
  uint64_t workspace = ctx->workspace ? ctx->workspace_bytes : 0;
  uint32_t none = CUBLASLT_REDUCTION_SCHEME_NONE;
  why->stage = "cublasLtMatmulPreferenceSetAttribute";
  why->status = cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
      sizeof workspace);
  if (why->status == CUBLAS_STATUS_SUCCESS)
    why->status = cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &none, sizeof none);
  // cuBLASLt's A is our B and its B our A (see the top of the file).
  const cublasLtMatmulPreferenceAttributes_t alignments[4] = {
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
  const uint32_t values[4] = {align[1], align[0], align[2], align[3]};
  for (int i = 0; why->status == CUBLAS_STATUS_SUCCESS && i < 4; ++i)
    why->status = cublasLtMatmulPreferenceSetAttribute(
        pref, alignments[i], &values[i], sizeof values[i]);
  cublasLtMatmulHeuristicResult_t results[8];
  int found = 0;
  if (why->status == CUBLAS_STATUS_SUCCESS) {
    why->stage = "cublasLtMatmulAlgoGetHeuristic";
    why->status = cublasLtMatmulAlgoGetHeuristic(handle, d.op, d.a, d.b, d.c,
                                                 d.c, pref, 8, results, &found);
  }
  cublasLtMatmulPreferenceDestroy(pref);
  if (why->status != CUBLAS_STATUS_SUCCESS)
    return false;
  why->algorithms = found;
  // The mask filters the heuristic's list; the check below makes sure.
  for (int i = 0; i < found; ++i) {
    if (results[i].state != CUBLAS_STATUS_SUCCESS)
      continue;
    int32_t splits = 1;
    size_t written = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(
            &results[i].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splits,
            sizeof splits, &written) != CUBLAS_STATUS_SUCCESS ||
        splits > 1)
      continue;
    *algo = results[i].algo;
    return true;
  }
  why->stage = "cublasLtMatmulAlgoGetHeuristic (no algorithm without split-K)";
  return false;
}

// The epilogue's attributes on the operation descriptor.
bool tk_set_epilogue(cublasLtMatmulDesc_t op, const tk_gemm_shape &s,
                     const tk_gemm_epilogue *e) {
  if (!e)
    return true;
  cublasLtEpilogue_t kind = e->kind == TK_GEMM_DGELU  ? CUBLASLT_EPILOGUE_DGELU
                            : e->kind == TK_GEMM_BIAS ? CUBLASLT_EPILOGUE_BIAS
                            : e->aux ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS
                                     : CUBLASLT_EPILOGUE_GELU_BIAS;
  bool ok =
      cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &kind,
                                     sizeof kind) == CUBLAS_STATUS_SUCCESS;
  // The bias and the auxiliary matrix have the result's type (the
  // emitter's rule), said explicitly rather than left to the default, which
  // would misread them silently if the two ever differed.
  int32_t type = (int32_t)tk_cuda_type(s.cType);
  // DGELU has no bias.
  if (ok && e->kind != TK_GEMM_DGELU)
    ok = cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                        &e->bias, sizeof e->bias) ==
             CUBLAS_STATUS_SUCCESS &&
         cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                        &type,
                                        sizeof type) == CUBLAS_STATUS_SUCCESS;
  if (ok && e->aux) {
    // Column-major, the auxiliary matrix is n×m like the result; cuBLASLt
    // wants its leading dimension a multiple of 8 (the emitter checks it).
    int64_t ld = s.ldc;
    ok = ld % 8 == 0 &&
         cublasLtMatmulDescSetAttribute(
             op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &e->aux,
             sizeof e->aux) == CUBLAS_STATUS_SUCCESS &&
         cublasLtMatmulDescSetAttribute(
             op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &ld, sizeof ld) ==
             CUBLAS_STATUS_SUCCESS &&
         cublasLtMatmulDescSetAttribute(
             op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, &type,
             sizeof type) == CUBLAS_STATUS_SUCCESS;
  }
  return ok;
}

// A GEMM that cannot run, said on stderr with the call's shape (the
// fragment's status only says "the BLAS library could not run a GEMM"):
// which call failed and why, and what the heuristic was asked and found.
int tk_gemm_failed(const tk_gemm_shape &s, const tk_gemm_epilogue *e,
                   const uint32_t align[4], const tk_gemm_failure &why) {
  static const char *const types[] = {"f32", "bf16", "f16"};
  static const char *const epilogues[] = {"bias", "gelu", "dgelu"};
  fprintf(stderr,
          "tandem: cuBLASLt GEMM failed in %s: %s; m %lld n %lld k %lld "
          "lda %lld ldb %lld ldc %lld batches %lld%s%s, %s x %s -> %s, "
          "beta %g, epilogue %s%s%s, alignments A %u B %u C %u D %u, %d "
          "algorithms found\n",
          why.stage,
          why.status == CUBLAS_STATUS_SUCCESS
              ? "no usable result"
              : cublasLtGetStatusString(why.status),
          (long long)s.m, (long long)s.n, (long long)s.k, (long long)s.lda,
          (long long)s.ldb, (long long)s.ldc, (long long)s.batches,
          s.transA ? ", A transposed" : "", s.transB ? ", B transposed" : "",
          types[s.abType % 3], types[s.abType % 3], types[s.cType % 3],
          (double)s.beta, e ? epilogues[e->kind % 3] : "none",
          e && e->aux ? " with aux" : "", e && e->residual ? " + residual" : "",
          align[0], align[1], align[2], align[3], why.algorithms);
  return TK_GEMM_FAILED;
}

// The unfused epilogue: element by element over an f32 result the GEMM
// wrote without it (one batch, m × n at leading dimension ldc).
__global__ void __launch_bounds__(256)
    tk_gemm_epilogue_kernel(tk_gemm_shape s, tk_gemm_epilogue e, float *C) {
  const int64_t total = s.m * s.n;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t r = i / s.n, col = i - r * s.n, at = r * s.ldc + col;
    C[at] = tk_gemm_epilogue_value(e, TK_GEMM_F32, C[at], at, col);
  }
}

// Whether a GEMM with epilogue `e` may run unfused: an f32 result (so the
// product is rounded once, to f32, before the epilogue, as cuBLASLt's own
// epilogue sees it), one batch, and C only as the residual.
bool tk_unfusable(const tk_gemm_shape &s, const tk_gemm_epilogue *e) {
  return e && s.cType == TK_GEMM_F32 && s.batches == 1 &&
         (s.beta == 0.0f || e->residual);
}

// TANDEM_CUDA_UNFUSED_EPILOGUES=1: every GEMM that may runs its epilogue
// unfused, the GPU check's proof of that path.
bool tk_force_unfused() {
  static const bool force = [] {
    const char *v = getenv("TANDEM_CUDA_UNFUSED_EPILOGUES");
    return v && v[0] == '1';
  }();
  return force;
}

int tk_gemm(const tandem_fragment_context *ctx, const tk_gemm_shape &s,
            const void *A, const void *B, void *C,
            const tk_gemm_epilogue *epilogue = nullptr);

// The GEMM with no epilogue into C, then the epilogue kernel over it.
int tk_gemm_unfused(const tandem_fragment_context *ctx, const tk_gemm_shape &s,
                    const void *A, const void *B, void *C,
                    const tk_gemm_epilogue &e) {
  tk_gemm_shape plain = s;
  plain.beta = 0.0f;
  if (int status = tk_gemm(ctx, plain, A, B, C))
    return status;
  const int64_t total = s.m * s.n;
  const int64_t blocks = total / 256 + 1 < 65536 ? total / 256 + 1 : 65536;
  tk_gemm_epilogue_kernel<<<(unsigned)blocks, 256, 0,
                            (cudaStream_t)ctx->stream>>>(s, e, (float *)C);
  cudaError_t launch = cudaGetLastError();
  if (launch == cudaSuccess)
    return 0;
  fprintf(stderr, "tandem: the unfused GEMM epilogue's launch failed: %s\n",
          cudaGetErrorString(launch));
  return 2;
}

int tk_gemm(const tandem_fragment_context *ctx, const tk_gemm_shape &s,
            const void *A, const void *B, void *C,
            const tk_gemm_epilogue *epilogue) {
  const bool unfusable = tk_unfusable(s, epilogue);
  if (unfusable && tk_force_unfused())
    return tk_gemm_unfused(ctx, s, A, B, C, *epilogue);
  // A residual is cuBLASLt's C (beta = 1 in the shape); the result is D.
  const void *input = epilogue && epilogue->residual ? epilogue->residual : C;
  int64_t cBytes = s.strideC * tk_type_bytes(s.cType);
  const uint32_t align[4] = {
      tk_alignment(A, s.strideA * tk_type_bytes(s.abType), s.batches),
      tk_alignment(B, s.strideB * tk_type_bytes(s.abType), s.batches),
      tk_alignment(input, cBytes, s.batches),
      tk_alignment(C, cBytes, s.batches)};
  tk_gemm_failure why;
  cublasLtHandle_t handle = (cublasLtHandle_t)ctx->blas;
  if (!handle) {
    why.stage = "the fragment context (no cuBLASLt handle)";
    return tk_gemm_failed(s, epilogue, align, why);
  }
  tk_lt_layouts d;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cublasOperation_t opA = s.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opB = s.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  why.stage = "cublasLtMatmulDescCreate";
  why.status = cublasLtMatmulDescCreate(&d.op, compute, CUDA_R_32F);
  if (why.status != CUBLAS_STATUS_SUCCESS)
    return tk_gemm_failed(s, epilogue, align, why);
  why.stage = "cublasLtMatmulDescSetAttribute (transposes or epilogue)";
  if (cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSA, &opA,
                                     sizeof opA) != CUBLAS_STATUS_SUCCESS ||
      cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSB, &opB,
                                     sizeof opB) != CUBLAS_STATUS_SUCCESS ||
      !tk_set_epilogue(d.op, s, epilogue))
    return tk_gemm_failed(s, epilogue, align, why);
  // Column-major: cuBLASLt's A is B as stored (n×k, or k×n transposed),
  // its B is A as stored (k×m, or m×k), its C is C (n×m).
  why.stage = "cublasLtMatrixLayoutCreate or its batch attributes";
  if (!tk_layout(&d.a, s.abType, s.transB ? s.k : s.n, s.transB ? s.n : s.k,
                 s.ldb, s.batches, s.strideB) ||
      !tk_layout(&d.b, s.abType, s.transA ? s.m : s.k, s.transA ? s.k : s.m,
                 s.lda, s.batches, s.strideA) ||
      !tk_layout(&d.c, s.cType, s.n, s.m, s.ldc, s.batches, s.strideC))
    return tk_gemm_failed(s, epilogue, align, why);
  uint64_t key[TANDEM_PLAN_KEY_WORDS];
  tk_plan_key(s, align, epilogue, key);
  tandem_plan_entry *entry =
      tk_plan_slot((tandem_plan_cache *)ctx->plan_cache, key);
  cublasLtMatmulAlgo_t algo;
  static_assert(sizeof algo == sizeof entry->algo, "an algorithm's bytes");
  // An entry of kTkPlanUnfused: cuBLASLt offered no algorithm with this
  // epilogue, which then runs unfused.
  const uint64_t kTkPlanUnfused = 2;
  if (entry && entry->valid == kTkPlanUnfused)
    return tk_gemm_unfused(ctx, s, A, B, C, *epilogue);
  if (entry && entry->valid) {
    memcpy(&algo, entry->algo, sizeof algo);
  } else {
    if (!tk_pick_algo(handle, d, ctx, align, &algo, &why)) {
      if (!unfusable)
        return tk_gemm_failed(s, epilogue, align, why);
      // Said once per shape (once in all when the plan cache is full), on
      // stderr: a slower step, not a failure.
      static bool saidWithoutCache = false;
      if (entry || !saidWithoutCache) {
        saidWithoutCache = saidWithoutCache || !entry;
        tk_gemm_failed(s, epilogue, align, why);
        fprintf(stderr,
                "tandem: that GEMM runs its epilogue unfused instead (the "
                "product rounded to f32 first; the bits may differ from a "
                "fused epilogue's)\n");
      }
      if (entry) {
        memcpy(entry->key, key, sizeof entry->key);
        entry->valid = kTkPlanUnfused;
      }
      return tk_gemm_unfused(ctx, s, A, B, C, *epilogue);
    }
    if (entry) {
      memcpy(entry->key, key, sizeof entry->key);
      memcpy(entry->algo, &algo, sizeof algo);
      entry->valid = 1;
    }
  }
  uint64_t workspace = ctx->workspace ? ctx->workspace_bytes : 0;
  why.stage = "cublasLtMatmul";
  why.status = cublasLtMatmul(handle, d.op, &s.alpha, B, d.a, A, d.b, &s.beta,
                              input, d.c, C, d.c, &algo, ctx->workspace,
                              workspace, (cudaStream_t)ctx->stream);
  return why.status == CUBLAS_STATUS_SUCCESS
             ? 0
             : tk_gemm_failed(s, epilogue, align, why);
}

} // namespace
#else
// CBLAS, declared here so no header is needed (enums passed as int).
extern "C" void cblas_sgemm(int, int, int, int, int, int, float, const float *,
                            int, const float *, int, float, float *, int);

namespace {

// An operand's rows × cols (row-major, leading dimension ld) as floats.
float *tk_gemm_widen(const void *p, int32_t type, int64_t rows, int64_t cols,
                     int64_t ld) {
  float *out = new float[rows * cols > 0 ? rows * cols : 1];
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      out[r * cols + c] = tk_gemm_load(p, type, r * ld + c);
  return out;
}

int tk_gemm(const tandem_fragment_context *ctx, const tk_gemm_shape &s,
            const void *A, const void *B, void *C,
            const tk_gemm_epilogue *epilogue = nullptr) {
  (void)ctx;
  // A residual is added after the bias (the IR's order), not as the BLAS
  // call's C.
  const float beta = epilogue && epilogue->residual ? 0.0f : s.beta;
  const int kRowMajor = 101, kNoTrans = 111, kTrans = 112;
  int64_t aRows = s.transA ? s.k : s.m, aCols = s.transA ? s.m : s.k;
  int64_t bRows = s.transB ? s.n : s.k, bCols = s.transB ? s.k : s.n;
  for (int64_t batch = 0; batch < s.batches; ++batch) {
    const char *a =
        (const char *)A + batch * s.strideA * (s.abType == TK_GEMM_F32 ? 4 : 2);
    const char *b =
        (const char *)B + batch * s.strideB * (s.abType == TK_GEMM_F32 ? 4 : 2);
    char *c = (char *)C + batch * s.strideC * (s.cType == TK_GEMM_F32 ? 4 : 2);
    float *fa = tk_gemm_widen(a, s.abType, aRows, aCols, s.lda);
    float *fb = tk_gemm_widen(b, s.abType, bRows, bCols, s.ldb);
    float *fc = beta != 0.0f ? tk_gemm_widen(c, s.cType, s.m, s.n, s.ldc)
                             : new float[s.m * s.n > 0 ? s.m * s.n : 1];
    cblas_sgemm(kRowMajor, s.transA ? kTrans : kNoTrans,
                s.transB ? kTrans : kNoTrans, (int)s.m, (int)s.n, (int)s.k,
                s.alpha, fa, (int)aCols, fb, (int)bCols, beta, fc, (int)s.n);
    for (int64_t r = 0; r < s.m; ++r)
      for (int64_t col = 0; col < s.n; ++col) {
        float v = fc[r * s.n + col];
        int64_t at = r * s.ldc + col;
        if (epilogue)
          v = tk_gemm_epilogue_value(*epilogue, s.cType, v, at, col);
        tk_gemm_store(c, s.cType, at, v);
      }
    delete[] fa;
    delete[] fb;
    delete[] fc;
  }
  return 0;
}

} // namespace
#endif
