// RUN: tandem-translate %s --tandem-to-source | FileCheck %s

// GEMM epilogues: a matmul whose product only one elementwise op reads is
// one cblas_sgemm straight into the epilogue's output, then one in-place
// pass over it (the bias add and GELU; a residual add). A product with a
// second reader keeps its buffer and the consumer is a group of its own.

// CHECK: // tandem-cpu: 3 function(s), 3 fused group function(s) for 3 group call(s)
// CHECK-LABEL: void {{tk_fused_[0-9a-f]+}}(float *__restrict o0, const float *__restrict i0) {
// CHECK-NEXT: // epilogue of nn.matmul: nn.add, nn.gelu
// CHECK-NEXT: #pragma omp parallel for if (1024 >= 32768)
// CHECK-NEXT: for (int64_t d0 = 0; d0 < 16; ++d0) {
// CHECK-NEXT: #pragma omp simd
// CHECK-NEXT: for (int64_t d1 = 0; d1 < 64; ++d1) {
// CHECK-NEXT: const float t_i0 = i0[d1];
// CHECK-NEXT: const float t_g = o0[d0 * 64 + d1];
// CHECK-NEXT: const float t0 = (t_g + t_i0);
// CHECK-NEXT: const float t1 = (float)tk_gelu((double)t0);
// CHECK-NEXT: o0[d0 * 64 + d1] = t1;
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-LABEL: void {{tk_fused_[0-9a-f]+}}(float *__restrict o0, const float *__restrict i0) {
// CHECK-NEXT: // epilogue of nn.matmul: nn.add
// CHECK-NEXT: #pragma omp parallel for simd if (512 >= 32768)
// CHECK-NEXT: for (int64_t i = 0; i < 512; ++i) {
// CHECK-NEXT: const float t_i0 = i0[i];
// CHECK-NEXT: const float t_g = o0[i];
// CHECK-NEXT: const float t0 = (t_i0 + t_g);
// CHECK-NEXT: o0[i] = t0;

// CHECK-LABEL: extern "C" int tandem_mlp(
// CHECK-DAG: float *[[X:v[0-9]+]] = (float *)args[0];
// CHECK-DAG: float *[[W:v[0-9]+]] = (float *)args[1];
// CHECK-DAG: float *[[B:v[0-9]+]] = (float *)args[2];
// CHECK-DAG: float *[[Y:v[0-9]+]] = (float *)results[0];
// CHECK-NOT: tk_scratch +
// CHECK: // nn.matmul
// CHECK-NEXT: cblas_sgemm(kRowMajor, kNoTrans, kNoTrans, 16, 64, 32, 1.0f, [[X]], 32, [[W]], 64, 0.0f, [[Y]], 64);
// CHECK-NEXT: // gemm epilogue of 2 ops: add gelu
// CHECK-NEXT: tk_fused_{{[0-9a-f]+}}([[Y]], [[B]]);
// CHECK-NEXT: return 0;
func.func @mlp(%x: tensor<16x32xf32>, %w: tensor<32x64xf32>, %b: tensor<64xf32>) -> tensor<16x64xf32> {
  %h = nn.matmul %x, %w : tensor<16x32xf32>, tensor<32x64xf32> -> tensor<16x64xf32>
  %a = nn.add %h, %b : tensor<16x64xf32>, tensor<64xf32> -> tensor<16x64xf32>
  %y = nn.gelu %a : tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}

// CHECK-LABEL: extern "C" int tandem_residual(
// CHECK-DAG: float *[[R:v[0-9]+]] = (float *)args[2];
// CHECK-DAG: float *[[Y:v[0-9]+]] = (float *)results[0];
// CHECK-NOT: tk_scratch +
// CHECK: cblas_sgemm(kRowMajor, kNoTrans, kNoTrans, 16, 32, 32, 1.0f, {{v[0-9]+}}, 32, {{v[0-9]+}}, 32, 0.0f, [[Y]], 32);
// CHECK-NEXT: // gemm epilogue of 1 ops: add
// CHECK-NEXT: tk_fused_{{[0-9a-f]+}}([[Y]], [[R]]);
// CHECK-NEXT: return 0;

func.func @residual(%x: tensor<2x8x32xf32>, %w: tensor<32x32xf32>, %r: tensor<2x8x32xf32>) -> tensor<2x8x32xf32> {
  %h = nn.matmul %x, %w : tensor<2x8x32xf32>, tensor<32x32xf32> -> tensor<2x8x32xf32>
  %y = nn.add %r, %h : tensor<2x8x32xf32>, tensor<2x8x32xf32> -> tensor<2x8x32xf32>
  return %y : tensor<2x8x32xf32>
}

// CHECK-LABEL: extern "C" int tandem_shared(
// CHECK-DAG: float *[[H:v[0-9]+]] = (float *)results[0];
// CHECK-DAG: float *[[Y:v[0-9]+]] = (float *)results[1];
// CHECK: cblas_sgemm(kRowMajor, kNoTrans, kNoTrans, 16, 64, 32, 1.0f, {{v[0-9]+}}, 32, {{v[0-9]+}}, 64, 0.0f, [[H]], 64);
// CHECK-NEXT: // fused group of 1 ops: relu
// CHECK-NEXT: tk_fused_{{[0-9a-f]+}}([[Y]], [[H]]);

func.func @shared(%x: tensor<16x32xf32>, %w: tensor<32x64xf32>) -> (tensor<16x64xf32>, tensor<16x64xf32>) {
  %h = nn.matmul %x, %w : tensor<16x32xf32>, tensor<32x64xf32> -> tensor<16x64xf32>
  %y = nn.relu %h : tensor<16x64xf32>
  return %h, %y : tensor<16x64xf32>, tensor<16x64xf32>
}
