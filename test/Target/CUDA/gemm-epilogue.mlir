// GEMM epilogues: kernel formation (the CUDA policy) makes the elementwise
// kernel reading a matmul its epilogue when cuBLASLt can run it, and the
// GEMM call then computes the kernel's values (tk_gemm_epilogue,
// GemmPrelude.h): `+ bias` (n values, per column); `+ bias` then GELU,
// with the value before GELU stored too (cuBLASLt's aux) when something
// else reads it; `+ bias` then `+ residual` (cuBLASLt's C, beta = 1). Any
// other kernel stays a kernel of its own after a plain GEMM: other ops, a
// bias of another shape, a batched GEMM, an aux whose leading dimension is
// not a multiple of 8, a value before the residual read elsewhere.
//
// RUN: tandem-opt %s --tandem-form-kernels=target=cuda | FileCheck %s --check-prefix=IR
// RUN: not tandem-opt %s --tandem-form-kernels=target=tpu 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: tandem-form-kernels: unknown target 'tpu' (known: cpu, cuda)
// RUN: tandem-translate %s --tandem-to-source --target cuda -o %t.cu
// RUN: FileCheck %s --input-file=%t.cu
// RUN: c++ -x c++ -std=c++17 -fsyntax-only -Wall -Werror %t.cu

// The unit's GEMM shapes, each once (the plain GEMMs of @unfused share
// @gelu's), indexed by the programs' GEMM steps: shape, epilogue, A, B, C,
// bias, residual, aux.
// CHECK: const tk_gemm_shape tk_gemm_shapes[] = {
// CHECK-NEXT: {0, 0, TK_GEMM_F32, TK_GEMM_F32, 16, 24, 32, 32, 24, 24, 1, 512, 0, 384, 1.0f, 0.0f},
// CHECK-NEXT: {0, 0, TK_GEMM_BF16, TK_GEMM_BF16, 64, 48, 32, 32, 48, 48, 1, 2048, 0, 3072, 1.0f, 0.0f},
// CHECK-NEXT: {0, 0, TK_GEMM_F32, TK_GEMM_F32, 16, 20, 32, 32, 20, 20, 1, 512, 0, 320, 1.0f, 0.0f},
// CHECK-NEXT: {0, 0, TK_GEMM_F32, TK_GEMM_F32, 16, 24, 32, 32, 24, 24, 1, 512, 0, 384, 1.0f, 1.0f},
// CHECK-NEXT: {0, 0, TK_GEMM_F32, TK_GEMM_F32, 16, 20, 32, 32, 20, 20, 2, 512, 640, 320, 1.0f, 0.0f},
// CHECK-NEXT: {0, 0, TK_GEMM_BF16, TK_GEMM_F32, 51, 16, 20, 20, 16, 16, 1, 1020, 0, 816, 1.0f, 0.0f},
// CHECK-NEXT: {0, 0, TK_GEMM_BF16, TK_GEMM_BF16, 51, 16, 20, 20, 16, 16, 1, 1020, 0, 816, 1.0f, 0.0f},
// CHECK-NEXT: };

// IR-LABEL: func.func @bias(
// IR: nn.matmul {{.*}}nn.kernel_gemm = [[K:[0-9]+]]
// IR-NEXT: nn.add {{.*}}nn.kernel = [[K]]
// CHECK-LABEL: static const int64_t tandem_bias_program[] = {
// CHECK-NEXT: TK_OP_GEMM, 0, TK_EPILOGUE_BIAS, TK_ARG(0), TK_ARG(1), TK_RESULT(0), TK_ARG(2), TK_NONE, TK_NONE, // nn.matmul + bias
// CHECK-NEXT: TK_OP_END};
func.func @bias(%x: tensor<16x32xf32>, %w: tensor<32x24xf32>, %b: tensor<24xf32>) -> tensor<16x24xf32> {
  %y = nn.matmul %x, %w : tensor<16x32xf32>, tensor<32x24xf32> -> tensor<16x24xf32>
  %z = nn.add %y, %b : tensor<16x24xf32>, tensor<24xf32> -> tensor<16x24xf32>
  return %z : tensor<16x24xf32>
}

