// Fused attention on the CUDA cores (AttentionPrelude.h), every case here
// through --cuda-attention=fused-cuda-cores (by default bf16 and f16 heads
// of a multiple of 16 take the tensor cores: attention-tensor-cores.mlir),
// as block functions: a block takes rows of one head (queries for
// nn.attention and dq, keys for dk and dv), a thread each, and walks the
// other side in tiles its threads load into shared memory together. nn.attention is one kernel (online softmax, no
// Tq x Tk matrix), writing each row's log-sum-exp when the op has that
// result; nn.attention_grad is three: dq, which also writes each query
// row's D = dy·y to scratch, then dk and dv (one accumulator row per
// thread keeps registers unspilled), which read the rows' log-sum-exp and
// D with their query tiles. The backward kernels copy their own rows into
// a row cache. The shape (batch, heads, key and value heads, Tq, Tk, D,
// causal, scale, and where each row tensor is: q, k, v, y, then dy, dq,
// dk, dv, each {offset, batch stride, row stride} in elements) is an entry
// of the unit's table the programs index; the head dimension and the tile
// rows are template arguments. Everything shared fits CUDA's 48 KiB of
// static shared memory: blocks of 64 threads (else 32), tiles of 64 rows
// (down to 8), and no row cache when not even 32 threads' rows fit. The
// kernels are TK_ATTENTION_KERNELs (launch bounds of 64 threads and one
// block: ptxas does not trade spills for occupancy; the copies stay
// TK_KERNELs).
//
// RUN: tandem-translate %s --tandem-to-source --target cuda --cuda-attention=fused-cuda-cores -o %t.cu
// RUN: FileCheck %s --input-file=%t.cu
// RUN: c++ -x c++ -std=c++17 -fsyntax-only -Wall -Werror %t.cu

// f32, heads of 8: two tiles of 64 rows, 4 KiB; no log-sum-exp result, so
// a null pointer for it.
// CHECK: TK_ATTENTION_KERNEL [[$FWD:tk_k[0-9a-f]+]](TK_KERNEL_ARGS tk_attention_shape s, const float *__restrict__ p0, const float *__restrict__ p1, const float *__restrict__ p2, float *__restrict__ p3) {
// CHECK-NEXT: // nn.attention: a query row per thread, tiles of 64
// CHECK-NEXT: TK_SHARED(float, tk_tile0, 512);
// CHECK-NEXT: TK_SHARED(float, tk_tile1, 512);
// CHECK-NEXT: tk_attention_forward<8, 64>(TK_LAUNCH_ARG s, p0, p1, p2, p3, (float *)nullptr, tk_tile0, tk_tile1);

