// nn.attention's forward pass on the tensor cores (TensorCorePrelude.h):
// bf16 or f16 heads of a multiple of 16, at most 128 wide. A block of 128
// threads (4 warps of 16 query rows) takes 64 query rows of a head and
// walks the keys in tiles of 64: the key tile 64 rows of HD + 8 values, the
// value tile transposed, HD rows of 64 + 8 (the padding keeps a fragment's
// 32-bit loads in 32 banks). Everything else (f32, heads of 8 or 144, and
// --cuda-attention=fused-cuda-cores) is the CUDA-core kernel.
//
// RUN: tandem-translate %s --tandem-to-source --target cuda -o %t.cu
// RUN: FileCheck %s --input-file=%t.cu
// RUN: c++ -x c++ -std=c++17 -fsyntax-only -Wall -Werror %t.cu
// RUN: tandem-translate %s --tandem-to-source --target cuda --cuda-attention=fused-cuda-cores -o %t.scalar.cu
// RUN: FileCheck %s --input-file=%t.scalar.cu --check-prefix=SCALAR

// CHECK: TK_TC_ATTENTION_KERNEL [[$WIDE:tk_k[0-9a-f]+]](TK_KERNEL_ARGS tk_attention_shape s, const tk_bf16 *__restrict__ p0, const tk_bf16 *__restrict__ p1, const tk_bf16 *__restrict__ p2, tk_bf16 *__restrict__ p3, float *__restrict__ p4) {
// CHECK-NEXT: // nn.attention: 16 query rows a warp, on the tensor cores, tiles of 64
// CHECK-NEXT: TK_SHARED(tk_bf16, tk_tile0, 4608);
// CHECK-NEXT: TK_SHARED(tk_bf16, tk_tile1, 4608);
// CHECK-NEXT: tk_attention_forward_tc<64, 64>(TK_LAUNCH_ARG s, p0, p1, p2, p3, p4, tk_tile0, tk_tile1);

// The backward: dq (and D) with K and V as rows and K transposed, then dk
// and dv in one kernel with Q and dY as rows and transposed, and the query
// tile's log-sum-exp and D. Heads of 64 in bf16: tiles of 64 rows.
// CHECK: TK_TC_ATTENTION_KERNEL [[$DQ:tk_k[0-9a-f]+]](TK_KERNEL_ARGS tk_attention_shape s, const tk_bf16 *__restrict__ p0, const tk_bf16 *__restrict__ p1, const tk_bf16 *__restrict__ p2, const tk_bf16 *__restrict__ p3, const float *__restrict__ p4, const tk_bf16 *__restrict__ p5, tk_bf16 *__restrict__ p6, float *__restrict__ p7) {
// CHECK-NEXT: // nn.attention_grad: dq, 16 query rows a warp, on the tensor cores, tiles of 64
// CHECK-NEXT: TK_SHARED(tk_bf16, tk_tile0, 4608);
// CHECK-NEXT: TK_SHARED(tk_bf16, tk_tile1, 4608);
// CHECK-NEXT: TK_SHARED(tk_bf16, tk_tile2, 4608);
// CHECK-NEXT: tk_attention_grad_rows_tc<64, 64>(TK_LAUNCH_ARG s, p0, p1, p2, p3, p4, p5, p6, p7, tk_tile0, tk_tile1, tk_tile2);
// CHECK: TK_TC_ATTENTION_KERNEL [[$DKV:tk_k[0-9a-f]+]](TK_KERNEL_ARGS tk_attention_shape s, const tk_bf16 *__restrict__ p0, const tk_bf16 *__restrict__ p1, const tk_bf16 *__restrict__ p2, const float *__restrict__ p3, const tk_bf16 *__restrict__ p4, tk_bf16 *__restrict__ p5, tk_bf16 *__restrict__ p6, const float *__restrict__ p7) {
// CHECK-NEXT: // nn.attention_grad: dk and dv, 16 key rows a warp, on the tensor cores, tiles of 64
// CHECK-NEXT: TK_SHARED(tk_bf16, tk_tile0, 4608);
// CHECK-NEXT: TK_SHARED(tk_bf16, tk_tile1, 4608);
// CHECK-NEXT: TK_SHARED(tk_bf16, tk_tile2, 4608);
// CHECK-NEXT: TK_SHARED(tk_bf16, tk_tile3, 4608);
// CHECK-NEXT: TK_SHARED(float, tk_tile_stats, 128);
// CHECK-NEXT: tk_attention_grad_keys_tc<64, 64>(TK_LAUNCH_ARG s, p0, p1, p2, p3, p4, p5, p6, p7, tk_tile0, tk_tile1, tk_tile2, tk_tile3, tk_tile_stats);
// Heads of 128: the backward's four tiles of 64 rows would not fit 48 KiB,
// so tiles of 32.
// CHECK: tk_attention_grad_rows_tc<128, 32>(
// CHECK: tk_attention_grad_keys_tc<128, 32>(

