// Fused attention (AttentionPrelude.h), as block functions: a block takes
// rows of one head (queries for nn.attention and dq, keys for dk and dv),
// a thread each, and walks the other side in tiles its threads load into
// shared memory together. nn.attention is one kernel (online softmax, no
// Tq x Tk matrix); nn.attention_grad is three, dq and each query row's
// statistics (max, sum, rowsum(P dP)) in scratch, then dk and dv (one
// accumulator row per thread keeps registers unspilled). The backward
// kernels copy their own rows into a row cache. The shape (batch, heads,
// key and value heads, Tq, Tk, D, causal, scale) is an entry of the unit's
// table the programs index; the head dimension and the tile rows are template arguments.
// Everything shared fits CUDA's 48 KiB of static shared memory: blocks of
// 64 threads (else 32), tiles of 64 rows (down to 8), and no row cache
// when not even 32 threads' rows fit.
//
// RUN: tandem-translate %s --tandem-to-source --target cuda -o %t.cu
// RUN: FileCheck %s --input-file=%t.cu
// RUN: c++ -x c++ -std=c++17 -fsyntax-only -Wall -Werror %t.cu

// f32, heads of 8: two tiles of 64 rows, 4 KiB.
// CHECK: TK_KERNEL [[$FWD:tk_k[0-9a-f]+]](TK_KERNEL_ARGS tk_attention_shape s, const float *__restrict__ i0, const float *__restrict__ i1, const float *__restrict__ i2, float *__restrict__ o0) {
// CHECK-NEXT: // nn.attention: a query row per thread, tiles of 64
// CHECK-NEXT: TK_SHARED(float, tk_tile0, 512);
// CHECK-NEXT: TK_SHARED(float, tk_tile1, 512);
// CHECK-NEXT: tk_attention_forward<8, 64>(TK_LAUNCH_ARG s, i0, i1, i2, o0, tk_tile0, tk_tile1);

// bf16, heads of 16: everything fits the largest shape.
// CHECK: TK_KERNEL [[$ROWS:tk_k[0-9a-f]+]](TK_KERNEL_ARGS tk_attention_shape s, const tk_bf16 *__restrict__ i0, const tk_bf16 *__restrict__ i1, const tk_bf16 *__restrict__ i2, const tk_bf16 *__restrict__ i3, tk_bf16 *__restrict__ o0, float *__restrict__ st) {
// CHECK-NEXT: // nn.attention_grad: dq, a query row per thread, tiles of 64
// CHECK-NEXT: TK_SHARED(tk_bf16, tk_rows, 2048);
// CHECK-NEXT: TK_SHARED(tk_bf16, tk_tile0, 1024);
// CHECK-NEXT: TK_SHARED(tk_bf16, tk_tile1, 1024);
// CHECK-NEXT: tk_attention_grad_rows<16, 64>(TK_LAUNCH_ARG s, i0, i1, i2, i3, o0, st, tk_rows, tk_tile0, tk_tile1);
// CHECK: TK_KERNEL [[$DK:tk_k[0-9a-f]+]](TK_KERNEL_ARGS tk_attention_shape s, const tk_bf16 *__restrict__ i0, const tk_bf16 *__restrict__ i1, const tk_bf16 *__restrict__ i2, const tk_bf16 *__restrict__ i3, tk_bf16 *__restrict__ o0, const float *__restrict__ st) {
// CHECK-NEXT: // nn.attention_grad: dk, a key row per thread, tiles of 64
// CHECK-NEXT: TK_SHARED(tk_bf16, tk_rows, 2048);
// CHECK-NEXT: TK_SHARED(tk_bf16, tk_tile0, 1024);
// CHECK-NEXT: TK_SHARED(tk_bf16, tk_tile1, 1024);
// CHECK-NEXT: TK_SHARED(float, tk_tile_stats, 192);
// CHECK-NEXT: tk_attention_grad_keys<16, 64, true>(TK_LAUNCH_ARG s, i0, i1, i2, i3, o0, st, tk_rows, tk_tile0, tk_tile1, tk_tile_stats);
// CHECK: TK_KERNEL [[$DV:tk_k[0-9a-f]+]](TK_KERNEL_ARGS tk_attention_shape s, const tk_bf16 *__restrict__ i0, const tk_bf16 *__restrict__ i1, const tk_bf16 *__restrict__ i2, const tk_bf16 *__restrict__ i3, tk_bf16 *__restrict__ o0, const float *__restrict__ st) {
// CHECK-NEXT: // nn.attention_grad: dv, a key row per thread, tiles of 64
// CHECK-NEXT: TK_SHARED(tk_bf16, tk_rows, 1024);
// CHECK: tk_attention_grad_keys<16, 64, false>(TK_LAUNCH_ARG s, i0, i1, i2, i3, o0, st, tk_rows, tk_tile0, tk_tile1, tk_tile_stats);

