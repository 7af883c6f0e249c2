// RUN: tandem-translate %s --tandem-to-source | FileCheck %s

// Matmuls call BLAS (row-major, the transpose flags passed through); the
// bias add and GELU after the first one are its epilogue: BLAS writes into
// the GELU's buffer, which one loop nest (the bias read through a broadcast
// index) then updates in place.

// CHECK: void [[$G:tk_fused_[0-9a-f]+]](float *__restrict o0, const float *__restrict i0) {
// CHECK-NEXT: // epilogue of nn.matmul: nn.add, nn.gelu
// CHECK-NEXT: #pragma omp parallel for
// CHECK-NEXT: for (int64_t d0 = 0; d0 < 16; ++d0) {
// CHECK-NEXT: #pragma omp simd
// CHECK-NEXT: for (int64_t d1 = 0; d1 < 64; ++d1) {
// CHECK-NEXT: const float t_i0 = i0[d1];
// CHECK-NEXT: const float t_g = o0[d0 * 64 + d1];
// CHECK-NEXT: const float t0 = (t_g + t_i0);
// CHECK-NEXT: const float t1 = (float)tk_gelu((double)t0);
// CHECK-NEXT: o0[d0 * 64 + d1] = t1;

// CHECK-LABEL: extern "C" int tandem_dense(
// CHECK-DAG: float *[[X:v[0-9]+]] = (float *)args[0];
// CHECK-DAG: float *[[W:v[0-9]+]] = (float *)args[1];
// CHECK-DAG: float *[[B:v[0-9]+]] = (float *)args[2];
// CHECK-DAG: float *[[V:v[0-9]+]] = (float *)args[3];
// CHECK-DAG: float *[[Y:v[0-9]+]] = (float *)(tk_scratch + 0);
// CHECK-DAG: float *[[Z:v[0-9]+]] = (float *)results[0];
// CHECK: // nn.matmul
// CHECK-NEXT: cblas_sgemm(kRowMajor, kNoTrans, kNoTrans, 16, 64, 32, 1.0f, [[X]], 32, [[W]], 64, 0.0f, [[Y]], 64);
// CHECK-NEXT: // gemm epilogue of 2 ops: add gelu
// CHECK-NEXT: [[$G]]([[Y]], [[B]]);
// CHECK-NEXT: float *[[R:v[0-9]+]] = [[Y]]; // nn.reshape
// CHECK-NEXT: // nn.matmul
// CHECK-NEXT: for (int64_t b = 0; b < 2; ++b)
// CHECK-NEXT: cblas_sgemm(kRowMajor, kNoTrans, kTrans, 8, 8, 64, 1.0f, [[R]] + b * 512, 64, [[V]] + b * 512, 64, 0.0f, [[Z]] + b * 64, 8);
// CHECK-NEXT: return 0;
func.func @dense(%x: tensor<16x32xf32>, %w: tensor<32x64xf32>, %b: tensor<64xf32>, %v: tensor<2x8x64xf32>) -> tensor<2x8x8xf32> {
  %h = nn.matmul %x, %w : tensor<16x32xf32>, tensor<32x64xf32> -> tensor<16x64xf32>
  %a = nn.add %h, %b : tensor<16x64xf32>, tensor<64xf32> -> tensor<16x64xf32>
  %y = nn.gelu %a : tensor<16x64xf32>
  %r = nn.reshape %y : tensor<16x64xf32> to tensor<2x8x64xf32>
  %z = nn.matmul %r, %v {transpose_rhs} : tensor<2x8x64xf32>, tensor<2x8x64xf32> -> tensor<2x8x8xf32>
  return %z : tensor<2x8x8xf32>
}
