// RUN: tandem-translate %s --tandem-to-source | FileCheck %s

// bf16 tensors are 16-bit patterns (tk_bf16: exact to double, rounding once
// from double). A bf16 matmul multiplies float copies of its operands with
// cblas_sgemm and rounds the float product into the bf16 result; the bias
// add after it runs in double and rounds once, in place.

// CHECK: struct tk_bf16 {
// CHECK: void [[$G:tk_fused_[0-9a-f]+]](tk_bf16 *__restrict o0, const tk_bf16 *__restrict i0) {
// CHECK-NEXT: // epilogue of nn.matmul: nn.add
// CHECK: const tk_bf16 t_g = o0[d0 * 4 + d1];
// CHECK-NEXT: const tk_bf16 t0 = (t_g + t_i0);

// CHECK-LABEL: extern "C" int tandem_dense(
// CHECK-DAG: tk_bf16 *[[X:v[0-9]+]] = (tk_bf16 *)args[0];
// CHECK-DAG: tk_bf16 *[[W:v[0-9]+]] = (tk_bf16 *)args[1];
// CHECK-DAG: tk_bf16 *[[B:v[0-9]+]] = (tk_bf16 *)args[2];
// CHECK-DAG: tk_bf16 *[[Y:v[0-9]+]] = (tk_bf16 *)results[0];
// CHECK: // nn.matmul
// CHECK-NEXT: float *[[XF:v[0-9]+]] = (float *)(tk_scratch + 0);
// CHECK-NEXT: for (int64_t i = 0; i < 24; ++i)
// CHECK-NEXT: [[XF]][i] = (float)(double)[[X]][i];
// CHECK-NEXT: float *[[WF:v[0-9]+]] = (float *)(tk_scratch + 128);
// CHECK-NEXT: for (int64_t i = 0; i < 32; ++i)
// CHECK-NEXT: [[WF]][i] = (float)(double)[[W]][i];
// CHECK-NEXT: float *[[P:v[0-9]+]] = (float *)(tk_scratch + 256);
// CHECK-NEXT: cblas_sgemm(kRowMajor, kNoTrans, kNoTrans, 3, 4, 8, 1.0f, [[XF]], 8, [[WF]], 4, 0.0f, [[P]], 4);
// CHECK-NEXT: for (int64_t i = 0; i < 12; ++i)
// CHECK-NEXT: [[Y]][i] = (tk_bf16)(double)[[P]][i];
// CHECK-NEXT: // gemm epilogue of 1 ops: add
// CHECK-NEXT: [[$G]]([[Y]], [[B]]);
// CHECK-NEXT: return 0;
func.func @dense(%x: tensor<3x8xbf16>, %w: tensor<8x4xbf16>, %b: tensor<4xbf16>) -> tensor<3x4xbf16> {
  %h = nn.matmul %x, %w : tensor<3x8xbf16>, tensor<8x4xbf16> -> tensor<3x4xbf16>
  %y = nn.add %h, %b : tensor<3x4xbf16>, tensor<4xbf16> -> tensor<3x4xbf16>
  return %y : tensor<3x4xbf16>
}
