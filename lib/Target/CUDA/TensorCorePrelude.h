//===- TensorCorePrelude.h - tensor-core attention of generated CUDA -----===//
//
// Not a header of the compiler: pasted into every generated translation
// unit after AttentionPrelude.h (PreludeSource.h.in). The warp-level
// matrix multiply-add of the tensor cores (mma.sync m16n8k16, bf16 or f16
// operands, f32 accumulators) through the macro layer, and nn.attention
// and nn.attention_grad on it (docs/cuda-backend.md, "Tensor cores").
//
// An mma is a warp's collective: each lane holds pieces ("fragments") of
// A (16×16), B (16×8) and C (16×8) in registers, at the places the PTX ISA
// documents ("Matrix Fragments for mma.m16n8k16 with floating point
// type"; g = lane / 4, t = lane % 4):
//   A, 4 registers of 2 values: a_i at row g + 8·((i / 2) % 2), column
//     2t + i % 2 + 8·(i / 4), i = 0..7 (register i / 2, low half first);
//   B, 2 registers: b_i at row (k) 2t + i % 2 + 8·(i / 2), column g;
//   C and D, 4 floats: c_i at row g + 8·(i / 2), column 2t + i % 2.
// On the GPU a lane's code between collectives is its own (TK_LANES, no
// barrier: the warp's lanes run together and mma.sync waits for all 32);
// in the emulation TK_LANES is a loop over the block's threads like
// TK_PHASE, values that live across it are per-thread rows
// (TK_LOCAL_ROW), and TK_MMA and TK_QUAD_REDUCE run between such loops,
// gathering each warp's fragments at the documented places, multiplying
// and scattering the result back. So the emulation replays the layouts:
// a fragment at a wrong place gives a wrong product here too.
//
// What the emulation does not replay is the tensor core's own summation:
// it adds the 16 products to the accumulator in increasing k (the
// products of bf16 and f16 values are exact in f32), while the
// hardware adds them in an order and with an internal precision NVIDIA
// does not document. The GPU's results are then within the tolerance of
// the arithmetic, not its bits (as the GEMMs through cuBLASLt).
//
//===----------------------------------------------------------------------===//

#ifdef __CUDACC__
// Blocks of 128 threads (4 warps of 16 query rows), registers for one
// block a multiprocessor at least.
#define TK_TC_ATTENTION_KERNEL static __global__ void __launch_bounds__(128, 1)
#define TK_LANES {
#define TK_END_LANES }
#define TK_MMA(T, d, di, a, ai, b, bi)                                         \
  tk_mma<T>(&TK_ROW(d)[di], &TK_ROW(a)[ai], &TK_ROW(b)[bi])
#define TK_QUAD_REDUCE(Op, name, i)                                            \
  TK_ROW(name)[i] = tk_quad_reduce<Op>(TK_ROW(name)[i])
// A block function's parameter taking a TK_LOCAL_ROW (passed by name).
#define TK_ROWS_PARAM(type, name, n) type *name
#else
#define TK_TC_ATTENTION_KERNEL static void
#define TK_LANES TK_PHASE
#define TK_END_LANES TK_END_PHASE
#define TK_MMA(T, d, di, a, ai, b, bi)                                         \
  tk_mma_warps<T>(tk_l.blockDim, d, di, a, ai, b, bi)
#define TK_QUAD_REDUCE(Op, name, i) tk_quad_reduce<Op>(tk_l.blockDim, name, i)
#define TK_ROWS_PARAM(type, name, n) type(*name)[n]
#endif

