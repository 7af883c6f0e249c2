// Fused attention (AttentionPrelude.h): nn.attention is one kernel with a
// query row of a head per thread (online softmax, no Tq x Tk matrix);
// nn.attention_grad is three, dq and each query row's statistics (max,
// sum, rowsum(P dP)) in scratch, then dk and dv, each with a key row per
// thread (one accumulator row per thread keeps registers unspilled). The
// shape (batch, heads, Tq, Tk, D, causal, scale) is an entry of the unit's
// table the programs index; the head dimension is the template argument.
// The backward kernels copy their own rows (q and dy, k and v, k) into a
// row cache in static shared memory, with as many warps per block as fit
// in 48 KiB (at most 256 threads); when not one warp fits they read the
// rows from memory (nullptr) in blocks of 256.
//
// RUN: tandem-translate %s --tandem-to-source --target cuda -o %t.cu
// RUN: FileCheck %s --input-file=%t.cu
// RUN: c++ -x c++ -std=c++17 -fsyntax-only -Wall -Werror %t.cu

// CHECK: TK_KERNEL [[$FWD:tk_k[0-9a-f]+]](TK_KERNEL_ARGS tk_attention_shape s, const float *__restrict__ i0, const float *__restrict__ i1, const float *__restrict__ i2, float *__restrict__ o0) {
// CHECK-NEXT: // nn.attention: a query row per thread
// CHECK: r < 64;
// CHECK-NEXT: tk_attention_row<8>(s, i0, i1, i2, o0, r);
// CHECK: TK_KERNEL [[$ROWS:tk_k[0-9a-f]+]](TK_KERNEL_ARGS tk_attention_shape s, const tk_bf16 *__restrict__ i0, const tk_bf16 *__restrict__ i1, const tk_bf16 *__restrict__ i2, const tk_bf16 *__restrict__ i3, tk_bf16 *__restrict__ o0, float *__restrict__ st) {
// CHECK-NEXT: // nn.attention_grad: dq, a query row per thread
// CHECK-NEXT: TK_SHARED(tk_bf16, tk_rows, 8192);
// CHECK: r < 20;
// CHECK-NEXT: tk_attention_grad_row<16>(s, i0, i1, i2, i3, o0, st, tk_rows + TK_THREAD, TK_BLOCK_DIM, r);
// CHECK: TK_KERNEL [[$DK:tk_k[0-9a-f]+]](TK_KERNEL_ARGS tk_attention_shape s, const tk_bf16 *__restrict__ i0, const tk_bf16 *__restrict__ i1, const tk_bf16 *__restrict__ i2, const tk_bf16 *__restrict__ i3, tk_bf16 *__restrict__ o0, const float *__restrict__ st) {
// CHECK-NEXT: // nn.attention_grad: dk, a key row per thread
// CHECK-NEXT: TK_SHARED(tk_bf16, tk_rows, 8192);
// CHECK: r < 36;
// CHECK-NEXT: tk_attention_grad_column<16, true>(s, i0, i1, i2, i3, o0, st, tk_rows + TK_THREAD, TK_BLOCK_DIM, r);
// CHECK: TK_KERNEL [[$DV:tk_k[0-9a-f]+]](TK_KERNEL_ARGS tk_attention_shape s, const tk_bf16 *__restrict__ i0, const tk_bf16 *__restrict__ i1, const tk_bf16 *__restrict__ i2, const tk_bf16 *__restrict__ i3, tk_bf16 *__restrict__ o0, const float *__restrict__ st) {
// CHECK-NEXT: // nn.attention_grad: dv, a key row per thread
// CHECK-NEXT: TK_SHARED(tk_bf16, tk_rows, 4096);
// CHECK: r < 36;
// CHECK-NEXT: tk_attention_grad_column<16, false>(s, i0, i1, i2, i3, o0, st, tk_rows + TK_THREAD, TK_BLOCK_DIM, r);

