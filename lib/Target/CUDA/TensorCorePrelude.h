//===- TensorCorePrelude.h - tensor-core attention of generated CUDA -----===//
//
// Not a header of the compiler: pasted into every generated translation
// unit after AttentionPrelude.h (PreludeSource.h.in). The warp-level
// matrix multiply-add of the tensor cores (mma.sync m16n8k16, bf16 or f16
// operands, f32 accumulators) through the macro layer, and nn.attention's
// forward pass on it (docs/cuda-backend.md, "Tensor cores").
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
// it adds the 16 products to the accumulator in increasing k, each an fma
// (the products of bf16 and f16 values are exact in f32), while the
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
#else
#define TK_TC_ATTENTION_KERNEL static void
#define TK_LANES TK_PHASE
#define TK_END_LANES TK_END_PHASE
#define TK_MMA(T, d, di, a, ai, b, bi)                                         \
  tk_mma_warps<T>(tk_l.blockDim, d, di, a, ai, b, bi)
#define TK_QUAD_REDUCE(Op, name, i) tk_quad_reduce<Op>(tk_l.blockDim, name, i)
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
// documented places; the sum over k in increasing order, an fma each.
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
    for (int r = 0; r < 16; ++r)
      for (int c = 0; c < 8; ++c)
        for (int k = 0; k < 16; ++k)
          C[r][c] = tk_fma(A[r][k], B[k][c], C[r][c]);
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

// Key and value rows [k0, k0 + n) of key and value head h in batch b into
// the tensor-core kernel's tiles: K as rows of KLD = HD + 8 values, V
// transposed, HD rows of VLD = BT + 8; zeros past the n rows (a masked
// key's probability is 0, and 0 times a stale value could be NaN). 8
// values (16 bytes) a load where both tensors' rows are aligned, else one;
// the tiles' bits are the same either way. One phase.
template <int HD, int BT, typename T>
TK_HD void tk_attention_tc_load(const tk_attention_shape &s, int64_t b,
                                int64_t h, int64_t k0, int64_t n, const T *k,
                                const T *v, T *kt, T *vt, int64_t thread,
                                int64_t threads) {
  constexpr int KLD = HD + 8, VLD = BT + 8;
  const tk_attention_layout &lk = s.layout[TK_ATTENTION_K],
                            &lv = s.layout[TK_ATTENTION_V];
  if (tk_attention_vectors(lk, k) && tk_attention_vectors(lv, v)) {
    for (int64_t e = thread; e < BT * HD / 8; e += threads) {
      int64_t j = e / (HD / 8), d = e % (HD / 8) * 8;
      alignas(16) T kx[8], vx[8];
      if (j < n) {
        tk_load_vec<8>(k + tk_attention_at(lk, k0 + j, b, h, HD) + d, kx);
        tk_load_vec<8>(v + tk_attention_at(lv, k0 + j, b, h, HD) + d, vx);
      } else {
        for (int i = 0; i < 8; ++i)
          kx[i] = vx[i] = T{0};
      }
      tk_store_vec<8>(kt + j * KLD + d, kx);
      TK_UNROLL(8)
      for (int i = 0; i < 8; ++i)
        vt[(d + i) * VLD + j] = vx[i];
    }
    return;
  }
  for (int64_t e = thread; e < BT * HD; e += threads) {
    int64_t j = e / HD, d = e % HD;
    T kx{0}, vx{0};
    if (j < n) {
      kx = k[tk_attention_at(lk, k0 + j, b, h, HD) + d];
      vx = v[tk_attention_at(lv, k0 + j, b, h, HD) + d];
    }
    kt[j * KLD + d] = kx;
    vt[d * VLD + j] = vx;
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
    int64_t lane = TK_THREAD % 32;
    int64_t r0 = at.first + TK_THREAD / 32 * 16 + lane / 4, c0 = lane % 4 * 2;
    TK_UNROLL(KS)
    for (int kk = 0; kk < KS; ++kk)
      TK_UNROLL(4)
    for (int i = 0; i < 4; ++i) {
      int64_t r = r0 + 8 * (i % 2), c = kk * 16 + c0 + 8 * (i / 2);
      uint32_t w = 0;
      if (r < s.tq) {
        int64_t row =
            tk_attention_at(s.layout[TK_ATTENTION_Q], r, at.b, at.h, HD);
        w = tk_pack(q[row + c], q[row + c + 1]);
      }
      TK_ROW(qa)[kk * 4 + i] = w;
    }
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
      tk_attention_tc_load<HD, BT>(s, at.b, kvh, k0, n, k, v, kt, vt, TK_THREAD,
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
        int64_t end = s.causal ? r0 + 8 * h + 1 - k0 : n;
        end = end < n ? end : n;
        float m = -INFINITY;
        TK_UNROLL(SN)
        for (int j = 0; j < SN; ++j)
          TK_UNROLL(2)
        for (int e = 0; e < 2; ++e) {
          int64_t col = j * 8 + lane % 4 * 2 + e;
          float x =
              col < end ? TK_ROW(sc)[j * 4 + 2 * h + e] * s.scale : -INFINITY;
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
      TK_UNROLL(PK)
      for (int kk = 0; kk < PK; ++kk)
        TK_UNROLL(4)
      for (int i = 0; i < 4; ++i) {
        // Register i: rows g (i even) or g + 8, keys 16kk + 2t (i < 2)
        // or + 8: the score tile 2kk + i / 2, its values 2(i % 2), +1.
        const float *p = &TK_ROW(sc)[(2 * kk + i / 2) * 4 + 2 * (i % 2)];
        TK_ROW(pa)[kk * 4 + i] = tk_pack_floats<T>(p[0], p[1]);
      }
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

} // namespace