// bf16, heads of 16: everything fits the largest shape. dq takes q, k, v,
// y, the log-sum-exp (f32), dy, then writes dq and D.
// CHECK: TK_ATTENTION_KERNEL [[$ROWS:tk_k[0-9a-f]+]](TK_KERNEL_ARGS tk_attention_shape s, const tk_bf16 *__restrict__ p0, const tk_bf16 *__restrict__ p1, const tk_bf16 *__restrict__ p2, const tk_bf16 *__restrict__ p3, const float *__restrict__ p4, const tk_bf16 *__restrict__ p5, tk_bf16 *__restrict__ p6, float *__restrict__ p7) {
// CHECK-NEXT: // nn.attention_grad: dq, a query row per thread, tiles of 64
// CHECK-NEXT: TK_SHARED(tk_bf16, tk_rows, 2048);
// CHECK-NEXT: TK_SHARED(tk_bf16, tk_tile0, 1024);
// CHECK-NEXT: TK_SHARED(tk_bf16, tk_tile1, 1024);
// CHECK-NEXT: tk_attention_grad_rows<16, 64>(TK_LAUNCH_ARG s, p0, p1, p2, p3, p4, p5, p6, p7, tk_rows, tk_tile0, tk_tile1);
// dk and dv take q, k, v, the log-sum-exp, dy, their result and D.
// CHECK: TK_ATTENTION_KERNEL [[$DK:tk_k[0-9a-f]+]](TK_KERNEL_ARGS tk_attention_shape s, const tk_bf16 *__restrict__ p0, const tk_bf16 *__restrict__ p1, const tk_bf16 *__restrict__ p2, const float *__restrict__ p3, const tk_bf16 *__restrict__ p4, tk_bf16 *__restrict__ p5, const float *__restrict__ p6) {
// CHECK-NEXT: // nn.attention_grad: dk, a key row per thread, tiles of 64
// CHECK-NEXT: TK_SHARED(tk_bf16, tk_rows, 2048);
// CHECK-NEXT: TK_SHARED(tk_bf16, tk_tile0, 1024);
// CHECK-NEXT: TK_SHARED(tk_bf16, tk_tile1, 1024);
// CHECK-NEXT: TK_SHARED(float, tk_tile_stats, 128);
// CHECK-NEXT: tk_attention_grad_keys<16, 64, true>(TK_LAUNCH_ARG s, p0, p1, p2, p3, p4, p5, p6, tk_rows, tk_tile0, tk_tile1, tk_tile_stats);
// CHECK: TK_ATTENTION_KERNEL [[$DV:tk_k[0-9a-f]+]](TK_KERNEL_ARGS tk_attention_shape s, const tk_bf16 *__restrict__ p0, const tk_bf16 *__restrict__ p1, const tk_bf16 *__restrict__ p2, const float *__restrict__ p3, const tk_bf16 *__restrict__ p4, tk_bf16 *__restrict__ p5, const float *__restrict__ p6) {
// CHECK-NEXT: // nn.attention_grad: dv, a key row per thread, tiles of 64
// CHECK-NEXT: TK_SHARED(tk_bf16, tk_rows, 1024);
// CHECK: tk_attention_grad_keys<16, 64, false>(TK_LAUNCH_ARG s, p0, p1, p2, p3, p4, p5, p6, tk_rows, tk_tile0, tk_tile1, tk_tile_stats);

// f32, heads of 64: dq's two cached rows (32 KiB) leave room for tiles of
// 32 (16 KiB); dk's tiles' statistics push it to tiles of 16; dv caches
// one row and takes tiles of 32.
// CHECK: TK_ATTENTION_KERNEL [[$ROWS64:tk_k[0-9a-f]+]](
// CHECK-NEXT: // nn.attention_grad: dq, a query row per thread, tiles of 32
// CHECK-NEXT: TK_SHARED(float, tk_rows, 8192);
// CHECK-NEXT: TK_SHARED(float, tk_tile0, 2048);
// CHECK: TK_ATTENTION_KERNEL [[$DK64:tk_k[0-9a-f]+]](
// CHECK-NEXT: // nn.attention_grad: dk, a key row per thread, tiles of 16
// CHECK-NEXT: TK_SHARED(float, tk_rows, 8192);
// CHECK-NEXT: TK_SHARED(float, tk_tile0, 1024);
// CHECK-NEXT: TK_SHARED(float, tk_tile1, 1024);
// CHECK-NEXT: TK_SHARED(float, tk_tile_stats, 32);
// CHECK: TK_ATTENTION_KERNEL [[$DV64:tk_k[0-9a-f]+]](
// CHECK-NEXT: // nn.attention_grad: dv, a key row per thread, tiles of 32
// CHECK-NEXT: TK_SHARED(float, tk_rows, 4096);