// f32, heads of 64: dq's two cached rows (32 KiB) leave room for tiles of
// 32 (16 KiB); dk's tiles' statistics push it to tiles of 16; dv caches
// one row and takes tiles of 32.
// CHECK: TK_KERNEL [[$ROWS64:tk_k[0-9a-f]+]](
// CHECK-NEXT: // nn.attention_grad: dq, a query row per thread, tiles of 32
// CHECK-NEXT: TK_SHARED(float, tk_rows, 8192);
// CHECK-NEXT: TK_SHARED(float, tk_tile0, 2048);
// CHECK: TK_KERNEL [[$DK64:tk_k[0-9a-f]+]](
// CHECK-NEXT: // nn.attention_grad: dk, a key row per thread, tiles of 16
// CHECK-NEXT: TK_SHARED(float, tk_rows, 8192);
// CHECK-NEXT: TK_SHARED(float, tk_tile0, 1024);
// CHECK-NEXT: TK_SHARED(float, tk_tile1, 1024);
// CHECK-NEXT: TK_SHARED(float, tk_tile_stats, 48);
// CHECK: TK_KERNEL [[$DV64:tk_k[0-9a-f]+]](
// CHECK-NEXT: // nn.attention_grad: dv, a key row per thread, tiles of 32
// CHECK-NEXT: TK_SHARED(float, tk_rows, 4096);

// f32, heads of 256: not even 32 threads' rows fit, so every kernel reads
// its own rows from memory (nullptr) and takes tiles of 16 (32 KiB).
// CHECK: TK_KERNEL [[$ROWS256:tk_k[0-9a-f]+]](
// CHECK-NEXT: // nn.attention_grad: dq, a query row per thread, tiles of 16
// CHECK-NEXT: TK_SHARED(float, tk_tile0, 4096);
// CHECK-NEXT: TK_SHARED(float, tk_tile1, 4096);
// CHECK-NEXT: tk_attention_grad_rows<256, 16>(TK_LAUNCH_ARG s, i0, i1, i2, i3, o0, st, (float *)nullptr, tk_tile0, tk_tile1);
// CHECK: TK_KERNEL [[$DK256:tk_k[0-9a-f]+]](
// CHECK-NEXT: // nn.attention_grad: dk, a key row per thread, tiles of 16
// CHECK-NEXT: TK_SHARED(float, tk_tile0, 4096);
// CHECK: tk_attention_grad_keys<256, 16, true>(TK_LAUNCH_ARG s, i0, i1, i2, i3, o0, st, (float *)nullptr,
// CHECK: TK_KERNEL [[$DV256:tk_k[0-9a-f]+]](
// CHECK-NEXT: // nn.attention_grad: dv, a key row per thread, tiles of 16
// CHECK-NEXT: TK_SHARED(float, tk_tile0, 4096);
// CHECK: tk_attention_grad_keys<256, 16, false>(TK_LAUNCH_ARG s, i0, i1, i2, i3, o0, st, (float *)nullptr,

// CHECK: const tk_attention_shape tk_attention_shapes[] = {
// CHECK-NEXT: {2, 2, 2, 16, 16, 16, 1, (0x1.6a09e6p-2f)},
// CHECK-NEXT: {1, 4, 4, 5, 9, 64, 0, (0x1p-1f)},
// CHECK-NEXT: {2, 2, 2, 100, 100, 128, 1, (0x1p-3f)},
// CHECK-NEXT: {1, 1, 1, 40, 40, 256, 1, (0x1p-4f)},
// CHECK-NEXT: {2, 8, 2, 16, 16, 64, 1, (0x1.6a09e6p-2f)},
// CHECK-NEXT: };

