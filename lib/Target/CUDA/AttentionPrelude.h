//===- AttentionPrelude.h - fused attention of generated CUDA code -------===//
//
// Not a header of the compiler: pasted into every generated translation
// unit after KernelPrelude.h (PreludeSource.h.in). nn.attention and
// nn.attention_grad (docs/cuda-backend.md, "Attention") as functions of
// one thread: a kernel runs one query row (or, for the key and value
// gradients, one key row) of one head per thread in a grid-stride loop.
// No thread reads another's values, so the emulation runs the same code
// and gets the same bits, and no Tq×Tk matrix is ever stored: the forward
// pass keeps an online softmax (a running maximum, the sum and the output
// rescaled when the maximum grows), the backward pass recomputes the
// probabilities from each row's maximum and sum.
//
// Layouts: q, dy and dq are B×Tq×D, k, v, dk and dv are B×Tk×D, D = H·HD,
// head h the columns [h·HD, (h+1)·HD). Every sum runs in increasing index,
// every multiply-add is an explicit fma.
//
// The backward kernels read their own rows (q and dy per query, k and v per
// key) once per visited row of the other side. In memory, a warp's 32 rows
// lie D elements apart, so each such load touches 32 cache lines; the
// kernels copy their own rows into the block's shared memory once instead
// (the row cache: element d of thread t's row at d·blockDim + t), where a
// warp's loads of element d are 32 adjacent words. Only the thread that
// wrote a row reads it, so no barrier is needed and the emulation, which
// runs the threads one after another, reads what the GPU reads.
//
//===----------------------------------------------------------------------===//

