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

// The unit's shapes, each once, in the order of first use.
// CHECK: const tk_gemm_shape tk_gemm_shapes[] = {
// CHECK-NEXT: {0, 0, TK_GEMM_F32, TK_GEMM_F32, 16, 24, 32, 32, 24, 24, 1, 512, 0, 384, 1.0f, 0.0f},
// CHECK-NEXT: {0, 1, TK_GEMM_BF16, TK_GEMM_BF16, 64, 24, 32, 32, 32, 24, 1, 2048, 0, 1536, 1.0f, 0.0f},
// CHECK-NEXT: {1, 0, TK_GEMM_F16, TK_GEMM_F16, 16, 24, 32, 16, 24, 24, 4, 512, 0, 384, 1.0f, 0.0f},
// CHECK-NEXT: {0, 1, TK_GEMM_F32, TK_GEMM_F32, 16, 16, 8, 8, 8, 16, 8, 128, 128, 256, 1.0f, 0.0f},
// CHECK-NEXT: };

// CHECK-LABEL: static const int64_t tandem_plain_program[] = {
// CHECK-NEXT: TK_OP_GEMM, 0, TK_EPILOGUE_NONE, TK_ARG(0), TK_ARG(1), TK_RESULT(0), TK_NONE, TK_NONE, TK_NONE, // nn.matmul
// CHECK-NEXT: TK_OP_END};
func.func @plain(%x: tensor<16x32xf32>, %w: tensor<32x24xf32>) -> tensor<16x24xf32> {
  %y = nn.matmul %x, %w : tensor<16x32xf32>, tensor<32x24xf32> -> tensor<16x24xf32>
  return %y : tensor<16x24xf32>
}

// CHECK-LABEL: static const int64_t tandem_bf16_shared_program[] = {
// CHECK-NEXT: TK_OP_GEMM, 1, TK_EPILOGUE_NONE,
func.func @bf16_shared(%x: tensor<4x16x32xbf16>, %w: tensor<24x32xbf16>) -> tensor<4x16x24xbf16> {
  %y = nn.matmul %x, %w {transpose_rhs} : tensor<4x16x32xbf16>, tensor<24x32xbf16> -> tensor<4x16x24xbf16>
  return %y : tensor<4x16x24xbf16>
}

// CHECK-LABEL: static const int64_t tandem_f16_shared_tl_program[] = {
// CHECK-NEXT: TK_OP_GEMM, 2, TK_EPILOGUE_NONE,
func.func @f16_shared_tl(%x: tensor<4x32x16xf16>, %w: tensor<32x24xf16>) -> tensor<4x16x24xf16> {
  %y = nn.matmul %x, %w {transpose_lhs} : tensor<4x32x16xf16>, tensor<32x24xf16> -> tensor<4x16x24xf16>
  return %y : tensor<4x16x24xf16>
}

// Attention scores: batched, both operands per batch.
// The product feeds a kernel through scratch.
// CHECK-LABEL: static const int64_t tandem_scores_program[] = {
// CHECK-NEXT: TK_OP_GEMM, 3, TK_EPILOGUE_NONE, TK_ARG(0), TK_ARG(1), TK_SCRATCH(0), TK_NONE, TK_NONE, TK_NONE, // nn.matmul
// CHECK-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 2, 256, TK_RESULT(0), TK_SCRATCH(0),
func.func @scores(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>) -> tensor<2x4x16x16xf32> {
  %s = nn.matmul %q, %k {transpose_rhs} : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x16x16xf32>
  %y = nn.exp %s : tensor<2x4x16x16xf32>
  return %y : tensor<2x4x16x16xf32>
}

// CHECK-LABEL: static const int64_t tandem_empty_program[] = {
// CHECK-NEXT: TK_OP_ZERO, TK_RESULT(0), 140,
// CHECK-NEXT: TK_OP_END};
func.func @empty(%x: tensor<5x0xf32>, %w: tensor<0x7xf32>) -> tensor<5x7xf32> {
  %y = nn.matmul %x, %w : tensor<5x0xf32>, tensor<0x7xf32> -> tensor<5x7xf32>
  return %y : tensor<5x7xf32>
}

// Parameters read with nn.param: slots after the arguments, one per
// parameter: @w is argument 1 both times, @b argument 2.
// CHECK-LABEL: static const int64_t tandem_params_program[] = {
// CHECK-NEXT: TK_OP_GEMM, 0, TK_EPILOGUE_NONE, TK_ARG(0), TK_ARG(1), TK_SCRATCH(0), TK_NONE, TK_NONE, TK_NONE, // nn.matmul
// CHECK-NEXT: TK_OP_GEMM, 0, TK_EPILOGUE_NONE, TK_ARG(0), TK_ARG(1), TK_SCRATCH(1536), TK_NONE, TK_NONE, TK_NONE, // nn.matmul
// CHECK-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 2, 256, TK_RESULT(0), TK_SCRATCH(0), TK_SCRATCH(1536), TK_ARG(2),
// CHECK-NEXT: TK_OP_END};
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
