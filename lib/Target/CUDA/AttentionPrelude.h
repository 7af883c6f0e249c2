//===- AttentionPrelude.h - fused attention of generated CUDA code -------===//
//
// Not a header of the compiler: pasted into every generated translation
// unit after KernelPrelude.h (PreludeSource.h.in). nn.attention and
// nn.attention_grad (docs/cuda-backend.md, "Attention") as block functions:
// a block takes R rows of one head (query rows, or for the key and value
// gradients key rows), one per thread, and walks the other side's rows in
// tiles of BT that its threads load together into shared memory. Every
// thread then visits the tile's rows in increasing order with the
// arithmetic a thread alone would use: the tiles change where a row is
// read from, not a bit of the result, and no Tq×Tk matrix is ever stored.
// The forward pass keeps an online softmax (a running maximum, the sum and
// the output rescaled when the maximum grows) and, for the backward,
// each row's log-sum-exp; the backward pass recomputes the probabilities
// from the scores and that log-sum-exp.
//
// Layouts: q, dy and dq are B×Tq×D, D = H·HD, head h the columns
// [h·HD, (h+1)·HD); k, v, dk and dv are B×Tk×(KV·HD) for KV key and value
// heads, which KV = H without grouped-query attention. Each tensor's rows
// are where its layout in the shape says (tk_attention_layout): its own
// buffer's rows, or a block of columns of a wider buffer's (the pieces of
// a split read in place, the pieces of a concat written in place, at a
// row stride wider than the row). Query head h reads
// key and value head h / G, G = H / KV; the key and value gradients of a
// key and value head sum its group's G query heads in increasing order.
// Every sum runs in increasing index, every multiply-add is an explicit fma.
//
// The backward kernels read their own rows (q and dy per query, k and v per
// key) for every row of the other side. They copy them once into the row
// cache in shared memory (in chunks of V elements, 16 bytes when a row is
// a whole number of them: chunk c of thread t's row at (c·blockDim + t)·V,
// so a warp's loads of chunk c are 32 adjacent chunks); only the thread
// that wrote a row reads it. Tiles are read by every thread at the same
// address (broadcasts). Tile rows and cached rows are read a chunk at a
// time, one 16-byte load instead of V scalar ones: the multiply-adds
// then wait on a quarter (f32) or an eighth (bf16, f16) of the
// shared-memory loads, in the same order, so the same bits. The shapes of
// both are template arguments the emitter picks to fit 48 KiB of static
// shared memory.
//
// Phases (KernelPrelude.h) end with barriers: a tile is loaded in one
// phase and used in the next, so on the host, where a phase runs the
// threads one after another, every thread sees the whole tile.
//
//===----------------------------------------------------------------------===//

#ifdef __CUDACC__
// The kernels' declaration (CudaEmitter.cpp's attention launches): blocks
// of at most 64 threads (R = 64 or 32), and registers for one block on a
// multiprocessor. Under TK_KERNEL's bound alone (256 threads, no minimum
// of blocks) ptxas held these kernels at a register count that keeps more
// 256-thread blocks resident (48 or 64: five or four blocks) and spilled
// what did not fit, values the block loop carries and reads outside its
// hot loop (the loop's index, the grid's size, the block's batch and
// head): 4 to 32 bytes in dq, dk or dv at heads of 8 and 16, f32 and bf16,
// 12 bytes in the tiny GPT's dq.
#define TK_ATTENTION_KERNEL static __global__ void __launch_bounds__(64, 1)
// Block functions: called by every thread of a block, between barriers.
#define TK_BLOCK_FN __device__ __forceinline__
#define TK_LAUNCH_ARG
// A row of n values each thread keeps across barriers (registers).
#define TK_LOCAL_ROW(type, name, n) type name[n]
#define TK_ROW(name) name
#else
#define TK_ATTENTION_KERNEL static void
#define TK_BLOCK_FN inline
#define TK_LAUNCH_ARG tk_l,
#define TK_LOCAL_ROW(type, name, n) type name[256][n]
#define TK_ROW(name) name[tk_t]
#endif