// f32, heads of 256: not even 32 threads' rows fit, so every kernel reads
// its own rows from memory (nullptr) and takes tiles of 16 (32 KiB).
// CHECK: TK_ATTENTION_KERNEL [[$ROWS256:tk_k[0-9a-f]+]](
// CHECK-NEXT: // nn.attention_grad: dq, a query row per thread, tiles of 16
// CHECK-NEXT: TK_SHARED(float, tk_tile0, 4096);
// CHECK-NEXT: TK_SHARED(float, tk_tile1, 4096);
// CHECK-NEXT: tk_attention_grad_rows<256, 16>(TK_LAUNCH_ARG s, p0, p1, p2, p3, p4, p5, p6, p7, (float *)nullptr, tk_tile0, tk_tile1);
// CHECK: TK_ATTENTION_KERNEL [[$DK256:tk_k[0-9a-f]+]](
// CHECK-NEXT: // nn.attention_grad: dk, a key row per thread, tiles of 16
// CHECK-NEXT: TK_SHARED(float, tk_tile0, 4096);
// CHECK: tk_attention_grad_keys<256, 16, true>(TK_LAUNCH_ARG s, p0, p1, p2, p3, p4, p5, p6, (float *)nullptr,
// CHECK: TK_ATTENTION_KERNEL [[$DV256:tk_k[0-9a-f]+]](
// CHECK-NEXT: // nn.attention_grad: dv, a key row per thread, tiles of 16
// CHECK-NEXT: TK_SHARED(float, tk_tile0, 4096);
// CHECK: tk_attention_grad_keys<256, 16, false>(TK_LAUNCH_ARG s, p0, p1, p2, p3, p4, p5, p6, (float *)nullptr,

// @grouped's forward has a log-sum-exp result: the kernel writes it.
// CHECK: TK_ATTENTION_KERNEL [[$FWDLSE:tk_k[0-9a-f]+]](TK_KERNEL_ARGS tk_attention_shape s, const float *__restrict__ p0, const float *__restrict__ p1, const float *__restrict__ p2, float *__restrict__ p3, float *__restrict__ p4) {
// CHECK: tk_attention_forward<8, 64>(TK_LAUNCH_ARG s, p0, p1, p2, p3, p4, tk_tile0, tk_tile1);

// @mixed's copies (below): k out of the split, %x into the concat.
// CHECK: TK_KERNEL [[$COPYK:tk_k[0-9a-f]+]](TK_KERNEL_ARGS float *__restrict__ o0, const float *__restrict__ i0) {
// CHECK-NEXT: // copy of 512 elements
// CHECK: o0[d0 * 256 + d1 * 16 + d2] = i0[d0 * 768 + d1 * 48 + d2 + 16];
// CHECK: TK_KERNEL [[$COPYX:tk_k[0-9a-f]+]](TK_KERNEL_ARGS float *__restrict__ o0, const float *__restrict__ i0) {
// CHECK-NEXT: // copy of 256 elements
// CHECK: o0[d0 * 640 + d1 * 40 + d2 + 16] = i0[d0 * 128 + d1 * 8 + d2];