// The rows of a 3-D lhs fold into one GEMM; the value before GELU is
// returned, so it is stored as the auxiliary output (r1), bf16 like the
// result.
// CHECK-LABEL: static const int64_t tandem_gelu_aux_program[] = {
// CHECK-NEXT: TK_OP_GEMM, 1, TK_EPILOGUE_GELU, TK_ARG(0), TK_ARG(1), TK_RESULT(0), TK_ARG(2), TK_NONE, TK_RESULT(1), // nn.matmul + bias, gelu
// CHECK-NEXT: TK_OP_END};
func.func @gelu_aux(%x: tensor<4x16x32xbf16>, %w: tensor<32x48xbf16>, %b: tensor<48xbf16>) -> (tensor<4x16x48xbf16>, tensor<4x16x48xbf16>) {
  %y = nn.matmul %x, %w : tensor<4x16x32xbf16>, tensor<32x48xbf16> -> tensor<4x16x48xbf16>
  %z = nn.add %b, %y : tensor<48xbf16>, tensor<4x16x48xbf16> -> tensor<4x16x48xbf16>
  %g = nn.gelu %z : tensor<4x16x48xbf16>
  return %g, %z : tensor<4x16x48xbf16>, tensor<4x16x48xbf16>
}

// Nothing else reads the value before GELU: no aux.
// CHECK-LABEL: static const int64_t tandem_gelu_program[] = {
// CHECK-NEXT: TK_OP_GEMM, 2, TK_EPILOGUE_GELU, TK_ARG(0), TK_ARG(1), TK_RESULT(0), TK_ARG(2), TK_NONE, TK_NONE, // nn.matmul + bias, gelu
func.func @gelu(%x: tensor<16x32xf32>, %w: tensor<32x20xf32>, %b: tensor<20xf32>) -> tensor<16x20xf32> {
  %y = nn.matmul %x, %w : tensor<16x32xf32>, tensor<32x20xf32> -> tensor<16x20xf32>
  %z = nn.add %y, %b : tensor<16x20xf32>, tensor<20xf32> -> tensor<16x20xf32>
  %g = nn.gelu %z : tensor<16x20xf32>
  return %g : tensor<16x20xf32>
}

// A residual: cuBLASLt's C with beta = 1, the output another buffer.
// CHECK-LABEL: static const int64_t tandem_residual_program[] = {
// CHECK-NEXT: TK_OP_GEMM, 3, TK_EPILOGUE_BIAS, TK_ARG(0), TK_ARG(1), TK_RESULT(0), TK_ARG(2), TK_ARG(3), TK_NONE, // nn.matmul + bias, residual
// CHECK-NEXT: TK_OP_END};
func.func @residual(%x: tensor<16x32xf32>, %w: tensor<32x24xf32>, %b: tensor<24xf32>, %r: tensor<16x24xf32>) -> tensor<16x24xf32> {
  %y = nn.matmul %x, %w : tensor<16x32xf32>, tensor<32x24xf32> -> tensor<16x24xf32>
  %z = nn.add %y, %b : tensor<16x24xf32>, tensor<24xf32> -> tensor<16x24xf32>
  %s = nn.add %r, %z : tensor<16x24xf32>, tensor<16x24xf32> -> tensor<16x24xf32>
  return %s : tensor<16x24xf32>
}