namespace {

// Where a tensor's rows are: element c of row t of batch b at
// offset + b·batch + t·row + c of its buffer. A tensor of its own has
// offset 0, row its width and batch T times that; a piece of a wider
// buffer (nn.split's result, nn.concat's operand) has the wider buffer's
// strides and its first element's offset.
struct tk_attention_layout {
  int64_t offset, batch, row;
};

// The tensors whose layouts a shape holds: q, k, v, y, then for the
// backward dy, dq, dk, dv (the log-sum-exp is B×H×Tq f32 in a buffer of
// its own).
enum : int {
  TK_ATTENTION_Q,
  TK_ATTENTION_K,
  TK_ATTENTION_V,
  TK_ATTENTION_Y,
  TK_ATTENTION_DY,
  TK_ATTENTION_DQ,
  TK_ATTENTION_DK,
  TK_ATTENTION_DV,
  TK_ATTENTION_TENSORS
};

struct tk_attention_shape {
  int64_t batch, heads, kv_heads, tq, tk, dim;
  int32_t causal;
  float scale;
  tk_attention_layout layout[TK_ATTENTION_TENSORS];
};

// Block and head indices divide in 32 bits. A division of 64-bit values
// known only at run time is a called subroutine on the GPU
// (__cuda_sm20_div_s64): several calls in every iteration of the block
// loop, whose fixed registers held the values the loop carries (ptxas
// spilled those around the calls in the tiny GPT's dq kernel; 32-bit
// divisions are inline and the kernels take fewer registers). Every
// operand fits: the emitter refuses attention with 2^31 query rows B·H·Tq
// or key rows B·KV·Tk or more, so a block index, a count of blocks or
// heads, and a head's rows plus a block's threads (at most 64) are below
// 2^32.
TK_HD int64_t tk_attention_div(int64_t a, int64_t b) {
  return (uint32_t)a / (uint32_t)b;
}
TK_HD int64_t tk_attention_mod(int64_t a, int64_t b) {
  return (uint32_t)a % (uint32_t)b;
}

// Query heads a key and value head serves.
TK_HD int64_t tk_attention_group(const tk_attention_shape &s) {
  return tk_attention_div(s.heads, s.kv_heads);
}

// The first element of row `t` of head `h` in batch `b` of a tensor laid
// out as `l`: query head h of a query-side tensor, key and value head h of
// a key-side one.
TK_HD int64_t tk_attention_at(const tk_attention_layout &l, int64_t t,
                              int64_t b, int64_t h, int64_t hd) {
  return l.offset + b * l.batch + t * l.row + h * hd;
}

// 16 bytes: what one vector load moves.
#ifdef __CUDACC__
typedef uint4 tk_chunk;
#else
struct alignas(16) tk_chunk {
  uint32_t w[4];
};
#endif

// The elements of a row of HD that the kernels read as one chunk: 16
// bytes' worth when the row is a whole number of chunks (then every tile
// row and every chunk of the row cache starts 16-byte aligned, since
// TK_SHARED aligns the arrays), else 1.
template <int HD, typename T> struct tk_attention_width {
  static constexpr int value =
      HD % (16 / sizeof(T)) == 0 ? int(16 / sizeof(T)) : 1;
};

// A row in chunks of V elements: element d at p[(d / V)·chunk + d % V].
// A row in memory or a tile is contiguous (chunk = V); the row cache
// interleaves its threads' chunks (chunk = V·blockDim). An `aligned` row
// (a tile's or the cache's, in shared memory) with V > 1 reads a chunk as
// one 16-byte load; a row in memory (a piece of a wider buffer, at any
// offset) element by element. Values are widened to f32 exactly.
template <typename T, int V> struct tk_row {
  const T *p;
  int64_t chunk;
  bool aligned;
  TK_HD float operator[](int64_t d) const {
    return tk_load(p, (d / V) * chunk + d % V);
  }
  // Chunk c's V values.
  TK_HD void load(int64_t c, float *out) const {
    if (V > 1 && aligned) {
      static_assert(V == 1 || V * sizeof(T) == sizeof(tk_chunk),
                    "a chunk is 16 bytes");
      T values[V];
#ifdef __CUDACC__
      tk_chunk bits = *reinterpret_cast<const tk_chunk *>(p + c * chunk);
      memcpy(values, &bits, sizeof values);
#else
      memcpy(values, p + c * chunk, sizeof values);
#endif
      for (int e = 0; e < V; ++e)
        out[e] = tk_load(values, e);
      return;
    }
    for (int e = 0; e < V; ++e)
      out[e] = (*this)[c * V + e];
  }
};

// A row of HD that a tile holds at `p` (contiguous, aligned).
template <int HD, typename T>
TK_HD tk_row<T, tk_attention_width<HD, T>::value>
tk_attention_tile_row(const T *p) {
  return {p, tk_attention_width<HD, T>::value, true};
}

// A thread's own row `row` of `src` (HD elements) as the kernel reads it:
// from slot `slot` of the thread's row cache when the kernel has one
// (`cache`; chunk c of thread t at slot·HD·threads + (c·threads + t)·V),
// else from memory. With `fill`, the row is first copied into the cache.
template <int HD, typename T>
TK_HD tk_row<T, tk_attention_width<HD, T>::value>
tk_attention_own(const T *src, int64_t row, T *cache, int slot, int64_t thread,
                 int64_t threads, bool fill = false) {
  constexpr int V = tk_attention_width<HD, T>::value;
  if (!cache)
    return {src + row, V, false};
  T *dst = cache + (int64_t)slot * HD * threads + thread * V;
  for (int d = 0; fill && d < HD; ++d)
    dst[(d / V) * threads * V + d % V] = src[row + d];
  return {dst, threads * V, true};
}

// A row the thread holds in registers, read in chunks as a tk_row is.
template <int V> struct tk_reg_row {
  const float *p;
  TK_HD void load(int64_t c, float *out) const {
    for (int e = 0; e < V; ++e)
      out[e] = p[c * V + e];
  }
};

// Whether rows of HD go two at a time (tk_attention_dot2): up to 64, the
// registers of the second chain fit (gpt2-124m's heads: no spills). At 128
// the forward kernel's query and output rows alone are 256 values, it
// spills already, and pairs spilled more (188 bytes against 104, f32);
// at 256 (f32, no row cache) every kernel does.
template <int HD> struct tk_attention_pairs {
  static constexpr bool value = HD <= 64;
};

// The chain a·b over HD elements in increasing index, one fma each, its
// chunk loop unrolled U times: fully (U = HD / V) when `a` is a row in
// registers, so that the row's index is a constant and the row stays in
// registers; 4 otherwise, which keeps the kernels off the register limit.
template <int HD, int U, typename A, typename T, int V>
TK_HD float tk_attention_chain(const A &a, const tk_row<T, V> &b) {
  float dot = 0.0f;
  TK_UNROLL(U)
  for (int c = 0; c < HD / V; ++c) {
    float x[V], y[V];
    a.load(c, x);
    b.load(c, y);
    for (int e = 0; e < V; ++e)
      dot = tk_fma(x[e], y[e], dot);
  }
  return dot;
}

// a·b0 into out[0] and, with `two`, a·b1 into out[1], each the chain
// tk_attention_chain computes: the same bits. With tk_attention_pairs the
// two chains run interleaved, two independent multiply-adds in flight
// instead of one that waits for the one before (a chain of HD dependent
// fmas is latency, not throughput, with the few warps these blocks leave a
// multiprocessor), and a's chunks loaded once for both; else one after the
// other.
template <int HD, int U, typename A, typename T, int V>
TK_HD void tk_attention_chains(const A &a, const tk_row<T, V> &b0,
                               const tk_row<T, V> &b1, bool two, float *out) {
  if (!tk_attention_pairs<HD>::value || !two) {
    out[0] = tk_attention_chain<HD, U>(a, b0);
    if (two)
      out[1] = tk_attention_chain<HD, U>(a, b1);
    return;
  }
  float dot0 = 0.0f, dot1 = 0.0f;
  TK_UNROLL(U)
  for (int c = 0; c < HD / V; ++c) {
    float x[V], y0[V], y1[V];
    a.load(c, x);
    b0.load(c, y0);
    b1.load(c, y1);
    for (int e = 0; e < V; ++e) {
      dot0 = tk_fma(x[e], y0[e], dot0);
      dot1 = tk_fma(x[e], y1[e], dot1);
    }
  }
  out[0] = dot0;
  out[1] = dot1;
}

// tk_attention_chains with `a` a row of shared or global memory, or a row
// the thread holds in registers.
template <int HD, typename T, int V>
TK_HD void tk_attention_dot2(const tk_row<T, V> &a, const tk_row<T, V> &b0,
                             const tk_row<T, V> &b1, bool two, float *out) {
  tk_attention_chains<HD, 4>(a, b0, b1, two, out);
}
template <int HD, typename T, int V>
TK_HD void tk_attention_dot2(const float *a, const tk_row<T, V> &b0,
                             const tk_row<T, V> &b1, bool two, float *out) {
  tk_attention_chains<HD, HD / V>(tk_reg_row<V>{a}, b0, b1, two, out);
}

// acc[d] += a·x[d] over the row, one fma each (unrolled fully: `acc` is
// in registers).
template <int HD, typename T, int V>
TK_HD void tk_attention_axpy(float a, const tk_row<T, V> &x, float *acc) {
  TK_UNROLL(HD / V)
  for (int c = 0; c < HD / V; ++c) {
    float y[V];
    x.load(c, y);
    for (int e = 0; e < V; ++e)
      acc[c * V + e] = tk_fma(a, y[e], acc[c * V + e]);
  }
}

// The rows a block of R rows takes: block g of head (b, h) is rows
// [first, first + R) of it; for blocks of query rows, `keys` is how many
// keys its queries see (up to its last row's when causal). Query rows go
// by query head, key rows by key and value head.
struct tk_attention_rows {
  int64_t b, h, first, keys;
};
// Blocks of R of `rows` rows a head, over every one of `heads` heads.
TK_HD int64_t tk_attention_blocks(const tk_attention_shape &s, int64_t heads,
                                  int64_t rows, int64_t r) {
  return s.batch * heads * tk_attention_div(rows + r - 1, r);
}
TK_HD tk_attention_rows tk_attention_rows_of(const tk_attention_shape &s,
                                             int64_t heads, int64_t g,
                                             int64_t rows, int64_t r) {
  int64_t blocks = tk_attention_div(rows + r - 1, r);
  int64_t first = tk_attention_mod(g, blocks) * r,
          bh = tk_attention_div(g, blocks);
  int64_t end = first + r < rows ? first + r : rows;
  return {tk_attention_div(bh, heads), tk_attention_mod(bh, heads), first,
          s.causal && end < s.tk ? end : s.tk};
}

// Row `i` of head (b, h) of `out` (laid out as `l`): the thread's
// accumulator row `acc`.
template <int HD, typename T>
TK_HD void tk_attention_store(const tk_attention_layout &l, T *out,
                              const tk_attention_rows &at, int64_t i,
                              const float *acc) {
  int64_t row = tk_attention_at(l, i, at.b, at.h, HD);
  for (int d = 0; d < HD; ++d)
    tk_store(out, row + d, acc[d]);
}

// Rows [from, from + n) of head (b, h) of `src` (laid out as `l`) into
// `tile` (n rows of HD, adjacent), the block's threads taking adjacent
// elements. One phase.
template <int HD, typename T>
TK_HD void tk_attention_load(const tk_attention_layout &l, const T *src,
                             int64_t b, int64_t h, int64_t from, int64_t n,
                             T *tile, int64_t thread, int64_t threads) {
  for (int64_t e = thread; e < n * HD; e += threads)
    tile[e] = src[tk_attention_at(l, from + e / HD, b, h, HD) + e % HD];
}

// Key and value rows [from, from + n) of key and value head h in batch b
// into the tiles kt and vt. One phase.
template <int HD, typename T>
TK_HD void tk_attention_load_kv(const tk_attention_shape &s, int64_t b,
                                int64_t h, int64_t from, int64_t n, const T *k,
                                const T *v, T *kt, T *vt, int64_t thread,
                                int64_t threads) {
  tk_attention_load<HD>(s.layout[TK_ATTENTION_K], k, b, h, from, n, kt, thread,
                        threads);
  tk_attention_load<HD>(s.layout[TK_ATTENTION_V], v, b, h, from, n, vt, thread,
                        threads);
}

// How many of a tile's keys [k0, k0 + n) query row i sees: all, or those up
// to i when causal; none for a row past the queries.
TK_HD int64_t tk_attention_visible(const tk_attention_shape &s, int64_t i,
                                   int64_t k0, int64_t n) {
  int64_t visible = s.causal ? i + 1 - k0 : n;
  return i < s.tq ? (visible < n ? visible : n) : 0;
}

// Element r of the per-row f32 tensors (the log-sum-exp, D): row i of
// query head h in batch b, B×H×Tq.
TK_HD int64_t tk_attention_stat(const tk_attention_shape &s,
                                const tk_attention_rows &at, int64_t h,
                                int64_t i) {
  return (at.b * s.heads + h) * s.tq + i;
}

// nn.attention: y = softmax(q·kᵀ·scale)·v over the visible keys (j <= i
// when causal), a query row per thread, key tiles of BT rows; with `lse`,
// each row's log-sum-exp max + log(sum) too.
template <int HD, int BT, typename T>
TK_BLOCK_FN void
tk_attention_forward(TK_KERNEL_ARGS const tk_attention_shape &s, const T *q,
                     const T *k, const T *v, T *y, float *lse, T *kt, T *vt) {
  // The query row and the output's accumulator stay in registers.
  TK_LOCAL_ROW(float, qi, HD);
  TK_LOCAL_ROW(float, acc, HD);
  TK_LOCAL(float, rowMax);
  TK_LOCAL(float, sum);
  int64_t blocks = tk_attention_blocks(s, s.heads, s.tq, TK_BLOCK_DIM);
  for (int64_t g = TK_BLOCK; g < blocks; g += TK_GRID_DIM) {
    tk_attention_rows at =
        tk_attention_rows_of(s, s.heads, g, s.tq, TK_BLOCK_DIM);
    int64_t kvh = tk_attention_div(at.h, tk_attention_group(s));
    TK_PHASE
    int64_t i = at.first + TK_THREAD;
    if (i < s.tq) {
      int64_t row =
          tk_attention_at(s.layout[TK_ATTENTION_Q], i, at.b, at.h, HD);
      for (int d = 0; d < HD; ++d) {
        TK_ROW(qi)[d] = tk_load(q, row + d);
        TK_ROW(acc)[d] = 0.0f;
      }
      TK_AT(rowMax) = -INFINITY;
      TK_AT(sum) = 0.0f;
    }
    TK_END_PHASE
    for (int64_t k0 = 0; k0 < at.keys; k0 += BT) {
      int64_t n = at.keys - k0 < BT ? at.keys - k0 : BT;
      TK_PHASE
      tk_attention_load_kv<HD>(s, at.b, kvh, k0, n, k, v, kt, vt, TK_THREAD,
                               TK_BLOCK_DIM);
      TK_END_PHASE
      TK_PHASE
      int64_t i = at.first + TK_THREAD;
      int64_t end = tk_attention_visible(s, i, k0, n);
      // Keys in pairs: both scores at once (tk_attention_dot2), then each
      // key's update in order. An odd last key pairs with itself.
      constexpr int P = tk_attention_pairs<HD>::value ? 2 : 1;
      for (int64_t j = 0; j < end; j += P) {
        int64_t next = P == 2 && j + 1 < end ? j + 1 : j;
        float dots[2];
        tk_attention_dot2<HD>(
            TK_ROW(qi), tk_attention_tile_row<HD>(kt + j * HD),
            tk_attention_tile_row<HD>(kt + next * HD), next != j, dots);
        TK_UNROLL(P)
        for (int w = 0; w < P; ++w) {
          if (w == 1 && next == j)
            break;
          int64_t u = j + w;
          float score = dots[w] * s.scale;
          if (score > TK_AT(rowMax)) {
            // Everything so far was weighted by e^{-max}: move it to
            // e^{-score}.
            float c = tk_exp(TK_AT(rowMax) - score);
            TK_AT(sum) *= c;
            TK_UNROLL(HD)
            for (int d = 0; d < HD; ++d)
              TK_ROW(acc)[d] *= c;
            TK_AT(rowMax) = score;
          }
          float p = tk_exp(score - TK_AT(rowMax));
          TK_AT(sum) += p;
          tk_attention_axpy<HD>(p, tk_attention_tile_row<HD>(vt + u * HD),
                                TK_ROW(acc));
        }
      }
      TK_END_PHASE
    }
    TK_PHASE
    int64_t i = at.first + TK_THREAD;
    if (i < s.tq) {
      int64_t row =
          tk_attention_at(s.layout[TK_ATTENTION_Y], i, at.b, at.h, HD);
      for (int d = 0; d < HD; ++d)
        tk_store(y, row + d, TK_ROW(acc)[d] / TK_AT(sum));
      if (lse)
        lse[tk_attention_stat(s, at, at.h, i)] =
            TK_AT(rowMax) + tk_log(TK_AT(sum));
    }
    TK_END_PHASE
  }
}

// nn.attention_grad, part one, a query row i per thread: D = dy_i·y_i
// (which is Σ_j P_ij dP_ij), then in one pass over the keys, with
// P_ij = e^{score - lse_i} and dP_ij = dy_i·v_j, dq_i = scale Σ_j P_ij
// (dP_ij - D) k_j. D goes to `rowDots` for part two. The q and dy rows are
// in the row cache (`cache`, or memory when null), dq's row in registers.
template <int HD, int BT, typename T>
TK_BLOCK_FN void
tk_attention_grad_rows(TK_KERNEL_ARGS const tk_attention_shape &s, const T *q,
                       const T *k, const T *v, const T *y, const float *lse,
                       const T *dy, T *dq, float *rowDots, T *cache, T *kt,
                       T *vt) {
  constexpr int V = tk_attention_width<HD, T>::value;
  TK_LOCAL_ROW(float, acc, HD);
  TK_LOCAL(float, rowLse);
  TK_LOCAL(float, rowDot);
  int64_t blocks = tk_attention_blocks(s, s.heads, s.tq, TK_BLOCK_DIM);
  for (int64_t g = TK_BLOCK; g < blocks; g += TK_GRID_DIM) {
    tk_attention_rows at =
        tk_attention_rows_of(s, s.heads, g, s.tq, TK_BLOCK_DIM);
    int64_t kvh = tk_attention_div(at.h, tk_attention_group(s));
    // The thread's rows: q (slot 0) and dy (slot 1), from the row cache or
    // memory.
    auto own = [&](int slot, int64_t thread, bool fill) {
      const tk_attention_layout &l =
          s.layout[slot ? TK_ATTENTION_DY : TK_ATTENTION_Q];
      int64_t row = tk_attention_at(l, at.first + thread, at.b, at.h, HD);
      return tk_attention_own<HD>(slot ? dy : q, row, cache, slot, thread,
                                  TK_BLOCK_DIM, fill);
    };
    TK_PHASE
    int64_t i = at.first + TK_THREAD;
    if (i < s.tq) {
      own(0, TK_THREAD, true);
      auto dyi = own(1, TK_THREAD, true);
      for (int d = 0; d < HD; ++d)
        TK_ROW(acc)[d] = 0.0f;
      TK_AT(rowLse) = lse[tk_attention_stat(s, at, at.h, i)];
      int64_t row =
          tk_attention_at(s.layout[TK_ATTENTION_Y], i, at.b, at.h, HD);
      TK_AT(rowDot) =
          tk_attention_chain<HD, 4>(dyi, tk_row<T, V>{y + row, V, false});
    }
    TK_END_PHASE
    for (int64_t k0 = 0; k0 < at.keys; k0 += BT) {
      int64_t n = at.keys - k0 < BT ? at.keys - k0 : BT;
      TK_PHASE
      tk_attention_load_kv<HD>(s, at.b, kvh, k0, n, k, v, kt, vt, TK_THREAD,
                               TK_BLOCK_DIM);
      TK_END_PHASE
      TK_PHASE
      int64_t i = at.first + TK_THREAD;
      int64_t end = tk_attention_visible(s, i, k0, n);
      auto qi = own(0, TK_THREAD, false);
      auto dyi = own(1, TK_THREAD, false);
      // Keys in pairs: both keys' dot products at once
      // (tk_attention_dot2), then each key's step in order. An odd last
      // key pairs with itself.
      constexpr int P = tk_attention_pairs<HD>::value ? 2 : 1;
      for (int64_t j = 0; j < end; j += P) {
        int64_t next = P == 2 && j + 1 < end ? j + 1 : j;
        float scores[2], dps[2];
        tk_attention_dot2<HD>(qi, tk_attention_tile_row<HD>(kt + j * HD),
                              tk_attention_tile_row<HD>(kt + next * HD),
                              next != j, scores);
        tk_attention_dot2<HD>(dyi, tk_attention_tile_row<HD>(vt + j * HD),
                              tk_attention_tile_row<HD>(vt + next * HD),
                              next != j, dps);
        TK_UNROLL(P)
        for (int w = 0; w < P; ++w) {
          if (w == 1 && next == j)
            break;
          float p = tk_exp(scores[w] * s.scale - TK_AT(rowLse));
          float ds = p * (dps[w] - TK_AT(rowDot)) * s.scale;
          tk_attention_axpy<HD>(
              ds, tk_attention_tile_row<HD>(kt + (j + w) * HD), TK_ROW(acc));
        }
      }
      TK_END_PHASE
    }
    TK_PHASE
    int64_t i = at.first + TK_THREAD;
    if (i < s.tq) {
      tk_attention_store<HD>(s.layout[TK_ATTENTION_DQ], dq, at, i, TK_ROW(acc));
      rowDots[tk_attention_stat(s, at, at.h, i)] = TK_AT(rowDot);
    }
    TK_END_PHASE
  }
}

// nn.attention_grad, part two, a key row j of a key and value head per
// thread: over the query heads of its group in increasing order, and in
// each over the queries that see key j (i >= j when causal), in query
// tiles of BT rows with their statistics (lse and D), P_ij and dP_ij
// recomputed as part one computed them, dk_j = scale Σ_i P_ij
// (dP_ij - D_i) q_i (KEYS) or dv_j = Σ_i P_ij dy_i.
// One accumulator row per launch: both at once spill registers at HD = 64
// (gpt2-124m). The k row (and, for dk, the v row) is in the row cache.
template <int HD, int BT, bool KEYS, typename T>
TK_BLOCK_FN void
tk_attention_grad_keys(TK_KERNEL_ARGS const tk_attention_shape &s, const T *q,
                       const T *k, const T *v, const float *lse, const T *dy,
                       T *out, const float *rowDots, T *cache, T *qt, T *dyt,
                       float *st) {
  TK_LOCAL_ROW(float, acc, HD);
  int64_t blocks = tk_attention_blocks(s, s.kv_heads, s.tk, TK_BLOCK_DIM);
  for (int64_t g = TK_BLOCK; g < blocks; g += TK_GRID_DIM) {
    tk_attention_rows at =
        tk_attention_rows_of(s, s.kv_heads, g, s.tk, TK_BLOCK_DIM);
    // The thread's rows: k (slot 0), and for dk v (slot 1), from the row
    // cache or memory.
    auto own = [&](int slot, int64_t thread, bool fill) {
      const tk_attention_layout &l =
          s.layout[slot ? TK_ATTENTION_V : TK_ATTENTION_K];
      int64_t row = tk_attention_at(l, at.first + thread, at.b, at.h, HD);
      return tk_attention_own<HD>(slot ? v : k, row, cache, slot, thread,
                                  TK_BLOCK_DIM, fill);
    };
    TK_PHASE
    if (at.first + TK_THREAD < s.tk) {
      own(0, TK_THREAD, true);
      if (KEYS)
        own(1, TK_THREAD, true);
      for (int d = 0; d < HD; ++d)
        TK_ROW(acc)[d] = 0.0f;
    }
    TK_END_PHASE
    // Causal, no query before the block's first key sees any of its keys.
    int64_t group = tk_attention_group(s);
    for (int64_t qh = at.h * group; qh < (at.h + 1) * group; ++qh) {
      for (int64_t q0 = s.causal ? at.first : 0; q0 < s.tq; q0 += BT) {
        int64_t n = s.tq - q0 < BT ? s.tq - q0 : BT;
        TK_PHASE
        tk_attention_load<HD>(s.layout[TK_ATTENTION_Q], q, at.b, qh, q0, n, qt,
                              TK_THREAD, TK_BLOCK_DIM);
        tk_attention_load<HD>(s.layout[TK_ATTENTION_DY], dy, at.b, qh, q0, n,
                              dyt, TK_THREAD, TK_BLOCK_DIM);
        for (int64_t e = TK_THREAD; e < n; e += TK_BLOCK_DIM) {
          int64_t r = tk_attention_stat(s, at, qh, q0 + e);
          st[2 * e] = lse[r];
          st[2 * e + 1] = rowDots[r];
        }
        TK_END_PHASE
        TK_PHASE
        int64_t j = at.first + TK_THREAD;
        if (j < s.tk) {
          auto kj = own(0, TK_THREAD, false);
          auto vj = KEYS ? own(1, TK_THREAD, false) : kj;
          int64_t from = s.causal && j > q0 ? j - q0 : 0;
          // Queries in pairs: both queries' dot products at once
          // (tk_attention_dot2; a product's operands commute exactly in an
          // fma), then each query's step in order. An odd last query pairs
          // with itself.
          constexpr int P = tk_attention_pairs<HD>::value ? 2 : 1;
          for (int64_t ii = from; ii < n; ii += P) {
            int64_t next = P == 2 && ii + 1 < n ? ii + 1 : ii;
            float dots[2], dps[2];
            tk_attention_dot2<HD>(kj, tk_attention_tile_row<HD>(qt + ii * HD),
                                  tk_attention_tile_row<HD>(qt + next * HD),
                                  next != ii, dots);
            if (KEYS)
              tk_attention_dot2<HD>(
                  vj, tk_attention_tile_row<HD>(dyt + ii * HD),
                  tk_attention_tile_row<HD>(dyt + next * HD), next != ii, dps);
            TK_UNROLL(P)
            for (int w = 0; w < P; ++w) {
              if (w == 1 && next == ii)
                break;
              int64_t u = ii + w;
              float p = tk_exp(dots[w] * s.scale - st[2 * u]);
              if (KEYS) {
                float ds = p * (dps[w] - st[2 * u + 1]) * s.scale;
                tk_attention_axpy<HD>(
                    ds, tk_attention_tile_row<HD>(qt + u * HD), TK_ROW(acc));
              } else {
                tk_attention_axpy<HD>(
                    p, tk_attention_tile_row<HD>(dyt + u * HD), TK_ROW(acc));
              }
            }
          }
        }
        TK_END_PHASE
      }
    }
    TK_PHASE
    int64_t j = at.first + TK_THREAD;
    if (j < s.tk)
      tk_attention_store<HD>(s.layout[KEYS ? TK_ATTENTION_DK : TK_ATTENTION_DV],
                             out, at, j, TK_ROW(acc));
    TK_END_PHASE
  }
}

} // namespace
