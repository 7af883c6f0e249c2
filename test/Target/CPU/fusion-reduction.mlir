// RUN: tandem-translate %s --tandem-to-source | FileCheck %s

// Reductions with their elementwise prologue and epilogue: one function per
// reduction, one parallel loop over outputs, the prologue computed per input
// element and summed in double in row-major order, the epilogue per output.
// No intermediate value and no accumulator uses scratch memory.

// CHECK: // tandem-cpu: 4 function(s), 6 fused group function(s) for 6 group call(s)

// Rows (last axis reduced): one output per iteration, a scalar accumulator.
// CHECK-LABEL: void {{tk_reduce_[0-9a-f]+}}(float *__restrict o0, const float *__restrict i0, const float *__restrict i1) {
// CHECK-NEXT: // nn.exp, nn.mul, nn.reduce_sum, nn.log, nn.add
// CHECK-NEXT: #pragma omp parallel for if (256 >= 32768)
// CHECK-NEXT: for (int64_t j0 = 0; j0 < 8; ++j0) {
// CHECK-NEXT: const int64_t d0 = j0;
// CHECK-NEXT: double acc = 0.0;
// CHECK-NEXT: for (int64_t d1 = 0; d1 < 32; ++d1) {
// CHECK-NEXT: const float t_i0 = i0[d0 * 32 + d1];
// CHECK-NEXT: const float t0 = (float)tandem_math::exp((double)t_i0);
// CHECK-NEXT: const float t1 = (t0 * t_i0);
// CHECK-NEXT: const double x = (double)t1;
// CHECK-NEXT: acc += x;
// CHECK-NEXT: }
// CHECK-NEXT: const float t_r = (float)(acc);
// CHECK-NEXT: const float t_i1 = i1[d0];
// CHECK-NEXT: const float t3 = (float)std::log((double)t_r);
// CHECK-NEXT: const float t4 = (t3 + t_i1);
// CHECK-NEXT: o0[j0] = t4;
// CHECK-NEXT: }
// CHECK-NEXT: }

// Columns (last axis kept, a bias gradient): blocks of 64 outputs along it,
// the reduced axes outside the block, in order.
// CHECK-LABEL: void {{tk_reduce_[0-9a-f]+}}(float *__restrict o0, const float *__restrict i0, const float *__restrict i1) {
// CHECK-NEXT: // nn.mul, nn.reduce_mean, nn.mul
// CHECK-NEXT: #pragma omp parallel for if (6144 >= 32768)
// CHECK-NEXT: for (int64_t q = 0; q < 2; ++q) {
// CHECK-NEXT: const int64_t j0 = q / 2, c0 = q % 2 * 64;
// CHECK-NEXT: const int64_t c1 = c0 + 64 < 96 ? c0 + 64 : 96;
// CHECK-NEXT: double acc[64];
// CHECK-NEXT: for (int64_t c = 0; c < 64; ++c)
// CHECK-NEXT: acc[c] = 0.0;
// CHECK-NEXT: for (int64_t d0 = 0; d0 < 4; ++d0) {
// CHECK-NEXT: for (int64_t d1 = 0; d1 < 16; ++d1) {
// CHECK-NEXT: #pragma omp simd
// CHECK-NEXT: for (int64_t d2 = c0; d2 < c1; ++d2) {
// CHECK-NEXT: const float t_i0 = i0[d0 * 1536 + d1 * 96 + d2];
// CHECK-NEXT: const float t_i1 = i1[d2];
// CHECK-NEXT: const float t0 = (t_i0 * t_i1);
// CHECK-NEXT: const double x = (double)t0;
// CHECK-NEXT: acc[d2 - c0] += x;
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: #pragma omp simd
// CHECK-NEXT: for (int64_t d2 = c0; d2 < c1; ++d2) {
// CHECK-NEXT: const int64_t j = j0 * 96 + d2;
// CHECK-NEXT: const float t_r = (float)(acc[d2 - c0] / (0x1p+6));
// CHECK-NEXT: const float t2 = (t_r * (float)(0x1p-1));
// CHECK-NEXT: o0[j] = t2;
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }

// A prologue value read after the reduction (the centred %c) is stored from
// inside the reduction's loop; the variance's epilogue (+ eps, rsqrt) runs
// per row.
// CHECK-LABEL: void {{tk_reduce_[0-9a-f]+}}(float *__restrict o0, float *__restrict o1, const float *__restrict i0, const float *__restrict i1) {
// CHECK-NEXT: // nn.sub, nn.mul, nn.reduce_mean, nn.add, nn.rsqrt
// CHECK: const float t0 = (t_i0 - t_i1);
// CHECK-NEXT: const float t1 = (t0 * t0);
// CHECK-NEXT: o0[d0 * 10 + d1] = t0;
// CHECK-NEXT: const double x = (double)t1;
// CHECK-NEXT: acc += x;
// CHECK-NEXT: }
// CHECK-NEXT: const float t_r = (float)(acc / (0x1.4p+3));
// CHECK-NEXT: const float t3 = (t_r + (float)(0x1.4f8b58p-17));
// CHECK-NEXT: const float t4 = (float)tk_rsqrt((double)t3);
// CHECK-NEXT: o1[j0] = t4;

// CHECK-LABEL: extern "C" int tandem_row(
// CHECK-NOT: tk_scratch +
// CHECK: // fused reduction of 5 ops: exp mul reduce_sum log add
// CHECK-NEXT: tk_reduce_{{[0-9a-f]+}}({{v[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}});
// CHECK-NEXT: return 0;
func.func @row(%x: tensor<8x32xf32>, %s: tensor<8xf32>) -> tensor<8xf32> {
  %e = nn.exp %x : tensor<8x32xf32>
  %m = nn.mul %e, %x : tensor<8x32xf32>, tensor<8x32xf32> -> tensor<8x32xf32>
  %r = nn.reduce_sum %m [1] : tensor<8x32xf32> -> tensor<8xf32>
  %l = nn.log %r : tensor<8xf32>
  %y = nn.add %l, %s : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// CHECK-LABEL: extern "C" int tandem_column(
// CHECK-NOT: tk_scratch +
// CHECK: // fused reduction of 3 ops: mul reduce_mean mul
// CHECK-NEXT: tk_reduce_{{[0-9a-f]+}}(
// CHECK-NEXT: return 0;

func.func @column(%g: tensor<4x16x96xf32>, %k: tensor<96xf32>) -> tensor<96xf32> {
  %h = nn.mul %g, %k : tensor<4x16x96xf32>, tensor<96xf32> -> tensor<4x16x96xf32>
  %r = nn.reduce_mean %h [0, 1] : tensor<4x16x96xf32> -> tensor<96xf32>
  %half = nn.constant dense<0.5> : tensor<f32>
  %y = nn.mul %r, %half : tensor<96xf32>, tensor<f32> -> tensor<96xf32>
  return %y : tensor<96xf32>
}

// CHECK-LABEL: extern "C" int tandem_norm(
// CHECK: // fused reduction of 5 ops: sub mul reduce_mean add rsqrt
// CHECK-NEXT: tk_reduce_{{[0-9a-f]+}}(
// CHECK-NEXT: // fused group of 1 ops: mul
// CHECK-NEXT: tk_fused_{{[0-9a-f]+}}(
// CHECK-NEXT: return 0;

func.func @norm(%x: tensor<6x10xf32>, %mu: tensor<6x1xf32>) -> tensor<6x10xf32> {
  %c = nn.sub %x, %mu : tensor<6x10xf32>, tensor<6x1xf32> -> tensor<6x10xf32>
  %sq = nn.mul %c, %c : tensor<6x10xf32>, tensor<6x10xf32> -> tensor<6x10xf32>
  %v = nn.reduce_mean %sq [1] keepdims : tensor<6x10xf32> -> tensor<6x1xf32>
  %eps = nn.constant dense<1.0e-5> : tensor<f32>
  %ve = nn.add %v, %eps : tensor<6x1xf32>, tensor<f32> -> tensor<6x1xf32>
  %inv = nn.rsqrt %ve : tensor<6x1xf32>
  %y = nn.mul %c, %inv : tensor<6x10xf32>, tensor<6x1xf32> -> tensor<6x10xf32>
  return %y : tensor<6x10xf32>
}

// A producer read by another op before the reduction stays a group of its
// own: the reduction reads its stored values.
// CHECK-LABEL: extern "C" int tandem_sealed(
// CHECK: // fused group of 1 ops: exp
// CHECK: // nn.transpose
// CHECK: // fused reduction of 1 ops: reduce_max
// CHECK-NEXT: tk_reduce_{{[0-9a-f]+}}(

func.func @sealed(%x: tensor<8x32xf32>) -> (tensor<8x32xf32>, tensor<8xf32>) {
  %e = nn.exp %x : tensor<8x32xf32>
  %t = nn.transpose %e, [1, 0] : tensor<8x32xf32> -> tensor<32x8xf32>
  %r = nn.reduce_max %e [1] : tensor<8x32xf32> -> tensor<8xf32>
  return %e, %r : tensor<8x32xf32>, tensor<8xf32>
}