// Not all cuBLASLt's: a scale after the bias, a bias over rows, a batched
// GEMM, an aux of 20 columns, a value before the residual read elsewhere.
// Where a prefix of the kernel is (the bias before the scale, the GELU and
// the residual), the GEMM takes the prefix and the rest is a kernel of its
// own reading the GEMM's output; the others are a plain GEMM and a kernel.
// IR-LABEL: func.func @unfused(
// IR: nn.matmul {{.*}}nn.kernel_gemm = [[K0:[0-9]+]]
// IR-NEXT: nn.add {{.*}}nn.kernel = [[K0]]
// IR-NEXT: nn.mul
// IR-NOT: nn.kernel = [[K0]]
// IR-NEXT: nn.matmul
// IR-NOT: nn.kernel_gemm
// IR-NEXT: nn.add
// IR-NEXT: nn.matmul
// IR-NOT: nn.kernel_gemm
// IR-NEXT: nn.add
// IR-NEXT: nn.matmul {{.*}}nn.kernel_gemm = [[K3:[0-9]+]]
// IR-NEXT: nn.add {{.*}}nn.kernel = [[K3]]
// IR-NEXT: nn.gelu
// IR-NOT: nn.kernel = [[K3]]
// IR-NEXT: nn.matmul {{.*}}nn.kernel_gemm = [[K4:[0-9]+]]
// IR-NEXT: nn.add {{.*}}nn.kernel = [[K4]]
// IR-NEXT: nn.add
// IR-NOT: nn.kernel = [[K4]]
// IR-NEXT: return
// CHECK-LABEL: static const int64_t tandem_unfused_program[] = {
// CHECK-NEXT: TK_OP_GEMM, 2, TK_EPILOGUE_BIAS, TK_ARG(0), TK_ARG(1), TK_SCRATCH(0), TK_ARG(2), TK_NONE, TK_NONE, // nn.matmul + bias
// CHECK-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 1, 256, TK_RESULT(0), TK_SCRATCH(0),
// CHECK-NEXT: TK_OP_GEMM, 2, TK_EPILOGUE_NONE, TK_ARG(0), TK_ARG(1), TK_SCRATCH(0), TK_NONE, TK_NONE, TK_NONE, // nn.matmul
// CHECK-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 2, 256, TK_RESULT(1), TK_SCRATCH(0), TK_ARG(3),
// CHECK-NEXT: TK_OP_GEMM, 4, TK_EPILOGUE_NONE, TK_ARG(4), TK_ARG(5), TK_SCRATCH(0), TK_NONE, TK_NONE, TK_NONE, // nn.matmul
// CHECK-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 3, 256, TK_RESULT(2), TK_SCRATCH(0), TK_ARG(2),
// CHECK-NEXT: TK_OP_GEMM, 2, TK_EPILOGUE_BIAS, TK_ARG(0), TK_ARG(1), TK_RESULT(4), TK_ARG(2), TK_NONE, TK_NONE, // nn.matmul + bias
// CHECK-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 1, 256, TK_RESULT(3), TK_RESULT(4),
// CHECK-NEXT: TK_OP_GEMM, 2, TK_EPILOGUE_BIAS, TK_ARG(0), TK_ARG(1), TK_RESULT(6), TK_ARG(2), TK_NONE, TK_NONE, // nn.matmul + bias
// CHECK-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 1, 256, TK_RESULT(5), TK_ARG(6), TK_RESULT(6),
// CHECK-NEXT: TK_OP_END};
func.func @unfused(%x: tensor<16x32xf32>, %w: tensor<32x20xf32>, %b: tensor<20xf32>, %c: tensor<16x1xf32>,
                   %bx: tensor<2x16x32xf32>, %bw: tensor<2x32x20xf32>, %r: tensor<16x20xf32>)
    -> (tensor<16x20xf32>, tensor<16x20xf32>, tensor<2x16x20xf32>, tensor<16x20xf32>, tensor<16x20xf32>, tensor<16x20xf32>, tensor<16x20xf32>) {
  %two = nn.constant dense<2.0> : tensor<f32>
  %y0 = nn.matmul %x, %w : tensor<16x32xf32>, tensor<32x20xf32> -> tensor<16x20xf32>
  %z0 = nn.add %y0, %b : tensor<16x20xf32>, tensor<20xf32> -> tensor<16x20xf32>
  %s0 = nn.mul %z0, %two : tensor<16x20xf32>, tensor<f32> -> tensor<16x20xf32>
  %y1 = nn.matmul %x, %w : tensor<16x32xf32>, tensor<32x20xf32> -> tensor<16x20xf32>
  %z1 = nn.add %y1, %c : tensor<16x20xf32>, tensor<16x1xf32> -> tensor<16x20xf32>
  %y2 = nn.matmul %bx, %bw : tensor<2x16x32xf32>, tensor<2x32x20xf32> -> tensor<2x16x20xf32>
  %z2 = nn.add %y2, %b : tensor<2x16x20xf32>, tensor<20xf32> -> tensor<2x16x20xf32>
  %y3 = nn.matmul %x, %w : tensor<16x32xf32>, tensor<32x20xf32> -> tensor<16x20xf32>
  %z3 = nn.add %y3, %b : tensor<16x20xf32>, tensor<20xf32> -> tensor<16x20xf32>
  %g3 = nn.gelu %z3 : tensor<16x20xf32>
  %y4 = nn.matmul %x, %w : tensor<16x32xf32>, tensor<32x20xf32> -> tensor<16x20xf32>
  %z4 = nn.add %y4, %b : tensor<16x20xf32>, tensor<20xf32> -> tensor<16x20xf32>
  %s4 = nn.add %r, %z4 : tensor<16x20xf32>, tensor<16x20xf32> -> tensor<16x20xf32>
  return %s0, %z1, %z2, %g3, %z3, %s4, %z4 : tensor<16x20xf32>, tensor<16x20xf32>, tensor<2x16x20xf32>, tensor<16x20xf32>, tensor<16x20xf32>, tensor<16x20xf32>, tensor<16x20xf32>
}