// CHECK: TK_TC_ATTENTION_KERNEL [[$F16:tk_k[0-9a-f]+]](TK_KERNEL_ARGS tk_attention_shape s, const tk_f16 *__restrict__ p0, const tk_f16 *__restrict__ p1, const tk_f16 *__restrict__ p2, tk_f16 *__restrict__ p3) {
// CHECK-NEXT: // nn.attention: 16 query rows a warp, on the tensor cores, tiles of 64
// CHECK-NEXT: TK_SHARED(tk_f16, tk_tile0, 1536);
// CHECK-NEXT: TK_SHARED(tk_f16, tk_tile1, 1152);
// CHECK-NEXT: tk_attention_forward_tc<16, 64>(TK_LAUNCH_ARG s, p0, p1, p2, p3, (float *)nullptr, tk_tile0, tk_tile1);

// CHECK: TK_ATTENTION_KERNEL [[$NARROW:tk_k[0-9a-f]+]]({{.*}}const tk_bf16 *__restrict__ p0
// CHECK: tk_attention_forward<8, 64>(
// CHECK: TK_ATTENTION_KERNEL [[$WIDEST:tk_k[0-9a-f]+]]({{.*}}const tk_bf16 *__restrict__ p0
// CHECK: tk_attention_forward<144, 64>(
// CHECK: TK_ATTENTION_KERNEL [[$F32:tk_k[0-9a-f]+]]({{.*}}const float *__restrict__ p0
// CHECK: tk_attention_forward<64, 64>(

// 2 × 12 heads × ceil(100 / 64) = 48 blocks of 128 threads.
// CHECK-LABEL: static const int64_t tandem_gpt2_program[] = {
// CHECK-NEXT: TK_OP_LAUNCH, [[$WIDE]]_id, 48, 128,
// SCALAR-LABEL: static const int64_t tandem_gpt2_program[] = {
// SCALAR-NEXT: TK_OP_LAUNCH, {{tk_k[0-9a-f]+}}_id, 48, 64,
// SCALAR-NOT: tk_attention_forward_tc<
func.func @gpt2(%q: tensor<2x100x768xbf16>, %k: tensor<2x100x768xbf16>, %v: tensor<2x100x768xbf16>) -> (tensor<2x100x768xbf16>, tensor<2x12x100xf32>) {
  %y, %lse = nn.attention %q, %k, %v {causal, heads = 12 : i64} : tensor<2x100x768xbf16>, tensor<2x100x768xbf16>, tensor<2x100x768xbf16> -> tensor<2x100x768xbf16>, tensor<2x12x100xf32>
  return %y, %lse : tensor<2x100x768xbf16>, tensor<2x12x100xf32>
}