// CHECK-LABEL: static const int64_t tandem_causal_program[] = {
// Two batches of two heads, 16 rows each: 4 blocks of 64.
// CHECK-NEXT: TK_OP_LAUNCH, [[$FWD]]_id, 4, 64, TK_ATTENTION_SHAPE(0), TK_ARG(0), TK_ARG(1), TK_ARG(2), TK_RESULT(0),
func.func @causal(%q: tensor<2x16x16xf32>, %k: tensor<2x16x16xf32>, %v: tensor<2x16x16xf32>) -> tensor<2x16x16xf32> {
  %y = nn.attention %q, %k, %v {causal, heads = 2 : i64} : tensor<2x16x16xf32>, tensor<2x16x16xf32>, tensor<2x16x16xf32> -> tensor<2x16x16xf32>
  return %y : tensor<2x16x16xf32>
}

// The rows' statistics in scratch, written by the first, read by the others.
// CHECK-LABEL: static const int64_t tandem_grad_program[] = {
// CHECK-NEXT: TK_OP_LAUNCH, [[$ROWS]]_id, 4, 64, TK_ATTENTION_SHAPE(1), TK_ARG(0), TK_ARG(1), TK_ARG(2), TK_ARG(3), TK_RESULT(0), TK_SCRATCH(0),
// CHECK-NEXT: TK_OP_LAUNCH, [[$DK]]_id, 4, 64, TK_ATTENTION_SHAPE(1), TK_ARG(0), TK_ARG(1), TK_ARG(2), TK_ARG(3), TK_RESULT(1), TK_SCRATCH(0),
// CHECK-NEXT: TK_OP_LAUNCH, [[$DV]]_id, 4, 64, TK_ATTENTION_SHAPE(1), TK_ARG(0), TK_ARG(1), TK_ARG(2), TK_ARG(3), TK_RESULT(2), TK_SCRATCH(0),
func.func @grad(%q: tensor<1x5x64xbf16>, %k: tensor<1x9x64xbf16>, %v: tensor<1x9x64xbf16>, %dy: tensor<1x5x64xbf16>) -> (tensor<1x5x64xbf16>, tensor<1x9x64xbf16>, tensor<1x9x64xbf16>) {
  %dq, %dk, %dv = nn.attention_grad %q, %k, %v, %dy {heads = 4 : i64, scale = 0.5 : f64} : tensor<1x5x64xbf16>, tensor<1x9x64xbf16>, tensor<1x9x64xbf16>, tensor<1x5x64xbf16> -> tensor<1x5x64xbf16>, tensor<1x9x64xbf16>, tensor<1x9x64xbf16>
  return %dq, %dk, %dv : tensor<1x5x64xbf16>, tensor<1x9x64xbf16>, tensor<1x9x64xbf16>
}

// Four heads of 100 rows: two blocks of 64 each.
// CHECK-LABEL: static const int64_t tandem_grad64_program[] = {
// CHECK-NEXT: TK_OP_LAUNCH, [[$ROWS64]]_id, 8, 64, TK_ATTENTION_SHAPE(2),
// CHECK-NEXT: TK_OP_LAUNCH, [[$DK64]]_id, 8, 64, TK_ATTENTION_SHAPE(2),
// CHECK-NEXT: TK_OP_LAUNCH, [[$DV64]]_id, 8, 64, TK_ATTENTION_SHAPE(2),
func.func @grad64(%q: tensor<2x100x128xf32>, %k: tensor<2x100x128xf32>, %v: tensor<2x100x128xf32>, %dy: tensor<2x100x128xf32>) -> (tensor<2x100x128xf32>, tensor<2x100x128xf32>, tensor<2x100x128xf32>) {
  %dq, %dk, %dv = nn.attention_grad %q, %k, %v, %dy {causal, heads = 2 : i64} : tensor<2x100x128xf32>, tensor<2x100x128xf32>, tensor<2x100x128xf32>, tensor<2x100x128xf32> -> tensor<2x100x128xf32>, tensor<2x100x128xf32>, tensor<2x100x128xf32>
  return %dq, %dk, %dv : tensor<2x100x128xf32>, tensor<2x100x128xf32>, tensor<2x100x128xf32>
}