namespace {

// The bits of two storage values in one register, the lower index in the
// low half (as a 32-bit load of two adjacent values gives them).
template <typename T> TK_HD uint32_t tk_pack(T lo, T hi) {
  return (uint32_t)lo.bits | ((uint32_t)hi.bits << 16);
}
template <typename T> TK_HD uint32_t tk_pack_floats(float lo, float hi);
template <> TK_HD uint32_t tk_pack_floats<tk_bf16>(float lo, float hi) {
  return tk_pack(tk_to_bf16(lo), tk_to_bf16(hi));
}
template <> TK_HD uint32_t tk_pack_floats<tk_f16>(float lo, float hi) {
  return tk_pack(tk_to_f16(lo), tk_to_f16(hi));
}
// Two adjacent values of a shared-memory tile at an even index: one 32-bit
// load on the GPU.
template <typename T> TK_HD uint32_t tk_pair(const T *p) {
#ifdef __CUDACC__
  return *reinterpret_cast<const uint32_t *>(p);
#else
  return tk_pack(p[0], p[1]);
#endif
}

// This lane's B fragments of an 8-column B, K steps of 16 deep, from
// shared memory holding B's columns as rows of `ld` values (column n at
// cols + n·ld, its k-th value at + k): lane (g, t) takes k = 2t, 2t + 1 and
// 2t + 8, 2t + 9 of column g, two adjacent pairs.
template <int K, typename T>
TK_HD void tk_mma_b(const T *cols, int64_t ld, int64_t lane, uint32_t *b) {
  const T *col = cols + lane / 4 * ld + lane % 4 * 2;
  TK_UNROLL(K)
  for (int kk = 0; kk < K; ++kk) {
    b[kk * 2] = tk_pair(col + kk * 16);
    b[kk * 2 + 1] = tk_pair(col + kk * 16 + 8);
  }
}

#ifdef __CUDACC__
template <typename T> struct tk_mma_type;
template <> struct tk_mma_type<tk_bf16> {
  static __device__ __forceinline__ void run(float *d, const uint32_t *a,
                                             const uint32_t *b) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]),
                   "r"(b[1]));
  }
};
template <> struct tk_mma_type<tk_f16> {
  static __device__ __forceinline__ void run(float *d, const uint32_t *a,
                                             const uint32_t *b) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]),
                   "r"(b[1]));
  }
};
// D += A·B for the warp: this lane's fragments.
template <typename T>
__device__ __forceinline__ void tk_mma(float *d, const uint32_t *a,
                                       const uint32_t *b) {
  tk_mma_type<T>::run(d, a, b);
}
// Op over the 4 lanes of a group (lanes 4g..4g+3, which hold a fragment
// row's columns), by the butterfly of offsets 1 and 2.
template <typename Op>
__device__ __forceinline__ float tk_quad_reduce(float v) {
  v = Op::apply(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return Op::apply(v, __shfl_xor_sync(0xffffffffu, v, 2));
}
#else
template <typename T> inline float tk_half(uint32_t r, int high) {
  return tk_widen(T{(uint16_t)(high ? r >> 16 : r & 0xffff)});
}
// Every warp's D += A·B from its lanes' fragments (rows di, ai and bi of
// the per-thread rows d, a and b), gathered and scattered at the
// documented places; the sum over k in increasing order, a product and
// an add each.
template <typename T, int ND, int NA, int NB>
inline void tk_mma_warps(int64_t threads, float (*d)[ND], int di,
                         uint32_t (*a)[NA], int ai, uint32_t (*b)[NB], int bi) {
  for (int64_t warp = 0; warp < threads; warp += 32) {
    float A[16][16], B[16][8], C[16][8];
    for (int lane = 0; lane < 32; ++lane) {
      int g = lane / 4, t = lane % 4;
      const uint32_t *ra = a[warp + lane] + ai, *rb = b[warp + lane] + bi;
      for (int i = 0; i < 8; ++i)
        A[g + 8 * ((i / 2) % 2)][2 * t + i % 2 + 8 * (i / 4)] =
            tk_half<T>(ra[i / 2], i % 2);
      for (int i = 0; i < 4; ++i)
        B[2 * t + i % 2 + 8 * (i / 2)][g] = tk_half<T>(rb[i / 2], i % 2);
      for (int i = 0; i < 4; ++i)
        C[g + 8 * (i / 2)][2 * t + i % 2] = d[warp + lane][di + i];
    }
    // A product of two bf16 or f16 values is exact in f32 (16 or 22
    // significant bits) unless below f32's normal range, so the product
    // and its sum round once, as an fma would, without a call per term.
    for (int r = 0; r < 16; ++r)
      for (int c = 0; c < 8; ++c)
        for (int k = 0; k < 16; ++k)
          C[r][c] = C[r][c] + A[r][k] * B[k][c];
    for (int lane = 0; lane < 32; ++lane) {
      int g = lane / 4, t = lane % 4;
      for (int i = 0; i < 4; ++i)
        d[warp + lane][di + i] = C[g + 8 * (i / 2)][2 * t + i % 2];
    }
  }
}
// tk_quad_reduce's butterfly over element i of every thread's row.
template <typename Op, int N>
inline void tk_quad_reduce(int64_t threads, float (*v)[N], int i) {
  for (int64_t quad = 0; quad < threads; quad += 4)
    for (int offset = 1; offset <= 2; offset *= 2) {
      float before[4];
      for (int lane = 0; lane < 4; ++lane)
        before[lane] = v[quad + lane][i];
      for (int lane = 0; lane < 4; ++lane)
        v[quad + lane][i] = Op::apply(before[lane], before[lane ^ offset]);
    }
}
#endif

// Whether a tensor's head rows start 16-byte aligned: its buffer and
// every offset and stride a whole number of 8 values.
template <typename T>
TK_HD bool tk_attention_vectors(const tk_attention_layout &l, const T *p) {
  return ((uintptr_t)p & 15) == 0 && l.offset % 8 == 0 && l.batch % 8 == 0 &&
         l.row % 8 == 0;
}

// Rows [r0, r0 + n) of head h in batch b of `src` (laid out as `l`) into
// the tensor-core kernels' tiles of BT rows: `rows` as BT rows of HD + 8
// values, `cols` transposed, HD rows of BT + 8 (either may be null); zeros
// past the n rows (a masked row's weight is 0, and 0 times a stale value
// could be NaN). 16 bytes a load where the tensor's rows are aligned, else
// a value; the tiles' bits are the same either way. One phase.
template <int HD, int BT, typename T>
TK_HD void tk_attention_tc_tile(const tk_attention_layout &l, const T *src,
                                int64_t b, int64_t h, int64_t r0, int64_t n,
                                T *rows, T *cols, int64_t thread,
                                int64_t threads) {
  constexpr int RLD = HD + 8, CLD = BT + 8;
  if (tk_attention_vectors(l, src)) {
    for (int64_t e = thread; e < BT * HD / 8; e += threads) {
      int64_t j = e / (HD / 8), d = e % (HD / 8) * 8;
      alignas(16) T x[8];
      if (j < n) {
        tk_load_vec<8>(src + tk_attention_at(l, r0 + j, b, h, HD) + d, x);
      } else {
        for (int i = 0; i < 8; ++i)
          x[i] = T{0};
      }
      if (rows)
        tk_store_vec<8>(rows + j * RLD + d, x);
      if (cols) {
        TK_UNROLL(8)
        for (int i = 0; i < 8; ++i)
          cols[(d + i) * CLD + j] = x[i];
      }
    }
    return;
  }
  for (int64_t e = thread; e < BT * HD; e += threads) {
    int64_t j = e / HD, d = e % HD;
    T x{0};
    if (j < n)
      x = src[tk_attention_at(l, r0 + j, b, h, HD) + d];
    if (rows)
      rows[j * RLD + d] = x;
    if (cols)
      cols[d * CLD + j] = x;
  }
}

// This lane's A fragments of 16 rows of head h in batch b of `src` (laid
// out as `l`), the warp's rows from `first`, HD / 16 steps of 16 columns;
// zeros for rows at or past `end`.
template <int HD, typename T>
TK_HD void tk_attention_tc_rows(const tk_attention_layout &l, const T *src,
                                int64_t b, int64_t h, int64_t first,
                                int64_t end, int64_t lane, uint32_t *a) {
  int64_t r0 = first + lane / 4, c0 = lane % 4 * 2;
  TK_UNROLL(HD / 16)
  for (int kk = 0; kk < HD / 16; ++kk)
    TK_UNROLL(4)
  for (int i = 0; i < 4; ++i) {
    // Register i: row g + 8 (i % 2), columns 16kk + 2t + 8 (i / 2), +1.
    int64_t r = r0 + 8 * (i % 2), c = kk * 16 + c0 + 8 * (i / 2);
    uint32_t w = 0;
    if (r < end) {
      int64_t row = tk_attention_at(l, r, b, h, HD);
      w = tk_pack(src[row + c], src[row + c + 1]);
    }
    a[kk * 4 + i] = w;
  }
}

// Whether the score at column `col` (of a tile's n) of row `r` is one the
// row sees: before the tile's end, and when causal, a key at or before
// the query (`keys`: the rows are queries and the columns keys; else the
// rows are keys and the columns queries).
TK_HD bool tk_attention_tc_visible(const tk_attention_shape &s, bool keys,
                                   int64_t r, int64_t c0, int64_t col,
                                   int64_t n) {
  if (col >= n)
    return false;
  if (!s.causal)
    return true;
  return keys ? c0 + col <= r : c0 + col >= r;
}

// This lane's A fragments of 16 rows × 16K columns from its C fragments
// of 2K tiles of 8 columns (`c`, 4 values a tile), rounded to T: register
// i of step kk holds rows g (i even) or g + 8, columns 16kk + 2t (i < 2)
// or + 8, the C tile 2kk + i / 2's values 2(i % 2) and + 1.
template <typename T, int K>
TK_HD void tk_attention_tc_pack(const float *c, uint32_t *a) {
  TK_UNROLL(K)
  for (int kk = 0; kk < K; ++kk)
    TK_UNROLL(4)
  for (int i = 0; i < 4; ++i) {
    const float *p = c + (2 * kk + i / 2) * 4 + 2 * (i % 2);
    a[kk * 4 + i] = tk_pack_floats<T>(p[0], p[1]);
  }
}

// This lane's C fragments `c` of 16 rows × HD of the warp (rows from
// `first`), times `factor`, into head h in batch b of `out` (laid out as
// `l`), rows before `end`.
template <int HD, typename T>
TK_HD void tk_attention_tc_store(const tk_attention_layout &l, T *out,
                                 int64_t b, int64_t h, int64_t first,
                                 int64_t end, int64_t lane, const float *c,
                                 float factor) {
  TK_UNROLL(2)
  for (int half = 0; half < 2; ++half) {
    int64_t r = first + lane / 4 + 8 * half;
    if (r >= end)
      continue;
    int64_t row = tk_attention_at(l, r, b, h, HD) + lane % 4 * 2;
    TK_UNROLL(HD / 8)
    for (int dn = 0; dn < HD / 8; ++dn)
      TK_UNROLL(2)
    for (int e = 0; e < 2; ++e)
      tk_store(out, row + dn * 8 + e, c[dn * 4 + 2 * half + e] * factor);
  }
}

// nn.attention, forward, on the tensor cores: a block takes 64 query rows
// of a head, a warp 16 of them, and walks the keys in tiles of BT (K as
// its rows, V transposed, so that every B fragment is one 32-bit load).
// Per tile, S = Q·Kᵀ (mma, f32), scaled and masked; the online softmax
// per row (its maximum over the row's 4 lanes); P = e^(S − max) rounded
// to T is the A fragment of O += P·V (a C fragment's two 8-column tiles
// are an A fragment's 16 columns, so P never leaves the registers). Each
// lane sums its own columns' P (in f32, unrounded) and the 4 lanes' sums
// are added at the end, as FlashAttention-2 does. HD a multiple of 16.
template <int HD, int BT, typename T>
TK_BLOCK_FN void
tk_attention_forward_tc(TK_KERNEL_ARGS const tk_attention_shape &s, const T *q,
                        const T *k, const T *v, T *y, float *lse, T *kt,
                        T *vt) {
  static_assert(HD % 16 == 0 && BT % 16 == 0, "whole mma tiles");
  constexpr int KS = HD / 16, DN = HD / 8, SN = BT / 8, PK = BT / 16;
  // Tile row strides, padded by 8 values (16 bytes): the 8 groups' 32-bit
  // loads of a fragment then fall in 32 different banks.
  constexpr int KLD = HD + 8, VLD = BT + 8;
  constexpr int64_t ROWS = 64;
  TK_LOCAL_ROW(uint32_t, qa, KS * 4); // Q's A fragments, per 16 columns
  TK_LOCAL_ROW(float, acc, DN * 4);   // O's C fragments, per 8 columns
  TK_LOCAL_ROW(float, sc, SN * 4);    // the tile's scores, per 8 keys
  TK_LOCAL_ROW(uint32_t, pa, PK * 4); // P's A fragments, per 16 keys
  TK_LOCAL_ROW(uint32_t, kb, KS * 2); // 8 keys' B fragments
  TK_LOCAL_ROW(uint32_t, vb, PK * 2); // 8 columns of V's B fragments
  // Rows g and g + 8: the running maximum, this lane's sum; a reduced
  // value.
  TK_LOCAL_ROW(float, st, 6);
  int64_t blocks = tk_attention_blocks(s, s.heads, s.tq, ROWS);
  for (int64_t blk = TK_BLOCK; blk < blocks; blk += TK_GRID_DIM) {
    tk_attention_rows at = tk_attention_rows_of(s, s.heads, blk, s.tq, ROWS);
    int64_t kvh = tk_attention_div(at.h, tk_attention_group(s));
    TK_LANES
    tk_attention_tc_rows<HD>(s.layout[TK_ATTENTION_Q], q, at.b, at.h,
                             at.first + TK_THREAD / 32 * 16, s.tq,
                             TK_THREAD % 32, TK_ROW(qa));
    TK_UNROLL(DN * 4)
    for (int i = 0; i < DN * 4; ++i)
      TK_ROW(acc)[i] = 0.0f;
    TK_UNROLL(2)
    for (int h = 0; h < 2; ++h) {
      TK_ROW(st)[h] = -INFINITY;
      TK_ROW(st)[2 + h] = 0.0f;
    }
    TK_END_LANES
    for (int64_t k0 = 0; k0 < at.keys; k0 += BT) {
      int64_t n = at.keys - k0 < BT ? at.keys - k0 : BT;
      // Every warp is done with the previous tile.
      TK_PHASE
      TK_END_PHASE
      TK_PHASE
      tk_attention_tc_tile<HD, BT>(s.layout[TK_ATTENTION_K], k, at.b, kvh, k0,
                                   n, kt, (T *)nullptr, TK_THREAD,
                                   TK_BLOCK_DIM);
      tk_attention_tc_tile<HD, BT>(s.layout[TK_ATTENTION_V], v, at.b, kvh, k0,
                                   n, (T *)nullptr, vt, TK_THREAD,
                                   TK_BLOCK_DIM);
      TK_END_PHASE
      // S = Q·Kᵀ, 8 keys at a time.
      TK_UNROLL(SN)
      for (int j = 0; j < SN; ++j) {
        TK_LANES
        tk_mma_b<KS>(kt + j * 8 * KLD, KLD, TK_THREAD % 32, TK_ROW(kb));
        TK_UNROLL(4)
        for (int i = 0; i < 4; ++i)
          TK_ROW(sc)[j * 4 + i] = 0.0f;
        TK_END_LANES
        TK_UNROLL(KS)
        for (int kk = 0; kk < KS; ++kk)
          TK_MMA(T, sc, j * 4, qa, kk * 4, kb, kk * 2);
      }
      // Scale, mask, and each row's maximum over this lane's columns.
      TK_LANES
      int64_t lane = TK_THREAD % 32;
      int64_t r0 = at.first + TK_THREAD / 32 * 16 + lane / 4;
      TK_UNROLL(2)
      for (int h = 0; h < 2; ++h) {
        float m = -INFINITY;
        TK_UNROLL(SN)
        for (int j = 0; j < SN; ++j)
          TK_UNROLL(2)
        for (int e = 0; e < 2; ++e) {
          int64_t col = j * 8 + lane % 4 * 2 + e;
          float x = tk_attention_tc_visible(s, true, r0 + 8 * h, k0, col, n)
                        ? TK_ROW(sc)[j * 4 + 2 * h + e] * s.scale
                        : -INFINITY;
          TK_ROW(sc)[j * 4 + 2 * h + e] = x;
          m = x > m ? x : m;
        }
        TK_ROW(st)[4 + h] = m;
      }
      TK_END_LANES
      TK_QUAD_REDUCE(tk_op_max, st, 4);
      TK_QUAD_REDUCE(tk_op_max, st, 5);
      // The online softmax: rescale what the row has so far when its
      // maximum grows, then P and its A fragments.
      TK_LANES
      TK_UNROLL(2)
      for (int h = 0; h < 2; ++h) {
        float old = TK_ROW(st)[h], top = TK_ROW(st)[4 + h];
        float next = top > old ? top : old;
        // A row with no visible key yet keeps a maximum of -inf and
        // nothing to rescale.
        float c = next == old ? 1.0f : tk_exp(old - next);
        TK_ROW(st)[h] = next;
        TK_ROW(st)[2 + h] *= c;
        TK_UNROLL(DN)
        for (int dn = 0; dn < DN; ++dn)
          TK_UNROLL(2)
        for (int e = 0; e < 2; ++e)
          TK_ROW(acc)[dn * 4 + 2 * h + e] *= c;
        TK_UNROLL(SN)
        for (int j = 0; j < SN; ++j)
          TK_UNROLL(2)
        for (int e = 0; e < 2; ++e) {
          float x = TK_ROW(sc)[j * 4 + 2 * h + e];
          float p = x == -INFINITY ? 0.0f : tk_exp(x - next);
          TK_ROW(sc)[j * 4 + 2 * h + e] = p;
          TK_ROW(st)[2 + h] += p;
        }
      }
      tk_attention_tc_pack<T, PK>(TK_ROW(sc), TK_ROW(pa));
      TK_END_LANES
      // O += P·V, 8 columns at a time.
      TK_UNROLL(DN)
      for (int dn = 0; dn < DN; ++dn) {
        TK_LANES
        tk_mma_b<PK>(vt + dn * 8 * VLD, VLD, TK_THREAD % 32, TK_ROW(vb));
        TK_END_LANES
        TK_UNROLL(PK)
        for (int kk = 0; kk < PK; ++kk)
          TK_MMA(T, acc, dn * 4, pa, kk * 4, vb, kk * 2);
      }
    }
    TK_LANES
    TK_ROW(st)[4] = TK_ROW(st)[2];
    TK_ROW(st)[5] = TK_ROW(st)[3];
    TK_END_LANES
    TK_QUAD_REDUCE(tk_op_add, st, 4);
    TK_QUAD_REDUCE(tk_op_add, st, 5);
    TK_LANES
    int64_t lane = TK_THREAD % 32;
    int64_t r0 = at.first + TK_THREAD / 32 * 16 + lane / 4, c0 = lane % 4 * 2;
    TK_UNROLL(2)
    for (int h = 0; h < 2; ++h) {
      int64_t r = r0 + 8 * h;
      if (r >= s.tq)
        continue;
      float sum = TK_ROW(st)[4 + h];
      int64_t row =
          tk_attention_at(s.layout[TK_ATTENTION_Y], r, at.b, at.h, HD);
      TK_UNROLL(DN)
      for (int dn = 0; dn < DN; ++dn)
        TK_UNROLL(2)
      for (int e = 0; e < 2; ++e)
        tk_store(y, row + dn * 8 + c0 + e,
                 TK_ROW(acc)[dn * 4 + 2 * h + e] / sum);
      if (lse && c0 == 0)
        lse[tk_attention_stat(s, at, at.h, r)] = TK_ROW(st)[h] + tk_log(sum);
    }
    TK_END_LANES
  }
}

// The backward's two products of a tile, 8 of its rows at a time: the
// scores c1 = a1·t1ᵀ and c2 = a2·t2ᵀ (a1, a2: the warp's rows' A
// fragments, KS steps of 16; t1, t2: tiles of SN·8 rows of LD values; kb:
// room for one group's B fragments). A block function: every thread of the
// block calls it.
template <int KS, int SN, int LD, typename T>
TK_BLOCK_FN void tk_attention_tc_products(TK_KERNEL_ARGS const T *t1,
                                          const T *t2,
                                          TK_ROWS_PARAM(uint32_t, a1, KS * 4),
                                          TK_ROWS_PARAM(uint32_t, a2, KS * 4),
                                          TK_ROWS_PARAM(float, c1, SN * 4),
                                          TK_ROWS_PARAM(float, c2, SN * 4),
                                          TK_ROWS_PARAM(uint32_t, kb, KS * 2)) {
  TK_UNROLL(SN)
  for (int j = 0; j < SN; ++j) {
    TK_LANES
    tk_mma_b<KS>(t1 + j * 8 * LD, LD, TK_THREAD % 32, TK_ROW(kb));
    TK_UNROLL(4)
    for (int i = 0; i < 4; ++i)
      TK_ROW(c1)[j * 4 + i] = TK_ROW(c2)[j * 4 + i] = 0.0f;
    TK_END_LANES
    TK_UNROLL(KS)
    for (int kk = 0; kk < KS; ++kk)
      TK_MMA(T, c1, j * 4, a1, kk * 4, kb, kk * 2);
    TK_LANES
    tk_mma_b<KS>(t2 + j * 8 * LD, LD, TK_THREAD % 32, TK_ROW(kb));
    TK_END_LANES
    TK_UNROLL(KS)
    for (int kk = 0; kk < KS; ++kk)
      TK_MMA(T, c2, j * 4, a2, kk * 4, kb, kk * 2);
  }
}

// nn.attention_grad on the tensor cores, part one (dq), a block of 4 warps
// taking 64 query rows of a head, a warp 16: D = dy·y per row (each lane
// a quarter of the row's columns in order, the 4 lanes' sums added by the
// butterfly), written to `rowDots` for part two; then over key tiles of
// BT: S = Q·Kᵀ and dP = dY·Vᵀ (mma), P = e^(S·scale − lse) and
// dS = P (dP − D) in f32, dS rounded to T as the A fragments of
// dQ += dS·K (K transposed in its third tile), dq = scale dQ.
template <int HD, int BT, typename T>
TK_BLOCK_FN void
tk_attention_grad_rows_tc(TK_KERNEL_ARGS const tk_attention_shape &s,
                          const T *q, const T *k, const T *v, const T *y,
                          const float *lse, const T *dy, T *dq, float *rowDots,
                          T *kt, T *vt, T *ktt) {
  static_assert(HD % 16 == 0 && BT % 16 == 0, "whole mma tiles");
  constexpr int KS = HD / 16, DN = HD / 8, SN = BT / 8, PK = BT / 16;
  constexpr int KLD = HD + 8, VLD = BT + 8;
  constexpr int64_t ROWS = 64;
  TK_LOCAL_ROW(uint32_t, qa, KS * 4); // Q's A fragments
  TK_LOCAL_ROW(uint32_t, da, KS * 4); // dY's A fragments
  TK_LOCAL_ROW(float, acc, DN * 4);   // dQ's C fragments
  TK_LOCAL_ROW(float, sc, SN * 4);    // S, then dS
  TK_LOCAL_ROW(float, dp, SN * 4);    // dP
  TK_LOCAL_ROW(uint32_t, pa, PK * 4); // dS's A fragments
  TK_LOCAL_ROW(uint32_t, kb, KS * 2); // 8 keys' B fragments
  TK_LOCAL_ROW(uint32_t, vb, PK * 2); // 8 columns of Kᵀ's B fragments
  // Rows g and g + 8: the log-sum-exp, D.
  TK_LOCAL_ROW(float, st, 4);
  int64_t blocks = tk_attention_blocks(s, s.heads, s.tq, ROWS);
  for (int64_t blk = TK_BLOCK; blk < blocks; blk += TK_GRID_DIM) {
    tk_attention_rows at = tk_attention_rows_of(s, s.heads, blk, s.tq, ROWS);
    int64_t kvh = tk_attention_div(at.h, tk_attention_group(s));
    TK_LANES
    int64_t lane = TK_THREAD % 32, first = at.first + TK_THREAD / 32 * 16;
    tk_attention_tc_rows<HD>(s.layout[TK_ATTENTION_Q], q, at.b, at.h, first,
                             s.tq, lane, TK_ROW(qa));
    tk_attention_tc_rows<HD>(s.layout[TK_ATTENTION_DY], dy, at.b, at.h, first,
                             s.tq, lane, TK_ROW(da));
    TK_UNROLL(DN * 4)
    for (int i = 0; i < DN * 4; ++i)
      TK_ROW(acc)[i] = 0.0f;
    TK_UNROLL(2)
    for (int h = 0; h < 2; ++h) {
      int64_t r = first + lane / 4 + 8 * h;
      float part = 0.0f, rowLse = 0.0f;
      if (r < s.tq) {
        rowLse = lse[tk_attention_stat(s, at, at.h, r)];
        int64_t ry = tk_attention_at(s.layout[TK_ATTENTION_Y], r, at.b, at.h,
                                     HD),
                rd = tk_attention_at(s.layout[TK_ATTENTION_DY], r, at.b, at.h,
                                     HD);
        for (int c = lane % 4 * (HD / 4); c < (lane % 4 + 1) * (HD / 4); ++c)
          part = tk_fma(tk_load(dy, rd + c), tk_load(y, ry + c), part);
      }
      TK_ROW(st)[h] = rowLse;
      TK_ROW(st)[2 + h] = part;
    }
    TK_END_LANES
    TK_QUAD_REDUCE(tk_op_add, st, 2);
    TK_QUAD_REDUCE(tk_op_add, st, 3);
    TK_LANES
    int64_t lane = TK_THREAD % 32;
    TK_UNROLL(2)
    for (int h = 0; h < 2; ++h) {
      int64_t r = at.first + TK_THREAD / 32 * 16 + lane / 4 + 8 * h;
      if (lane % 4 == 0 && r < s.tq)
        rowDots[tk_attention_stat(s, at, at.h, r)] = TK_ROW(st)[2 + h];
    }
    TK_END_LANES
    for (int64_t k0 = 0; k0 < at.keys; k0 += BT) {
      int64_t n = at.keys - k0 < BT ? at.keys - k0 : BT;
      TK_PHASE
      TK_END_PHASE
      TK_PHASE
      tk_attention_tc_tile<HD, BT>(s.layout[TK_ATTENTION_K], k, at.b, kvh, k0,
                                   n, kt, ktt, TK_THREAD, TK_BLOCK_DIM);
      tk_attention_tc_tile<HD, BT>(s.layout[TK_ATTENTION_V], v, at.b, kvh, k0,
                                   n, vt, (T *)nullptr, TK_THREAD,
                                   TK_BLOCK_DIM);
      TK_END_PHASE
      // S = Q·Kᵀ and dP = dY·Vᵀ.
      tk_attention_tc_products<KS, SN, KLD, T>(TK_LAUNCH_ARG kt, vt, qa, da, sc,
                                               dp, kb);
      TK_LANES
      int64_t lane = TK_THREAD % 32;
      int64_t r0 = at.first + TK_THREAD / 32 * 16 + lane / 4;
      TK_UNROLL(2)
      for (int h = 0; h < 2; ++h)
        TK_UNROLL(SN)
      for (int j = 0; j < SN; ++j)
        TK_UNROLL(2)
      for (int e = 0; e < 2; ++e) {
        int64_t col = j * 8 + lane % 4 * 2 + e;
        float &x = TK_ROW(sc)[j * 4 + 2 * h + e];
        float p = tk_attention_tc_visible(s, true, r0 + 8 * h, k0, col, n)
                      ? tk_exp(x * s.scale - TK_ROW(st)[h])
                      : 0.0f;
        x = p * (TK_ROW(dp)[j * 4 + 2 * h + e] - TK_ROW(st)[2 + h]);
      }
      tk_attention_tc_pack<T, PK>(TK_ROW(sc), TK_ROW(pa));
      TK_END_LANES
      // dQ += dS·K, 8 columns at a time.
      TK_UNROLL(DN)
      for (int dn = 0; dn < DN; ++dn) {
        TK_LANES
        tk_mma_b<PK>(ktt + dn * 8 * VLD, VLD, TK_THREAD % 32, TK_ROW(vb));
        TK_END_LANES
        TK_UNROLL(PK)
        for (int kk = 0; kk < PK; ++kk)
          TK_MMA(T, acc, dn * 4, pa, kk * 4, vb, kk * 2);
      }
    }
    TK_LANES
    int64_t lane = TK_THREAD % 32;
    tk_attention_tc_store<HD>(s.layout[TK_ATTENTION_DQ], dq, at.b, at.h,
                              at.first + TK_THREAD / 32 * 16, s.tq, lane,
                              TK_ROW(acc), s.scale);
    TK_END_LANES
  }
}

// nn.attention_grad on the tensor cores, part two (dk and dv), a block of
// 4 warps taking 64 key rows of a key and value head, a warp 16, over the
// query tiles of BT of each query head of its group in increasing order
// (from the block's first key when causal): Sᵀ = K·Qᵀ and dPᵀ = V·dYᵀ
// (mma), P and dS as in part one from the tile's rows' log-sum-exp and D
// (`stats`), then dV += Pᵀ·dY and dK += dSᵀ·Q with P and dS rounded to T
// (dY and Q transposed in the third and fourth tiles); dk = scale dK.
// Each output element has one writer: no atomics.
template <int HD, int BT, typename T>
TK_BLOCK_FN void
tk_attention_grad_keys_tc(TK_KERNEL_ARGS const tk_attention_shape &s,
                          const T *q, const T *k, const T *v, const float *lse,
                          const T *dy, T *dk, T *dv, const float *rowDots,
                          T *qt, T *dyt, T *qtt, T *dytt, float *stats) {
  static_assert(HD % 16 == 0 && BT % 16 == 0, "whole mma tiles");
  constexpr int KS = HD / 16, DN = HD / 8, SN = BT / 8, PK = BT / 16;
  constexpr int KLD = HD + 8, VLD = BT + 8;
  constexpr int64_t ROWS = 64;
  TK_LOCAL_ROW(uint32_t, ka, KS * 4);  // K's A fragments
  TK_LOCAL_ROW(uint32_t, va, KS * 4);  // V's A fragments
  TK_LOCAL_ROW(float, dka, DN * 4);    // dK's C fragments
  TK_LOCAL_ROW(float, dva, DN * 4);    // dV's C fragments
  TK_LOCAL_ROW(float, sc, SN * 4);     // Sᵀ, then P
  TK_LOCAL_ROW(float, dp, SN * 4);     // dPᵀ, then dS
  TK_LOCAL_ROW(uint32_t, pa, PK * 4);  // P's A fragments
  TK_LOCAL_ROW(uint32_t, dsa, PK * 4); // dS's A fragments
  TK_LOCAL_ROW(uint32_t, kb, KS * 2);  // 8 queries' B fragments
  TK_LOCAL_ROW(uint32_t, vb, PK * 2);  // 8 columns' B fragments
  int64_t groups = tk_attention_group(s);
  int64_t blocks = tk_attention_blocks(s, s.kv_heads, s.tk, ROWS);
  for (int64_t blk = TK_BLOCK; blk < blocks; blk += TK_GRID_DIM) {
    tk_attention_rows at = tk_attention_rows_of(s, s.kv_heads, blk, s.tk, ROWS);
    TK_LANES
    int64_t lane = TK_THREAD % 32, first = at.first + TK_THREAD / 32 * 16;
    tk_attention_tc_rows<HD>(s.layout[TK_ATTENTION_K], k, at.b, at.h, first,
                             s.tk, lane, TK_ROW(ka));
    tk_attention_tc_rows<HD>(s.layout[TK_ATTENTION_V], v, at.b, at.h, first,
                             s.tk, lane, TK_ROW(va));
    TK_UNROLL(DN * 4)
    for (int i = 0; i < DN * 4; ++i)
      TK_ROW(dka)[i] = TK_ROW(dva)[i] = 0.0f;
    TK_END_LANES
    for (int64_t hq = at.h * groups; hq < (at.h + 1) * groups; ++hq)
      for (int64_t q0 = s.causal ? at.first : 0; q0 < s.tq; q0 += BT) {
        int64_t n = s.tq - q0 < BT ? s.tq - q0 : BT;
        TK_PHASE
        TK_END_PHASE
        TK_PHASE
        tk_attention_tc_tile<HD, BT>(s.layout[TK_ATTENTION_Q], q, at.b, hq, q0,
                                     n, qt, qtt, TK_THREAD, TK_BLOCK_DIM);
        tk_attention_tc_tile<HD, BT>(s.layout[TK_ATTENTION_DY], dy, at.b, hq,
                                     q0, n, dyt, dytt, TK_THREAD, TK_BLOCK_DIM);
        for (int64_t i = TK_THREAD; i < BT; i += TK_BLOCK_DIM) {
          int64_t r = (at.b * s.heads + hq) * s.tq + q0 + i;
          stats[i] = i < n ? lse[r] : 0.0f;
          stats[BT + i] = i < n ? rowDots[r] : 0.0f;
        }
        TK_END_PHASE
        // Sᵀ = K·Qᵀ and dPᵀ = V·dYᵀ.
        tk_attention_tc_products<KS, SN, KLD, T>(TK_LAUNCH_ARG qt, dyt, ka, va,
                                                 sc, dp, kb);
        TK_LANES
        int64_t lane = TK_THREAD % 32;
        int64_t r0 = at.first + TK_THREAD / 32 * 16 + lane / 4;
        TK_UNROLL(2)
        for (int h = 0; h < 2; ++h)
          TK_UNROLL(SN)
        for (int j = 0; j < SN; ++j)
          TK_UNROLL(2)
        for (int e = 0; e < 2; ++e) {
          int64_t col = j * 8 + lane % 4 * 2 + e;
          float &x = TK_ROW(sc)[j * 4 + 2 * h + e];
          float &y = TK_ROW(dp)[j * 4 + 2 * h + e];
          float p = tk_attention_tc_visible(s, false, r0 + 8 * h, q0, col, n)
                        ? tk_exp(x * s.scale - stats[col])
                        : 0.0f;
          x = p;
          y = p * (y - stats[BT + col]);
        }
        tk_attention_tc_pack<T, PK>(TK_ROW(sc), TK_ROW(pa));
        tk_attention_tc_pack<T, PK>(TK_ROW(dp), TK_ROW(dsa));
        TK_END_LANES
        // dV += Pᵀ·dY and dK += dSᵀ·Q, 8 columns at a time.
        TK_UNROLL(DN)
        for (int dn = 0; dn < DN; ++dn) {
          TK_LANES
          tk_mma_b<PK>(dytt + dn * 8 * VLD, VLD, TK_THREAD % 32, TK_ROW(vb));
          TK_END_LANES
          TK_UNROLL(PK)
          for (int kk = 0; kk < PK; ++kk)
            TK_MMA(T, dva, dn * 4, pa, kk * 4, vb, kk * 2);
          TK_LANES
          tk_mma_b<PK>(qtt + dn * 8 * VLD, VLD, TK_THREAD % 32, TK_ROW(vb));
          TK_END_LANES
          TK_UNROLL(PK)
          for (int kk = 0; kk < PK; ++kk)
            TK_MMA(T, dka, dn * 4, dsa, kk * 4, vb, kk * 2);
        }
      }
    TK_LANES
    int64_t lane = TK_THREAD % 32, first = at.first + TK_THREAD / 32 * 16;
    tk_attention_tc_store<HD>(s.layout[TK_ATTENTION_DK], dk, at.b, at.h, first,
                              s.tk, lane, TK_ROW(dka), s.scale);
    tk_attention_tc_store<HD>(s.layout[TK_ATTENTION_DV], dv, at.b, at.h, first,
                              s.tk, lane, TK_ROW(dva), 1.0f);
    TK_END_LANES
  }
}

} // namespace
