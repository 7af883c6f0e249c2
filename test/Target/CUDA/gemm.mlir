// GEMMs: every nn.matmul is one tk_gemm call (cuBLASLt on the GPU, the CPU
// BLAS in the emulation; GemmPrelude.h) with its row-major shape as a
// constant: transposes, operand and result types, m n k, leading
// dimensions, batch count and element strides, alpha and beta. A weight
// shared by the batches of an untransposed lhs folds them into one tall
// GEMM; with the lhs transposed it stays batched with a stride of 0. An
// empty reduction writes zeros; an empty result writes nothing.
//
// RUN: tandem-translate %s --tandem-to-source --target cuda -o %t.cu
// RUN: FileCheck %s --input-file=%t.cu
// RUN: c++ -x c++ -std=c++17 -fsyntax-only -Wall -Werror %t.cu

// CHECK-LABEL: extern "C" int tandem_plain(
// CHECK: { // nn.matmul
// CHECK-NEXT: static const tk_gemm_shape tk_s = {0, 0, TK_GEMM_F32, TK_GEMM_F32, 16, 24, 32, 32, 24, 24, 1, 512, 0, 384, 1.0f, 0.0f};
// CHECK-NEXT: if (int tk_e = tk_gemm(tk_context, tk_s, a0, a1, r0))
// CHECK-NEXT: return tk_e;
func.func @plain(%x: tensor<16x32xf32>, %w: tensor<32x24xf32>) -> tensor<16x24xf32> {
  %y = nn.matmul %x, %w : tensor<16x32xf32>, tensor<32x24xf32> -> tensor<16x24xf32>
  return %y : tensor<16x24xf32>
}

// CHECK-LABEL: extern "C" int tandem_bf16_shared(
// CHECK: tk_s = {0, 1, TK_GEMM_BF16, TK_GEMM_BF16, 64, 24, 32, 32, 32, 24, 1, 2048, 0, 1536, 1.0f, 0.0f};
func.func @bf16_shared(%x: tensor<4x16x32xbf16>, %w: tensor<24x32xbf16>) -> tensor<4x16x24xbf16> {
  %y = nn.matmul %x, %w {transpose_rhs} : tensor<4x16x32xbf16>, tensor<24x32xbf16> -> tensor<4x16x24xbf16>
  return %y : tensor<4x16x24xbf16>
}

// CHECK-LABEL: extern "C" int tandem_f16_shared_tl(
// CHECK: tk_s = {1, 0, TK_GEMM_F16, TK_GEMM_F16, 16, 24, 32, 16, 24, 24, 4, 512, 0, 384, 1.0f, 0.0f};
func.func @f16_shared_tl(%x: tensor<4x32x16xf16>, %w: tensor<32x24xf16>) -> tensor<4x16x24xf16> {
  %y = nn.matmul %x, %w {transpose_lhs} : tensor<4x32x16xf16>, tensor<32x24xf16> -> tensor<4x16x24xf16>
  return %y : tensor<4x16x24xf16>
}

// Attention scores: batched, both operands per batch.
// CHECK-LABEL: extern "C" int tandem_scores(
// CHECK: tk_s = {0, 1, TK_GEMM_F32, TK_GEMM_F32, 16, 16, 8, 8, 8, 16, 8, 128, 128, 256, 1.0f, 0.0f};
// The product feeds a kernel through scratch.
// CHECK: tk_gemm(tk_context, tk_s, a0, a1, v0)
// CHECK: TK_LAUNCH(
func.func @scores(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>) -> tensor<2x4x16x16xf32> {
  %s = nn.matmul %q, %k {transpose_rhs} : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x16x16xf32>
  %y = nn.exp %s : tensor<2x4x16x16xf32>
  return %y : tensor<2x4x16x16xf32>
}

// CHECK-LABEL: extern "C" int tandem_empty(
// CHECK: TK_ZERO(r0, 140);
// CHECK-NOT: tk_gemm(
// CHECK: return TK_STATUS();
func.func @empty(%x: tensor<5x0xf32>, %w: tensor<0x7xf32>) -> tensor<5x7xf32> {
  %y = nn.matmul %x, %w : tensor<5x0xf32>, tensor<0x7xf32> -> tensor<5x7xf32>
  return %y : tensor<5x7xf32>
}

// Parameters read with nn.param: slots after the arguments, one per
// parameter.
// CHECK-LABEL: extern "C" int tandem_params(
// CHECK: float *a0 = (float *)args[0];
// CHECK-NEXT: float *p0 = (float *)args[1];
// CHECK-NEXT: float *p1 = (float *)args[2];
// CHECK-NOT: args[3]
// CHECK: tk_gemm(tk_context, tk_s, a0, p0, v{{[0-9]+}})
// CHECK: tk_gemm(tk_context, tk_s, a0, p0, v{{[0-9]+}})
nn.parameter @w : tensor<32x24xf32> = zeros
nn.parameter @b : tensor<24xf32> = zeros
func.func @params(%x: tensor<16x32xf32>) -> tensor<16x24xf32> {
  %w = nn.param @w : tensor<32x24xf32>
  %b = nn.param @b : tensor<24xf32>
  %w2 = nn.param @w : tensor<32x24xf32>
  %p = nn.matmul %x, %w : tensor<16x32xf32>, tensor<32x24xf32> -> tensor<16x24xf32>
  %q = nn.matmul %x, %w2 : tensor<16x32xf32>, tensor<32x24xf32> -> tensor<16x24xf32>
  %s = nn.add %p, %q : tensor<16x24xf32>, tensor<16x24xf32> -> tensor<16x24xf32>
  %y = nn.add %s, %b : tensor<16x24xf32>, tensor<24xf32> -> tensor<16x24xf32>
  return %y : tensor<16x24xf32>
}
