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
// the output rescaled when the maximum grows); the backward pass
// recomputes the probabilities from each row's maximum and sum.
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
// cache in shared memory (element d of thread t's row at d·blockDim + t,
// so a warp's loads of element d are 32 adjacent words); only the thread
// that wrote a row reads it. Tiles are read by every thread at the same
// address (broadcasts). The shapes of both are template arguments the
// emitter picks to fit 48 KiB of static shared memory.
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

// The tensors whose layouts a shape holds: q, k, v, then y (forward) or dy
// (backward), then dq, dk, dv.
enum : int {
  TK_ATTENTION_Q,
  TK_ATTENTION_K,
  TK_ATTENTION_V,
  TK_ATTENTION_Y,
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

// Element d of a row: in memory or a tile (stride 1) or in the row cache
// (stride blockDim), widened to f32 exactly.
template <typename T> struct tk_row {
  const T *p;
  int64_t stride;
  TK_HD float operator[](int64_t d) const { return tk_load(p, d * stride); }
};

// A thread's own row `row` of `src` (HD elements) as the kernel reads it:
// from slot `slot` of the thread's row cache when the kernel has one
// (`cache`; element d of thread t at (slot·HD + d)·threads + t), else from
// memory. With `fill`, the row is first copied into the cache.
template <int HD, typename T>
TK_HD tk_row<T> tk_attention_own(const T *src, int64_t row, T *cache, int slot,
                                 int64_t thread, int64_t threads,
                                 bool fill = false) {
  if (!cache)
    return {src + row, 1};
  T *dst = cache + (int64_t)slot * HD * threads + thread;
  for (int d = 0; fill && d < HD; ++d)
    dst[d * threads] = src[row + d];
  return {dst, threads};
}

// The chain q·k over HD elements in increasing index, one fma each.
template <int HD, typename T>
TK_HD float tk_attention_dot(const tk_row<T> &a, const tk_row<T> &b) {
  float dot = 0.0f;
  // Unrolled fully, the loads of all HD pairs are hoisted into registers.
  TK_UNROLL(4)
  for (int d = 0; d < HD; ++d)
    dot = tk_fma(a[d], b[d], dot);
  return dot;
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

// nn.attention: y = softmax(q·kᵀ·scale)·v over the visible keys (j <= i
// when causal), a query row per thread, key tiles of BT rows.
template <int HD, int BT, typename T>
TK_BLOCK_FN void
tk_attention_forward(TK_KERNEL_ARGS const tk_attention_shape &s, const T *q,
                     const T *k, const T *v, T *y, T *kt, T *vt) {
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
      tk_attention_load<HD>(s.layout[TK_ATTENTION_K], k, at.b, kvh, k0, n, kt,
                            TK_THREAD, TK_BLOCK_DIM);
      tk_attention_load<HD>(s.layout[TK_ATTENTION_V], v, at.b, kvh, k0, n, vt,
                            TK_THREAD, TK_BLOCK_DIM);
      TK_END_PHASE
      TK_PHASE
      int64_t i = at.first + TK_THREAD;
      int64_t visible = s.causal ? i + 1 - k0 : n;
      int64_t end = i < s.tq ? (visible < n ? visible : n) : 0;
      for (int64_t j = 0; j < end; ++j) {
        float dot = 0.0f;
        for (int d = 0; d < HD; ++d)
          dot = tk_fma(TK_ROW(qi)[d], tk_load(kt, j * HD + d), dot);
        float score = dot * s.scale;
        if (score > TK_AT(rowMax)) {
          // Everything so far was weighted by e^{-max}: move it to e^{-score}.
          float c = tk_exp(TK_AT(rowMax) - score);
          TK_AT(sum) *= c;
          for (int d = 0; d < HD; ++d)
            TK_ROW(acc)[d] *= c;
          TK_AT(rowMax) = score;
        }
        float p = tk_exp(score - TK_AT(rowMax));
        TK_AT(sum) += p;
        for (int d = 0; d < HD; ++d)
          TK_ROW(acc)[d] = tk_fma(p, tk_load(vt, j * HD + d), TK_ROW(acc)[d]);
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
    }
    TK_END_PHASE
  }
}

// nn.attention_grad, part one, a query row i per thread: the row's maximum
// and sum of e^{score - max} (two passes over the keys), D = Σ_j P_ij dP_ij
// with dP_ij = dy_i·v_j, and dq_i = scale Σ_j P_ij (dP_ij - D) k_j. The
// statistics go to `stats` (max, sum, D per row) for part two. The q and
// dy rows are in the row cache (`cache`, or memory when null), dq's row in
// registers.
template <int HD, int BT, typename T>
TK_BLOCK_FN void
tk_attention_grad_rows(TK_KERNEL_ARGS const tk_attention_shape &s, const T *q,
                       const T *k, const T *v, const T *dy, T *dq, float *stats,
                       T *cache, T *kt, T *vt) {
  TK_LOCAL_ROW(float, acc, HD);
  TK_LOCAL(float, rowMax);
  TK_LOCAL(float, sum);
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
          s.layout[slot ? TK_ATTENTION_Y : TK_ATTENTION_Q];
      int64_t row = tk_attention_at(l, at.first + thread, at.b, at.h, HD);
      return tk_attention_own<HD>(slot ? dy : q, row, cache, slot, thread,
                                  TK_BLOCK_DIM, fill);
    };
    TK_PHASE
    if (at.first + TK_THREAD < s.tq) {
      own(0, TK_THREAD, true);
      own(1, TK_THREAD, true);
      for (int d = 0; d < HD; ++d)
        TK_ROW(acc)[d] = 0.0f;
      TK_AT(rowMax) = -INFINITY;
      TK_AT(sum) = 0.0f;
      TK_AT(rowDot) = 0.0f;
    }
    TK_END_PHASE
    // Pass 0: the maximum; 1: the sum; 2: D; 3: dq.
    for (int pass = 0; pass < 4; ++pass) {
      for (int64_t k0 = 0; k0 < at.keys; k0 += BT) {
        int64_t n = at.keys - k0 < BT ? at.keys - k0 : BT;
        TK_PHASE
        tk_attention_load<HD>(s.layout[TK_ATTENTION_K], k, at.b, kvh, k0, n, kt,
                              TK_THREAD, TK_BLOCK_DIM);
        if (pass >= 2)
          tk_attention_load<HD>(s.layout[TK_ATTENTION_V], v, at.b, kvh, k0, n,
                                vt, TK_THREAD, TK_BLOCK_DIM);
        TK_END_PHASE
        TK_PHASE
        int64_t i = at.first + TK_THREAD;
        int64_t visible = s.causal ? i + 1 - k0 : n;
        int64_t end = i < s.tq ? (visible < n ? visible : n) : 0;
        tk_row<T> qi = own(0, TK_THREAD, false);
        tk_row<T> dyi = own(1, TK_THREAD, false);
        for (int64_t j = 0; j < end; ++j) {
          tk_row<T> kj = {kt + j * HD, 1}, vj = {vt + j * HD, 1};
          float score = tk_attention_dot<HD>(qi, kj) * s.scale;
          if (pass == 0) {
            TK_AT(rowMax) = tk_op_max::apply(TK_AT(rowMax), score);
            continue;
          }
          if (pass == 1) {
            TK_AT(sum) += tk_exp(score - TK_AT(rowMax));
            continue;
          }
          float p = tk_exp(score - TK_AT(rowMax)) / TK_AT(sum);
          float dp = tk_attention_dot<HD>(dyi, vj);
          if (pass == 2) {
            TK_AT(rowDot) = tk_fma(p, dp, TK_AT(rowDot));
            continue;
          }
          float ds = p * (dp - TK_AT(rowDot)) * s.scale;
          for (int d = 0; d < HD; ++d)
            TK_ROW(acc)[d] = tk_fma(ds, kj[d], TK_ROW(acc)[d]);
        }
        TK_END_PHASE
      }
    }
    TK_PHASE
    int64_t i = at.first + TK_THREAD;
    if (i < s.tq) {
      tk_attention_store<HD>(s.layout[TK_ATTENTION_DQ], dq, at, i, TK_ROW(acc));
      int64_t r = (at.b * s.heads + at.h) * s.tq + i;
      stats[3 * r] = TK_AT(rowMax);
      stats[3 * r + 1] = TK_AT(sum);
      stats[3 * r + 2] = TK_AT(rowDot);
    }
    TK_END_PHASE
  }
}