// f32 rows of 64: 512 bytes a thread for two rows, three warps; 256 bytes
// for one, six warps.
// CHECK: TK_KERNEL [[$ROWS64:tk_k[0-9a-f]+]](
// CHECK-NEXT: // nn.attention_grad: dq, a query row per thread
// CHECK-NEXT: TK_SHARED(float, tk_rows, 12288);
// CHECK: TK_KERNEL [[$DK64:tk_k[0-9a-f]+]](
// CHECK-NEXT: // nn.attention_grad: dk, a key row per thread
// CHECK-NEXT: TK_SHARED(float, tk_rows, 12288);
// CHECK: TK_KERNEL [[$DV64:tk_k[0-9a-f]+]](
// CHECK-NEXT: // nn.attention_grad: dv, a key row per thread
// CHECK-NEXT: TK_SHARED(float, tk_rows, 12288);

// f32 rows of 256: two rows need 2 KiB a thread, more than 48 KiB a warp,
// so dq and dk read memory; dv's one row fits one warp.
// CHECK: TK_KERNEL [[$ROWS256:tk_k[0-9a-f]+]](
// CHECK-NEXT: // nn.attention_grad: dq, a query row per thread
// CHECK-NEXT: TK_PHASE
// CHECK: tk_attention_grad_row<256>(s, i0, i1, i2, i3, o0, st, (float *)nullptr, 0, r);
// CHECK: TK_KERNEL [[$DK256:tk_k[0-9a-f]+]](
// CHECK-NEXT: // nn.attention_grad: dk, a key row per thread
// CHECK-NEXT: TK_PHASE
// CHECK: tk_attention_grad_column<256, true>(s, i0, i1, i2, i3, o0, st, (float *)nullptr, 0, r);
// CHECK: TK_KERNEL [[$DV256:tk_k[0-9a-f]+]](
// CHECK-NEXT: // nn.attention_grad: dv, a key row per thread
// CHECK-NEXT: TK_SHARED(float, tk_rows, 8192);
// CHECK: tk_attention_grad_column<256, false>(s, i0, i1, i2, i3, o0, st, tk_rows + TK_THREAD, TK_BLOCK_DIM, r);

// CHECK: const tk_attention_shape tk_attention_shapes[] = {
// CHECK-NEXT: {2, 2, 16, 16, 16, 1, (0x1.6a09e6p-2f)},
// CHECK-NEXT: {1, 4, 5, 9, 64, 0, (0x1p-1f)},
// CHECK-NEXT: {2, 2, 100, 100, 128, 1, (0x1p-3f)},
// CHECK-NEXT: {1, 1, 40, 40, 256, 1, (0x1p-4f)},
// CHECK-NEXT: };

// CHECK-LABEL: static const int64_t tandem_causal_program[] = {
// CHECK-NEXT: TK_OP_LAUNCH, [[$FWD]]_id, 1, 256, TK_ATTENTION_SHAPE(0), TK_ARG(0), TK_ARG(1), TK_ARG(2), TK_RESULT(0),
func.func @causal(%q: tensor<2x16x16xf32>, %k: tensor<2x16x16xf32>, %v: tensor<2x16x16xf32>) -> tensor<2x16x16xf32> {
  %y = nn.attention %q, %k, %v {causal, heads = 2 : i64} : tensor<2x16x16xf32>, tensor<2x16x16xf32>, tensor<2x16x16xf32> -> tensor<2x16x16xf32>
  return %y : tensor<2x16x16xf32>
}