// CHECK-LABEL: static const int64_t tandem_grad256_program[] = {
// CHECK-NEXT: TK_OP_LAUNCH, [[$ROWS256]]_id, 1, 64, TK_ATTENTION_SHAPE(3),
// CHECK-NEXT: TK_OP_LAUNCH, [[$DK256]]_id, 1, 64, TK_ATTENTION_SHAPE(3),
// CHECK-NEXT: TK_OP_LAUNCH, [[$DV256]]_id, 1, 64, TK_ATTENTION_SHAPE(3),
func.func @grad256(%q: tensor<1x40x256xf32>, %k: tensor<1x40x256xf32>, %v: tensor<1x40x256xf32>, %dy: tensor<1x40x256xf32>) -> (tensor<1x40x256xf32>, tensor<1x40x256xf32>, tensor<1x40x256xf32>) {
  %dq, %dk, %dv = nn.attention_grad %q, %k, %v, %dy {causal, heads = 1 : i64} : tensor<1x40x256xf32>, tensor<1x40x256xf32>, tensor<1x40x256xf32>, tensor<1x40x256xf32> -> tensor<1x40x256xf32>, tensor<1x40x256xf32>, tensor<1x40x256xf32>
  return %dq, %dk, %dv : tensor<1x40x256xf32>, tensor<1x40x256xf32>, tensor<1x40x256xf32>
}

// Grouped-query attention, 8 query heads of 8 on 2 key and value heads:
// the forward and dq kernels take blocks of query rows of the 8 heads (2
// batches x 8 heads x 1 block of 16 rows), dk and dv blocks of key rows of
// the 2 key and value heads (2 x 2), each walking its group's 4 query
// heads. The kernels are those of ungrouped heads of 8: the grouping is
// in the shape.
// CHECK-LABEL: static const int64_t tandem_grouped_program[] = {
// CHECK-NEXT: TK_OP_LAUNCH, [[$FWD]]_id, 16, 64, TK_ATTENTION_SHAPE(4), TK_ARG(0), TK_ARG(1), TK_ARG(2), TK_RESULT(0),
// CHECK-NEXT: TK_OP_LAUNCH, {{tk_k[0-9a-f]+}}_id, 16, 64, TK_ATTENTION_SHAPE(4), TK_ARG(0), TK_ARG(1), TK_ARG(2), TK_ARG(3), TK_RESULT(1), TK_SCRATCH(0),
// CHECK-NEXT: TK_OP_LAUNCH, {{tk_k[0-9a-f]+}}_id, 4, 64, TK_ATTENTION_SHAPE(4), TK_ARG(0), TK_ARG(1), TK_ARG(2), TK_ARG(3), TK_RESULT(2), TK_SCRATCH(0),
// CHECK-NEXT: TK_OP_LAUNCH, {{tk_k[0-9a-f]+}}_id, 4, 64, TK_ATTENTION_SHAPE(4), TK_ARG(0), TK_ARG(1), TK_ARG(2), TK_ARG(3), TK_RESULT(3), TK_SCRATCH(0),
func.func @grouped(%q: tensor<2x16x64xf32>, %k: tensor<2x16x16xf32>, %v: tensor<2x16x16xf32>, %dy: tensor<2x16x64xf32>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x16xf32>, tensor<2x16x16xf32>) {
  %y = nn.attention %q, %k, %v {causal, heads = 8 : i64, kv_heads = 2 : i64} : tensor<2x16x64xf32>, tensor<2x16x16xf32>, tensor<2x16x16xf32> -> tensor<2x16x64xf32>
  %dq, %dk, %dv = nn.attention_grad %q, %k, %v, %dy {causal, heads = 8 : i64, kv_heads = 2 : i64} : tensor<2x16x64xf32>, tensor<2x16x16xf32>, tensor<2x16x16xf32>, tensor<2x16x64xf32> -> tensor<2x16x64xf32>, tensor<2x16x16xf32>, tensor<2x16x16xf32>
  return %y, %dq, %dk, %dv : tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x16xf32>, tensor<2x16x16xf32>
}