// nn.attention_grad, part two, a key row j of a key and value head per
// thread: over the query heads of its group in increasing order, and in
// each over the queries that see key j (i >= j when causal), in query
// tiles of BT rows with their statistics, P_ij and dP_ij recomputed as part
// one computed them, dk_j = scale Σ_i P_ij (dP_ij - D_i) q_i (KEYS) or
// dv_j = Σ_i P_ij dy_i.
// One accumulator row per launch: both at once spill registers at HD = 64
// (gpt2-124m). The k row (and, for dk, the v row) is in the row cache.
template <int HD, int BT, bool KEYS, typename T>
TK_BLOCK_FN void
tk_attention_grad_keys(TK_KERNEL_ARGS const tk_attention_shape &s, const T *q,
                       const T *k, const T *v, const T *dy, T *out,
                       const float *stats, T *cache, T *qt, T *dyt, float *st) {
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
        tk_attention_load<HD>(s.layout[TK_ATTENTION_Y], dy, at.b, qh, q0, n,
                              dyt, TK_THREAD, TK_BLOCK_DIM);
        for (int64_t e = TK_THREAD; e < 3 * n; e += TK_BLOCK_DIM)
          st[e] = stats[3 * ((at.b * s.heads + qh) * s.tq + q0) + e];
        TK_END_PHASE
        TK_PHASE
        int64_t j = at.first + TK_THREAD;
        if (j < s.tk) {
          tk_row<T> kj = own(0, TK_THREAD, false);
          tk_row<T> vj = KEYS ? own(1, TK_THREAD, false) : kj;
          int64_t from = s.causal && j > q0 ? j - q0 : 0;
          for (int64_t ii = from; ii < n; ++ii) {
            tk_row<T> qi = {qt + ii * HD, 1}, dyi = {dyt + ii * HD, 1};
            float p =
                tk_exp(tk_attention_dot<HD>(qi, kj) * s.scale - st[3 * ii]) /
                st[3 * ii + 1];
            if (KEYS) {
              float dp = tk_attention_dot<HD>(dyi, vj);
              float ds = p * (dp - st[3 * ii + 2]) * s.scale;
              for (int d = 0; d < HD; ++d)
                TK_ROW(acc)[d] = tk_fma(ds, qi[d], TK_ROW(acc)[d]);
            } else {
              for (int d = 0; d < HD; ++d)
                TK_ROW(acc)[d] = tk_fma(p, dyi[d], TK_ROW(acc)[d]);
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