// GELU's gradient of a product (the backward's input gradient through the
// MLP's GELU): cuBLASLt's DGELU, the product times GELU's derivative at the
// forward's value before GELU (an input, the aux slot), no bias. With 20
// columns the auxiliary matrix's leading dimension is no multiple of 8: a
// plain GEMM, then the gelu_grad kernel.
// IR-LABEL: func.func @dgelu(
// IR: nn.matmul {{.*}}nn.kernel_gemm = [[K:[0-9]+]]
// IR-NEXT: nn.gelu_grad {{.*}}nn.kernel = [[K]]
// IR-NEXT: nn.matmul
// IR-NOT: nn.kernel_gemm
// IR: return
// CHECK-LABEL: static const int64_t tandem_dgelu_program[] = {
// CHECK-NEXT: TK_OP_GEMM, 0, TK_EPILOGUE_DGELU, TK_ARG(0), TK_ARG(1), TK_RESULT(0), TK_NONE, TK_NONE, TK_ARG(2), // nn.matmul * gelu_grad
// CHECK-NEXT: TK_OP_GEMM, 2, TK_EPILOGUE_NONE, TK_ARG(0), TK_ARG(3), TK_SCRATCH(0), TK_NONE, TK_NONE, TK_NONE, // nn.matmul
// CHECK-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 1, 256, TK_RESULT(1), TK_ARG(4), TK_SCRATCH(0),
// CHECK-NEXT: TK_OP_END};
func.func @dgelu(%dy: tensor<16x32xf32>, %w: tensor<32x24xf32>, %pre: tensor<16x24xf32>,
                 %w2: tensor<32x20xf32>, %pre2: tensor<16x20xf32>) -> (tensor<16x24xf32>, tensor<16x20xf32>) {
  %g = nn.matmul %dy, %w : tensor<16x32xf32>, tensor<32x24xf32> -> tensor<16x24xf32>
  %dx = nn.gelu_grad %pre, %g : tensor<16x24xf32>
  %g2 = nn.matmul %dy, %w2 : tensor<16x32xf32>, tensor<32x20xf32> -> tensor<16x20xf32>
  %dx2 = nn.gelu_grad %pre2, %g2 : tensor<16x20xf32>
  return %dx, %dx2 : tensor<16x24xf32>, tensor<16x20xf32>
}