// Tensors of their own: offset 0, rows of their width, batches of T rows.
// CHECK: const tk_attention_shape tk_attention_shapes[] = {
// CHECK-NEXT: {2, 2, 2, 16, 16, 16, 1, (0x1.6a09e6p-2f), {{[{][{]0, 256, 16[}], [{]0, 256, 16[}], [{]0, 256, 16[}], [{]0, 256, 16[}][}]}}},
// CHECK-NEXT: {1, 4, 4, 5, 9, 64, 0, (0x1p-1f), {{[{][{]0, 320, 64[}], [{]0, 576, 64[}], [{]0, 576, 64[}], [{]0, 320, 64[}], [{]0, 320, 64[}], [{]0, 320, 64[}], [{]0, 576, 64[}], [{]0, 576, 64[}][}]}}},
// CHECK-NEXT: {2, 2, 2, 100, 100, 128, 1, (0x1p-3f), {{.*}}},
// CHECK-NEXT: {1, 1, 1, 40, 40, 256, 1, (0x1p-4f), {{.*}}},
// Grouped: q, y, dy and dq rows of 64, k, v, dk and dv rows of 16.
// CHECK-NEXT: {2, 8, 2, 16, 16, 64, 1, (0x1.6a09e6p-2f), {{[{][{]0, 1024, 64[}], [{]0, 256, 16[}], [{]0, 256, 16[}], [{]0, 1024, 64[}][}]}}},
// CHECK-NEXT: {2, 8, 2, 16, 16, 64, 1, (0x1.6a09e6p-2f), {{[{][{]0, 1024, 64[}], [{]0, 256, 16[}], [{]0, 256, 16[}], [{]0, 1024, 64[}], [{]0, 1024, 64[}], [{]0, 1024, 64[}], [{]0, 256, 16[}], [{]0, 256, 16[}][}]}}},
// Pieces in place (@qkv and below): q, k and v columns 0, 16 and 32 of
// rows of 48; dq, dk and dv likewise in the concat's result.
// CHECK-NEXT: {2, 2, 2, 16, 16, 16, 1, (0x1.6a09e6p-2f), {{[{][{]0, 768, 48[}], [{]16, 768, 48[}], [{]32, 768, 48[}], [{]0, 256, 16[}][}]}}},
// CHECK-NEXT: {2, 2, 2, 16, 16, 16, 1, (0x1.6a09e6p-2f), {{[{][{]0, 768, 48[}], [{]16, 768, 48[}], [{]32, 768, 48[}], [{]0, 256, 16[}], [{]0, 256, 16[}], [{]0, 768, 48[}], [{]16, 768, 48[}], [{]32, 768, 48[}][}]}}},
// @mixed: k and dv are their own buffers, dq and dk columns 0 and 24 of
// rows of 40.
// CHECK-NEXT: {2, 2, 2, 16, 16, 16, 1, (0x1.6a09e6p-2f), {{[{][{]0, 768, 48[}], [{]0, 256, 16[}], [{]32, 768, 48[}], [{]0, 256, 16[}], [{]0, 256, 16[}], [{]0, 640, 40[}], [{]24, 640, 40[}], [{]0, 256, 16[}][}]}}},
// CHECK-NEXT: {2, 8, 2, 16, 16, 64, 1, (0x1.6a09e6p-2f), {{[{][{]0, 1536, 96[}], [{]64, 1536, 96[}], [{]80, 1536, 96[}], [{]0, 1024, 64[}][}]}}},
// @rows: a split along the rows, batches of 14 rows of 64, k and v both
// the rows from 5 on.
// CHECK-NEXT: {1, 4, 4, 5, 9, 64, 0, (0x1p-1f), {{[{][{]0, 896, 64[}], [{]320, 896, 64[}], [{]320, 896, 64[}], [{]0, 320, 64[}][}]}}},
// CHECK-NEXT: };

// CHECK-LABEL: static const int64_t tandem_causal_program[] = {
// Two batches of two heads, 16 rows each: 4 blocks of 64.
// CHECK-NEXT: TK_OP_LAUNCH, [[$FWD]]_id, 4, 64, TK_ATTENTION_SHAPE(0), TK_ARG(0), TK_ARG(1), TK_ARG(2), TK_RESULT(0),
func.func @causal(%q: tensor<2x16x16xf32>, %k: tensor<2x16x16xf32>, %v: tensor<2x16x16xf32>) -> tensor<2x16x16xf32> {
  %y = nn.attention %q, %k, %v {causal, heads = 2 : i64} : tensor<2x16x16xf32>, tensor<2x16x16xf32>, tensor<2x16x16xf32> -> tensor<2x16x16xf32>
  return %y : tensor<2x16x16xf32>
}

// The rows' D in scratch, written by the first, read by the others; dk and
// dv do not read y (argument 3).
// CHECK-LABEL: static const int64_t tandem_grad_program[] = {
// CHECK-NEXT: TK_OP_LAUNCH, [[$ROWS]]_id, 4, 64, TK_ATTENTION_SHAPE(1), TK_ARG(0), TK_ARG(1), TK_ARG(2), TK_ARG(3), TK_ARG(4), TK_ARG(5), TK_RESULT(0), TK_SCRATCH(0),
// CHECK-NEXT: TK_OP_LAUNCH, [[$DK]]_id, 4, 64, TK_ATTENTION_SHAPE(1), TK_ARG(0), TK_ARG(1), TK_ARG(2), TK_ARG(4), TK_ARG(5), TK_RESULT(1), TK_SCRATCH(0),
// CHECK-NEXT: TK_OP_LAUNCH, [[$DV]]_id, 4, 64, TK_ATTENTION_SHAPE(1), TK_ARG(0), TK_ARG(1), TK_ARG(2), TK_ARG(4), TK_ARG(5), TK_RESULT(2), TK_SCRATCH(0),
func.func @grad(%q: tensor<1x5x64xbf16>, %k: tensor<1x9x64xbf16>, %v: tensor<1x9x64xbf16>, %y: tensor<1x5x64xbf16>, %lse: tensor<1x4x5xf32>, %dy: tensor<1x5x64xbf16>) -> (tensor<1x5x64xbf16>, tensor<1x9x64xbf16>, tensor<1x9x64xbf16>) {
  %dq, %dk, %dv = nn.attention_grad %q, %k, %v, %y, %lse, %dy {heads = 4 : i64, scale = 0.5 : f64} : tensor<1x5x64xbf16>, tensor<1x9x64xbf16>, tensor<1x9x64xbf16>, tensor<1x5x64xbf16>, tensor<1x4x5xf32>, tensor<1x5x64xbf16> -> tensor<1x5x64xbf16>, tensor<1x9x64xbf16>, tensor<1x9x64xbf16>
  return %dq, %dk, %dv : tensor<1x5x64xbf16>, tensor<1x9x64xbf16>, tensor<1x9x64xbf16>
}