// The backward: two launches (dq, then dk and dv), 48 blocks each.
// CHECK-LABEL: static const int64_t tandem_gpt2_grad_program[] = {
// CHECK-NEXT: TK_OP_LAUNCH, [[$DQ]]_id, 48, 128,
// CHECK: TK_OP_LAUNCH, [[$DKV]]_id, 48, 128,
// CHECK-NEXT: TK_OP_END};
// SCALAR-LABEL: static const int64_t tandem_gpt2_grad_program[] = {
// SCALAR-COUNT-3: TK_OP_LAUNCH,
// SCALAR-NEXT: TK_OP_END};
func.func @gpt2_grad(%q: tensor<2x100x768xbf16>, %k: tensor<2x100x768xbf16>, %v: tensor<2x100x768xbf16>, %y: tensor<2x100x768xbf16>, %lse: tensor<2x12x100xf32>, %dy: tensor<2x100x768xbf16>) -> (tensor<2x100x768xbf16>, tensor<2x100x768xbf16>, tensor<2x100x768xbf16>) {
  %dq, %dk, %dv = nn.attention_grad %q, %k, %v, %y, %lse, %dy {causal, heads = 12 : i64} : tensor<2x100x768xbf16>, tensor<2x100x768xbf16>, tensor<2x100x768xbf16>, tensor<2x100x768xbf16>, tensor<2x12x100xf32>, tensor<2x100x768xbf16> -> tensor<2x100x768xbf16>, tensor<2x100x768xbf16>, tensor<2x100x768xbf16>
  return %dq, %dk, %dv : tensor<2x100x768xbf16>, tensor<2x100x768xbf16>, tensor<2x100x768xbf16>
}

func.func @wide_grad(%q: tensor<2x100x256xbf16>, %y: tensor<2x100x256xbf16>, %lse: tensor<2x2x100xf32>, %dy: tensor<2x100x256xbf16>) -> (tensor<2x100x256xbf16>, tensor<2x100x256xbf16>, tensor<2x100x256xbf16>) {
  %dq, %dk, %dv = nn.attention_grad %q, %q, %q, %y, %lse, %dy {causal, heads = 2 : i64} : tensor<2x100x256xbf16>, tensor<2x100x256xbf16>, tensor<2x100x256xbf16>, tensor<2x100x256xbf16>, tensor<2x2x100xf32>, tensor<2x100x256xbf16> -> tensor<2x100x256xbf16>, tensor<2x100x256xbf16>, tensor<2x100x256xbf16>
  return %dq, %dk, %dv : tensor<2x100x256xbf16>, tensor<2x100x256xbf16>, tensor<2x100x256xbf16>
}

// CHECK-LABEL: static const int64_t tandem_half_program[] = {
// CHECK-NEXT: TK_OP_LAUNCH, [[$F16]]_id, 2, 128,
func.func @half(%q: tensor<1x7x32xf16>, %k: tensor<1x9x32xf16>, %v: tensor<1x9x32xf16>) -> tensor<1x7x32xf16> {
  %y = nn.attention %q, %k, %v {heads = 2 : i64} : tensor<1x7x32xf16>, tensor<1x9x32xf16>, tensor<1x9x32xf16> -> tensor<1x7x32xf16>
  return %y : tensor<1x7x32xf16>
}

func.func @narrow(%q: tensor<1x7x32xbf16>) -> tensor<1x7x32xbf16> {
  %y = nn.attention %q, %q, %q {causal, heads = 4 : i64} : tensor<1x7x32xbf16>, tensor<1x7x32xbf16>, tensor<1x7x32xbf16> -> tensor<1x7x32xbf16>
  return %y : tensor<1x7x32xbf16>
}

func.func @widest(%q: tensor<1x7x144xbf16>) -> tensor<1x7x144xbf16> {
  %y = nn.attention %q, %q, %q {causal, heads = 1 : i64} : tensor<1x7x144xbf16>, tensor<1x7x144xbf16>, tensor<1x7x144xbf16> -> tensor<1x7x144xbf16>
  return %y : tensor<1x7x144xbf16>
}

func.func @single(%q: tensor<1x7x64xf32>) -> tensor<1x7x64xf32> {
  %y = nn.attention %q, %q, %q {causal, heads = 1 : i64} : tensor<1x7x64xf32>, tensor<1x7x64xf32>, tensor<1x7x64xf32> -> tensor<1x7x64xf32>
  return %y : tensor<1x7x64xf32>
}