// The rows' statistics in scratch, written by the first, read by the others.
// CHECK-LABEL: static const int64_t tandem_grad_program[] = {
// CHECK-NEXT: TK_OP_LAUNCH, [[$ROWS]]_id, 1, 256, TK_ATTENTION_SHAPE(1), TK_ARG(0), TK_ARG(1), TK_ARG(2), TK_ARG(3), TK_RESULT(0), TK_SCRATCH(0),
// CHECK-NEXT: TK_OP_LAUNCH, [[$DK]]_id, 1, 256, TK_ATTENTION_SHAPE(1), TK_ARG(0), TK_ARG(1), TK_ARG(2), TK_ARG(3), TK_RESULT(1), TK_SCRATCH(0),
// CHECK-NEXT: TK_OP_LAUNCH, [[$DV]]_id, 1, 256, TK_ATTENTION_SHAPE(1), TK_ARG(0), TK_ARG(1), TK_ARG(2), TK_ARG(3), TK_RESULT(2), TK_SCRATCH(0),
func.func @grad(%q: tensor<1x5x64xbf16>, %k: tensor<1x9x64xbf16>, %v: tensor<1x9x64xbf16>, %dy: tensor<1x5x64xbf16>) -> (tensor<1x5x64xbf16>, tensor<1x9x64xbf16>, tensor<1x9x64xbf16>) {
  %dq, %dk, %dv = nn.attention_grad %q, %k, %v, %dy {heads = 4 : i64, scale = 0.5 : f64} : tensor<1x5x64xbf16>, tensor<1x9x64xbf16>, tensor<1x9x64xbf16>, tensor<1x5x64xbf16> -> tensor<1x5x64xbf16>, tensor<1x9x64xbf16>, tensor<1x9x64xbf16>
  return %dq, %dk, %dv : tensor<1x5x64xbf16>, tensor<1x9x64xbf16>, tensor<1x9x64xbf16>
}

// 400 query rows in blocks of 96 threads, 400 key rows in blocks of 96 (dk)
// and 192 (dv).
// CHECK-LABEL: static const int64_t tandem_grad64_program[] = {
// CHECK-NEXT: TK_OP_LAUNCH, [[$ROWS64]]_id, 5, 96, TK_ATTENTION_SHAPE(2),
// CHECK-NEXT: TK_OP_LAUNCH, [[$DK64]]_id, 5, 96, TK_ATTENTION_SHAPE(2),
// CHECK-NEXT: TK_OP_LAUNCH, [[$DV64]]_id, 3, 192, TK_ATTENTION_SHAPE(2),
func.func @grad64(%q: tensor<2x100x128xf32>, %k: tensor<2x100x128xf32>, %v: tensor<2x100x128xf32>, %dy: tensor<2x100x128xf32>) -> (tensor<2x100x128xf32>, tensor<2x100x128xf32>, tensor<2x100x128xf32>) {
  %dq, %dk, %dv = nn.attention_grad %q, %k, %v, %dy {causal, heads = 2 : i64} : tensor<2x100x128xf32>, tensor<2x100x128xf32>, tensor<2x100x128xf32>, tensor<2x100x128xf32> -> tensor<2x100x128xf32>, tensor<2x100x128xf32>, tensor<2x100x128xf32>
  return %dq, %dk, %dv : tensor<2x100x128xf32>, tensor<2x100x128xf32>, tensor<2x100x128xf32>
}

// CHECK-LABEL: static const int64_t tandem_grad256_program[] = {
// CHECK-NEXT: TK_OP_LAUNCH, [[$ROWS256]]_id, 1, 256, TK_ATTENTION_SHAPE(3),
// CHECK-NEXT: TK_OP_LAUNCH, [[$DK256]]_id, 1, 256, TK_ATTENTION_SHAPE(3),
// CHECK-NEXT: TK_OP_LAUNCH, [[$DV256]]_id, 2, 32, TK_ATTENTION_SHAPE(3),
func.func @grad256(%q: tensor<1x40x256xf32>, %k: tensor<1x40x256xf32>, %v: tensor<1x40x256xf32>, %dy: tensor<1x40x256xf32>) -> (tensor<1x40x256xf32>, tensor<1x40x256xf32>, tensor<1x40x256xf32>) {
  %dq, %dk, %dv = nn.attention_grad %q, %k, %v, %dy {causal, heads = 1 : i64} : tensor<1x40x256xf32>, tensor<1x40x256xf32>, tensor<1x40x256xf32>, tensor<1x40x256xf32> -> tensor<1x40x256xf32>, tensor<1x40x256xf32>, tensor<1x40x256xf32>
  return %dq, %dk, %dv : tensor<1x40x256xf32>, tensor<1x40x256xf32>, tensor<1x40x256xf32>
}