// Four heads of 100 rows: two blocks of 64 each.
// CHECK-LABEL: static const int64_t tandem_grad64_program[] = {
// CHECK-NEXT: TK_OP_LAUNCH, [[$ROWS64]]_id, 8, 64, TK_ATTENTION_SHAPE(2),
// CHECK-NEXT: TK_OP_LAUNCH, [[$DK64]]_id, 8, 64, TK_ATTENTION_SHAPE(2),
// CHECK-NEXT: TK_OP_LAUNCH, [[$DV64]]_id, 8, 64, TK_ATTENTION_SHAPE(2),
func.func @grad64(%q: tensor<2x100x128xf32>, %k: tensor<2x100x128xf32>, %v: tensor<2x100x128xf32>, %y: tensor<2x100x128xf32>, %lse: tensor<2x2x100xf32>, %dy: tensor<2x100x128xf32>) -> (tensor<2x100x128xf32>, tensor<2x100x128xf32>, tensor<2x100x128xf32>) {
  %dq, %dk, %dv = nn.attention_grad %q, %k, %v, %y, %lse, %dy {causal, heads = 2 : i64} : tensor<2x100x128xf32>, tensor<2x100x128xf32>, tensor<2x100x128xf32>, tensor<2x100x128xf32>, tensor<2x2x100xf32>, tensor<2x100x128xf32> -> tensor<2x100x128xf32>, tensor<2x100x128xf32>, tensor<2x100x128xf32>
  return %dq, %dk, %dv : tensor<2x100x128xf32>, tensor<2x100x128xf32>, tensor<2x100x128xf32>
}

// CHECK-LABEL: static const int64_t tandem_grad256_program[] = {
// CHECK-NEXT: TK_OP_LAUNCH, [[$ROWS256]]_id, 1, 64, TK_ATTENTION_SHAPE(3),
// CHECK-NEXT: TK_OP_LAUNCH, [[$DK256]]_id, 1, 64, TK_ATTENTION_SHAPE(3),
// CHECK-NEXT: TK_OP_LAUNCH, [[$DV256]]_id, 1, 64, TK_ATTENTION_SHAPE(3),
func.func @grad256(%q: tensor<1x40x256xf32>, %k: tensor<1x40x256xf32>, %v: tensor<1x40x256xf32>, %y: tensor<1x40x256xf32>, %lse: tensor<1x1x40xf32>, %dy: tensor<1x40x256xf32>) -> (tensor<1x40x256xf32>, tensor<1x40x256xf32>, tensor<1x40x256xf32>) {
  %dq, %dk, %dv = nn.attention_grad %q, %k, %v, %y, %lse, %dy {causal, heads = 1 : i64} : tensor<1x40x256xf32>, tensor<1x40x256xf32>, tensor<1x40x256xf32>, tensor<1x40x256xf32>, tensor<1x1x40xf32>, tensor<1x40x256xf32> -> tensor<1x40x256xf32>, tensor<1x40x256xf32>, tensor<1x40x256xf32>
  return %dq, %dk, %dv : tensor<1x40x256xf32>, tensor<1x40x256xf32>, tensor<1x40x256xf32>
}