// Mixed precision: a bf16 product widened to f32 before its epilogue (the
// f32 bias, GELU and its aux, the backward's f32 cotangent). The GEMM takes
// bf16 operands and writes f32 (the shape's result type), skipping the
// product's rounding to bf16. A product that something else also reads in
// bf16 stays a plain GEMM and a cast kernel.
// CHECK-LABEL: static const int64_t tandem_widened_program[] = {
// CHECK-NEXT: TK_OP_GEMM, [[W:[0-9]+]], TK_EPILOGUE_GELU, TK_ARG(0), TK_ARG(1), TK_RESULT(0), TK_ARG(2), TK_NONE, TK_RESULT(1), // nn.matmul to f32 + bias, gelu
// CHECK-NEXT: TK_OP_GEMM, [[W]], TK_EPILOGUE_DGELU, TK_ARG(0), TK_ARG(1), TK_RESULT(2), TK_NONE, TK_NONE, TK_ARG(3), // nn.matmul to f32 * gelu_grad
// CHECK-NEXT: TK_OP_GEMM, [[W]], TK_EPILOGUE_NONE, TK_ARG(0), TK_ARG(1), TK_RESULT(3), TK_NONE, TK_NONE, TK_NONE, // nn.matmul to f32
// CHECK-NEXT: TK_OP_GEMM, {{[0-9]+}}, TK_EPILOGUE_NONE, TK_ARG(0), TK_ARG(1), TK_RESULT(5), TK_NONE, TK_NONE, TK_NONE, // nn.matmul
// CHECK-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 1, 256, TK_RESULT(4), TK_RESULT(5),
// CHECK-NEXT: TK_OP_END};
func.func @widened(%x: tensor<3x17x20xbf16>, %w: tensor<20x16xbf16>, %b: tensor<16xf32>, %p: tensor<3x17x16xf32>)
    -> (tensor<3x17x16xf32>, tensor<3x17x16xf32>, tensor<3x17x16xf32>, tensor<3x17x16xf32>, tensor<3x17x16xf32>, tensor<3x17x16xbf16>) {
  %y = nn.matmul %x, %w : tensor<3x17x20xbf16>, tensor<20x16xbf16> -> tensor<3x17x16xbf16>
  %f = nn.cast %y : tensor<3x17x16xbf16> to tensor<3x17x16xf32>
  %z = nn.add %f, %b : tensor<3x17x16xf32>, tensor<16xf32> -> tensor<3x17x16xf32>
  %g = nn.gelu %z : tensor<3x17x16xf32>
  %y2 = nn.matmul %x, %w : tensor<3x17x20xbf16>, tensor<20x16xbf16> -> tensor<3x17x16xbf16>
  %f2 = nn.cast %y2 : tensor<3x17x16xbf16> to tensor<3x17x16xf32>
  %d = nn.gelu_grad %p, %f2 : tensor<3x17x16xf32>
  %y3 = nn.matmul %x, %w : tensor<3x17x20xbf16>, tensor<20x16xbf16> -> tensor<3x17x16xbf16>
  %f3 = nn.cast %y3 : tensor<3x17x16xbf16> to tensor<3x17x16xf32>
  %y4 = nn.matmul %x, %w : tensor<3x17x20xbf16>, tensor<20x16xbf16> -> tensor<3x17x16xbf16>
  %f4 = nn.cast %y4 : tensor<3x17x16xbf16> to tensor<3x17x16xf32>
  return %g, %z, %d, %f3, %f4, %y4 : tensor<3x17x16xf32>, tensor<3x17x16xf32>, tensor<3x17x16xf32>, tensor<3x17x16xf32>, tensor<3x17x16xf32>, tensor<3x17x16xbf16>
}

// A kernel cuBLASLt can run only a prefix of (here a cast of the DGELU
// result joined it, as in ZB-H1's B work, whose W reader of %g sits in
// another fragment): the prefix becomes the epilogue and the rest a kernel
// reading the GEMM's output, so the decision and its bits do not depend on
// where the other readers of %g are.
// IR-LABEL: func.func @split(
// IR: nn.matmul {{.*}}nn.kernel_gemm = [[K:[0-9]+]]
// IR-NEXT: nn.cast {{.*}}nn.kernel = [[K]]
// IR-NEXT: nn.gelu_grad {{.*}}nn.kernel = [[K]]
// IR-NEXT: nn.cast {{.*}}nn.kernel = [[R:[0-9]+]]
// IR-NOT: nn.kernel = [[K]]
// IR: return
// CHECK-LABEL: static const int64_t tandem_split_program[] = {
// CHECK-NEXT: TK_OP_GEMM, {{[0-9]+}}, TK_EPILOGUE_DGELU, TK_ARG(0), TK_ARG(1), TK_RESULT(0), TK_NONE, TK_NONE, TK_ARG(2), // nn.matmul to f32 * gelu_grad
// CHECK-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 1, 256, TK_RESULT(1), TK_RESULT(0),
// CHECK-NEXT: TK_OP_END};
func.func @split(%x: tensor<3x17x20xbf16>, %w: tensor<20x16xbf16>, %p: tensor<3x17x16xf32>) -> (tensor<3x17x16xf32>, tensor<3x17x16xbf16>) {
  %y = nn.matmul %x, %w : tensor<3x17x20xbf16>, tensor<20x16xbf16> -> tensor<3x17x16xbf16>
  %f = nn.cast %y : tensor<3x17x16xbf16> to tensor<3x17x16xf32>
  %g = nn.gelu_grad %p, %f : tensor<3x17x16xf32>
  %h = nn.cast %g : tensor<3x17x16xf32> to tensor<3x17x16xbf16>
  return %g, %h : tensor<3x17x16xf32>, tensor<3x17x16xbf16>
}