namespace {

struct tk_attention_shape {
  int64_t batch, heads, tq, tk, dim;
  int32_t causal;
  float scale;
};

// The first element of row `t` of head `h` in batch `b` of a B×T×D tensor.
TK_HD int64_t tk_attention_at(const tk_attention_shape &s, int64_t t, int64_t b,
                              int64_t h, int64_t hd, int64_t len) {
  return (b * len + t) * s.dim + h * hd;
}

// Element d of a row: in memory (stride 1) or in the row cache (stride
// blockDim), widened to f32 exactly.
template <typename T> struct tk_row {
  const T *p;
  int64_t stride;
  TK_HD float operator[](int64_t d) const { return tk_load(p, d * stride); }
};

// Row `at` of `src` (HD elements): copied into slot `slot` of the calling
// thread's row cache and read from there when the kernel has one (`cache`,
// the thread's first element, `stride` the block's threads), else read
// from memory.
template <int HD, typename T>
TK_HD tk_row<T> tk_attention_keep(const T *src, int64_t at, T *cache,
                                  int64_t stride, int slot) {
  if (!cache)
    return {src + at, 1};
  T *dst = cache + (int64_t)slot * HD * stride;
  for (int d = 0; d < HD; ++d)
    dst[d * stride] = src[at + d];
  return {dst, stride};
}

// The score of query row `qi` (HD floats) against key row j, scaled.
template <int HD, typename T>
TK_HD float tk_attention_score(const float *qi, const T *k, int64_t at) {
  float dot = 0.0f;
  for (int d = 0; d < HD; ++d)
    dot = tk_fma(qi[d], tk_load(k, at + d), dot);
  return dot;
}

// The same chain over two rows read from memory or the row cache (the
// same bits as above when `qi` holds the first row: loading widens
// exactly), with HD fewer registers, which the backward kernels need to
// stay unspilled.
template <int HD, typename T>
TK_HD float tk_attention_dot(const tk_row<T> &a, const tk_row<T> &b) {
  float dot = 0.0f;
  // Unrolled fully, the loads of all HD pairs are hoisted into registers.
  TK_UNROLL(4)
  for (int d = 0; d < HD; ++d)
    dot = tk_fma(a[d], b[d], dot);
  return dot;
}

// Row r = (b, h, i) of the forward pass: y = softmax(q·kᵀ·scale)·v over the
// visible keys (j <= i when causal).
template <int HD, typename T>
TK_HD void tk_attention_row(const tk_attention_shape &s, const T *q, const T *k,
                            const T *v, T *y, int64_t r) {
  int64_t i = r % s.tq, h = (r / s.tq) % s.heads, b = r / (s.tq * s.heads);
  int64_t at = tk_attention_at(s, i, b, h, HD, s.tq);
  // The query row and the output's accumulator stay in registers.
  float qi[HD], acc[HD];
  for (int d = 0; d < HD; ++d) {
    qi[d] = tk_load(q, at + d);
    acc[d] = 0.0f;
  }
  int64_t visible = s.causal ? i + 1 : s.tk;
  float max = -INFINITY, sum = 0.0f;
  for (int64_t j = 0; j < visible; ++j) {
    int64_t kv = tk_attention_at(s, j, b, h, HD, s.tk);
    float score = tk_attention_score<HD>(qi, k, kv) * s.scale;
    if (score > max) {
      // Everything so far was weighted by e^{-max}: move it to e^{-score}.
      float c = tk_exp(max - score);
      sum *= c;
      for (int d = 0; d < HD; ++d)
        acc[d] *= c;
      max = score;
    }
    float p = tk_exp(score - max);
    sum += p;
    for (int d = 0; d < HD; ++d)
      acc[d] = tk_fma(p, tk_load(v, kv + d), acc[d]);
  }
  for (int d = 0; d < HD; ++d)
    tk_store(y, at + d, acc[d] / sum);
}

// The backward pass, part one, for row r = (b, h, i): the row's maximum and
// sum of e^{score - max} (two passes), D = Σ_j P_ij dP_ij with
// dP_ij = dy_i·v_j, and dq_i = scale Σ_j P_ij (dP_ij - D) k_j. The
// statistics go to `stats` (max, sum, D per row) for part two.
template <int HD, typename T>
TK_HD void tk_attention_grad_row(const tk_attention_shape &s, const T *q,
                                 const T *k, const T *v, const T *dy, T *dq,
                                 float *stats, T *cache, int64_t stride,
                                 int64_t r) {
  int64_t i = r % s.tq, h = (r / s.tq) % s.heads, b = r / (s.tq * s.heads);
  int64_t at = tk_attention_at(s, i, b, h, HD, s.tq);
  // The q and dy rows are read from the row cache: registers hold dq's row.
  tk_row<T> qi = tk_attention_keep<HD>(q, at, cache, stride, 0);
  tk_row<T> dyi = tk_attention_keep<HD>(dy, at, cache, stride, 1);
  auto key = [&](const T *src, int64_t j) -> tk_row<T> {
    return {src + tk_attention_at(s, j, b, h, HD, s.tk), 1};
  };
  float acc[HD];
  for (int d = 0; d < HD; ++d)
    acc[d] = 0.0f;
  int64_t visible = s.causal ? i + 1 : s.tk;
  float max = -INFINITY;
  for (int64_t j = 0; j < visible; ++j) {
    float score = tk_attention_dot<HD>(qi, key(k, j)) * s.scale;
    max = tk_op_max::apply(max, score);
  }
  float sum = 0.0f;
  for (int64_t j = 0; j < visible; ++j)
    sum += tk_exp(tk_attention_dot<HD>(qi, key(k, j)) * s.scale - max);
  float rowDot = 0.0f;
  for (int64_t j = 0; j < visible; ++j) {
    float p = tk_exp(tk_attention_dot<HD>(qi, key(k, j)) * s.scale - max) / sum;
    float dp = tk_attention_dot<HD>(dyi, key(v, j));
    rowDot = tk_fma(p, dp, rowDot);
  }
  for (int64_t j = 0; j < visible; ++j) {
    tk_row<T> kj = key(k, j);
    float p = tk_exp(tk_attention_dot<HD>(qi, kj) * s.scale - max) / sum;
    float dp = tk_attention_dot<HD>(dyi, key(v, j));
    float ds = p * (dp - rowDot) * s.scale;
    for (int d = 0; d < HD; ++d)
      acc[d] = tk_fma(ds, kj[d], acc[d]);
  }
  for (int d = 0; d < HD; ++d)
    tk_store(dq, at + d, acc[d]);
  stats[3 * r] = max;
  stats[3 * r + 1] = sum;
  stats[3 * r + 2] = rowDot;
}

// The backward pass, part two, for key row r = (b, h, j): over the queries
// that see key j (i >= j when causal), with P_ij and dP_ij recomputed as
// part one computed them, dk_j = scale Σ_i P_ij (dP_ij - D_i) q_i (KEYS)
// or dv_j = Σ_i P_ij dy_i. One accumulator row per launch: both at once
// spill registers at HD = 64 (gpt2-124m). The k row (and, for dk, the v
// row) is read from the row cache.
template <int HD, bool KEYS, typename T>
TK_HD void tk_attention_grad_column(const tk_attention_shape &s, const T *q,
                                    const T *k, const T *v, const T *dy, T *out,
                                    const float *stats, T *cache,
                                    int64_t stride, int64_t r) {
  int64_t j = r % s.tk, h = (r / s.tk) % s.heads, b = r / (s.tk * s.heads);
  int64_t kv = tk_attention_at(s, j, b, h, HD, s.tk);
  tk_row<T> kj = tk_attention_keep<HD>(k, kv, cache, stride, 0);
  tk_row<T> vj = KEYS ? tk_attention_keep<HD>(v, kv, cache, stride, 1)
                      : tk_row<T>{v + kv, 1};
  float acc[HD];
  for (int d = 0; d < HD; ++d)
    acc[d] = 0.0f;
  // The q and dy rows are read from memory, not held in registers. Causal,
  // key j sees the queries from j on; the loop starts where the warp's
  // first key does (lane r mod 32 holds key j - lane + r mod 32 of the
  // same head, unless the warp spans two), so the warp's lanes visit the
  // same query row together and its loads are broadcasts, not 32 rows.
  int64_t first = s.causal ? j : 0;
  int64_t from = s.causal ? j - r % 32 : 0;
  for (int64_t i = from < 0 ? 0 : from; i < s.tq; ++i) {
    if (i < first)
      continue;
    tk_row<T> qi = {q + tk_attention_at(s, i, b, h, HD, s.tq), 1};
    tk_row<T> dyi = {dy + tk_attention_at(s, i, b, h, HD, s.tq), 1};
    int64_t row = (b * s.heads + h) * s.tq + i;
    float p = tk_exp(tk_attention_dot<HD>(qi, kj) * s.scale - stats[3 * row]) /
              stats[3 * row + 1];
    if (KEYS) {
      float dp = tk_attention_dot<HD>(dyi, vj);
      float ds = p * (dp - stats[3 * row + 2]) * s.scale;
      for (int d = 0; d < HD; ++d)
        acc[d] = tk_fma(ds, qi[d], acc[d]);
    } else {
      for (int d = 0; d < HD; ++d)
        acc[d] = tk_fma(p, dyi[d], acc[d]);
    }
  }
  for (int d = 0; d < HD; ++d)
    tk_store(out, kv + d, acc[d]);
}

} // namespace