// Grouped-query attention, 8 query heads of 8 on 2 key and value heads:
// the forward and dq kernels take blocks of query rows of the 8 heads (2
// batches x 8 heads x 1 block of 16 rows), dk and dv blocks of key rows of
// the 2 key and value heads (2 x 2), each walking its group's 4 query
// heads. The kernels are those of ungrouped heads of 8: the grouping is
// in the shape. The forward's log-sum-exp (2·8·16 floats in scratch)
// goes to the backward, D after it.
// CHECK-LABEL: static const int64_t tandem_grouped_program[] = {
// CHECK-NEXT: TK_OP_LAUNCH, [[$FWDLSE]]_id, 16, 64, TK_ATTENTION_SHAPE(4), TK_ARG(0), TK_ARG(1), TK_ARG(2), TK_RESULT(0), TK_SCRATCH(0),
// CHECK-NEXT: TK_OP_LAUNCH, {{tk_k[0-9a-f]+}}_id, 16, 64, TK_ATTENTION_SHAPE(5), TK_ARG(0), TK_ARG(1), TK_ARG(2), TK_RESULT(0), TK_SCRATCH(0), TK_ARG(3), TK_RESULT(1), TK_SCRATCH(1024),
// CHECK-NEXT: TK_OP_LAUNCH, {{tk_k[0-9a-f]+}}_id, 4, 64, TK_ATTENTION_SHAPE(5), TK_ARG(0), TK_ARG(1), TK_ARG(2), TK_SCRATCH(0), TK_ARG(3), TK_RESULT(2), TK_SCRATCH(1024),
// CHECK-NEXT: TK_OP_LAUNCH, {{tk_k[0-9a-f]+}}_id, 4, 64, TK_ATTENTION_SHAPE(5), TK_ARG(0), TK_ARG(1), TK_ARG(2), TK_SCRATCH(0), TK_ARG(3), TK_RESULT(3), TK_SCRATCH(1024),
func.func @grouped(%q: tensor<2x16x64xf32>, %k: tensor<2x16x16xf32>, %v: tensor<2x16x16xf32>, %dy: tensor<2x16x64xf32>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x16xf32>, tensor<2x16x16xf32>) {
  %y, %lse = nn.attention %q, %k, %v {causal, heads = 8 : i64, kv_heads = 2 : i64} : tensor<2x16x64xf32>, tensor<2x16x16xf32>, tensor<2x16x16xf32> -> tensor<2x16x64xf32>, tensor<2x8x16xf32>
  %dq, %dk, %dv = nn.attention_grad %q, %k, %v, %y, %lse, %dy {causal, heads = 8 : i64, kv_heads = 2 : i64} : tensor<2x16x64xf32>, tensor<2x16x16xf32>, tensor<2x16x16xf32>, tensor<2x16x64xf32>, tensor<2x8x16xf32>, tensor<2x16x64xf32> -> tensor<2x16x64xf32>, tensor<2x16x16xf32>, tensor<2x16x16xf32>
  return %y, %dq, %dk, %dv : tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x16xf32>, tensor<2x16x16xf32>
}

// A GPT's q, k and v are columns of the QKV projection's output, split: a
// piece whose every use is an attention operand is read in place at the
// whole's row stride (the shape's layouts above), so the split writes no
// copy and the kernel takes the whole's buffer.
// CHECK-LABEL: static const int64_t tandem_qkv_program[] = {
// CHECK-NEXT: TK_OP_LAUNCH, [[$FWD]]_id, 4, 64, TK_ATTENTION_SHAPE(6), TK_ARG(0), TK_ARG(0), TK_ARG(0), TK_RESULT(0),
// CHECK-NEXT: TK_OP_END};
func.func @qkv(%qkv: tensor<2x16x48xf32>) -> tensor<2x16x16xf32> {
  %q, %k, %v = nn.split %qkv {axis = 2 : i64, sizes = array<i64: 16, 16, 16>} : tensor<2x16x48xf32> -> tensor<2x16x16xf32>, tensor<2x16x16xf32>, tensor<2x16x16xf32>
  %y = nn.attention %q, %k, %v {causal, heads = 2 : i64} : tensor<2x16x16xf32>, tensor<2x16x16xf32>, tensor<2x16x16xf32> -> tensor<2x16x16xf32>
  return %y : tensor<2x16x16xf32>
}

// The backward: q, k and v read in place, and dq, dk and dv, whose one use
// is the concat, written in place into its result: three launches, no
// copy.
// CHECK-LABEL: static const int64_t tandem_qkv_grad_program[] = {
// CHECK-NEXT: TK_OP_LAUNCH, {{tk_k[0-9a-f]+}}_id, 4, 64, TK_ATTENTION_SHAPE(7), TK_ARG(0), TK_ARG(0), TK_ARG(0), TK_ARG(1), TK_ARG(2), TK_ARG(3), TK_RESULT(0), TK_SCRATCH(0),
// CHECK-NEXT: TK_OP_LAUNCH, {{tk_k[0-9a-f]+}}_id, 4, 64, TK_ATTENTION_SHAPE(7), TK_ARG(0), TK_ARG(0), TK_ARG(0), TK_ARG(2), TK_ARG(3), TK_RESULT(0), TK_SCRATCH(0),
// CHECK-NEXT: TK_OP_LAUNCH, {{tk_k[0-9a-f]+}}_id, 4, 64, TK_ATTENTION_SHAPE(7), TK_ARG(0), TK_ARG(0), TK_ARG(0), TK_ARG(2), TK_ARG(3), TK_RESULT(0), TK_SCRATCH(0),
// CHECK-NEXT: TK_OP_END};
func.func @qkv_grad(%qkv: tensor<2x16x48xbf16>, %y: tensor<2x16x16xbf16>, %lse: tensor<2x2x16xf32>, %dy: tensor<2x16x16xbf16>) -> tensor<2x16x48xbf16> {
  %q, %k, %v = nn.split %qkv {axis = 2 : i64, sizes = array<i64: 16, 16, 16>} : tensor<2x16x48xbf16> -> tensor<2x16x16xbf16>, tensor<2x16x16xbf16>, tensor<2x16x16xbf16>
  %dq, %dk, %dv = nn.attention_grad %q, %k, %v, %y, %lse, %dy {causal, heads = 2 : i64} : tensor<2x16x16xbf16>, tensor<2x16x16xbf16>, tensor<2x16x16xbf16>, tensor<2x16x16xbf16>, tensor<2x2x16xf32>, tensor<2x16x16xbf16> -> tensor<2x16x16xbf16>, tensor<2x16x16xbf16>, tensor<2x16x16xbf16>
  %d = nn.concat %dq, %dk, %dv {axis = 2 : i64} : (tensor<2x16x16xbf16>, tensor<2x16x16xbf16>, tensor<2x16x16xbf16>) -> tensor<2x16x48xbf16>
  return %d : tensor<2x16x48xbf16>
}

// Pieces with other uses keep the general path: k, also returned, is
// copied out of the split (columns 16 to 32 of rows of 48) and read from
// its own buffer; dv, returned, is its own; the concat copies %x (columns
// 16 to 24 of rows of 40) into the buffer dq and dk were written into.
// CHECK-LABEL: static const int64_t tandem_mixed_program[] = {
// CHECK-NEXT: TK_OP_LAUNCH, [[$COPYK]]_id, 2, 256, TK_RESULT(0), TK_ARG(0),
// CHECK-NEXT: TK_OP_LAUNCH, {{tk_k[0-9a-f]+}}_id, 4, 64, TK_ATTENTION_SHAPE(8), TK_ARG(0), TK_RESULT(0), TK_ARG(0), TK_ARG(1), TK_ARG(2), TK_ARG(3), TK_RESULT(1), TK_SCRATCH(0),
// CHECK-NEXT: TK_OP_LAUNCH, {{tk_k[0-9a-f]+}}_id, 4, 64, TK_ATTENTION_SHAPE(8), TK_ARG(0), TK_RESULT(0), TK_ARG(0), TK_ARG(2), TK_ARG(3), TK_RESULT(1), TK_SCRATCH(0),
// CHECK-NEXT: TK_OP_LAUNCH, {{tk_k[0-9a-f]+}}_id, 4, 64, TK_ATTENTION_SHAPE(8), TK_ARG(0), TK_RESULT(0), TK_ARG(0), TK_ARG(2), TK_ARG(3), TK_RESULT(2), TK_SCRATCH(0),
// CHECK-NEXT: TK_OP_LAUNCH, [[$COPYX]]_id, 1, 256, TK_RESULT(1), TK_ARG(4),
// CHECK-NEXT: TK_OP_END};
func.func @mixed(%qkv: tensor<2x16x48xf32>, %y: tensor<2x16x16xf32>, %lse: tensor<2x2x16xf32>, %dy: tensor<2x16x16xf32>, %x: tensor<2x16x8xf32>) -> (tensor<2x16x16xf32>, tensor<2x16x40xf32>, tensor<2x16x16xf32>) {
  %q, %k, %v = nn.split %qkv {axis = 2 : i64, sizes = array<i64: 16, 16, 16>} : tensor<2x16x48xf32> -> tensor<2x16x16xf32>, tensor<2x16x16xf32>, tensor<2x16x16xf32>
  %dq, %dk, %dv = nn.attention_grad %q, %k, %v, %y, %lse, %dy {causal, heads = 2 : i64} : tensor<2x16x16xf32>, tensor<2x16x16xf32>, tensor<2x16x16xf32>, tensor<2x16x16xf32>, tensor<2x2x16xf32>, tensor<2x16x16xf32> -> tensor<2x16x16xf32>, tensor<2x16x16xf32>, tensor<2x16x16xf32>
  %c = nn.concat %dq, %x, %dk {axis = 2 : i64} : (tensor<2x16x16xf32>, tensor<2x16x8xf32>, tensor<2x16x16xf32>) -> tensor<2x16x40xf32>
  return %k, %c, %dv : tensor<2x16x16xf32>, tensor<2x16x40xf32>, tensor<2x16x16xf32>
}

// Grouped-query attention's QKV: q 64 columns, k and v 16 each.
// CHECK-LABEL: static const int64_t tandem_grouped_qkv_program[] = {
// CHECK-NEXT: TK_OP_LAUNCH, [[$FWD]]_id, 16, 64, TK_ATTENTION_SHAPE(9), TK_ARG(0), TK_ARG(0), TK_ARG(0), TK_RESULT(0),
// CHECK-NEXT: TK_OP_END};
func.func @grouped_qkv(%qkv: tensor<2x16x96xf32>) -> tensor<2x16x64xf32> {
  %q, %k, %v = nn.split %qkv {axis = 2 : i64, sizes = array<i64: 64, 16, 16>} : tensor<2x16x96xf32> -> tensor<2x16x64xf32>, tensor<2x16x16xf32>, tensor<2x16x16xf32>
  %y = nn.attention %q, %k, %v {causal, heads = 8 : i64, kv_heads = 2 : i64} : tensor<2x16x64xf32>, tensor<2x16x16xf32>, tensor<2x16x16xf32> -> tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}

// A split along the rows: the batch stride is the whole's, and one piece
// is both k and v.
// CHECK-LABEL: static const int64_t tandem_rows_program[] = {
// CHECK-NEXT: TK_OP_LAUNCH, {{tk_k[0-9a-f]+}}_id, 4, 64, TK_ATTENTION_SHAPE(10), TK_ARG(0), TK_ARG(0), TK_ARG(0), TK_RESULT(0),
// CHECK-NEXT: TK_OP_END};
func.func @rows(%x: tensor<1x14x64xbf16>) -> tensor<1x5x64xbf16> {
  %a, %b = nn.split %x {axis = 1 : i64, sizes = array<i64: 5, 9>} : tensor<1x14x64xbf16> -> tensor<1x5x64xbf16>, tensor<1x9x64xbf16>
  %y = nn.attention %a, %b, %b {heads = 4 : i64, scale = 0.5 : f64} : tensor<1x5x64xbf16>, tensor<1x9x64xbf16>, tensor<1x9x64xbf16> -> tensor<1x5x64xbf16>
  return %y : tensor<1x5x64xbf16>
}
