// RUN: tandem-translate %s --tandem-to-source | FileCheck %s

// A chain of elementwise ops with the same shape is one loop: intermediate
// values are locals of the loop body, only the values read outside the
// chain (%e, returned too, and %y) are stored.

// CHECK: // tandem-cpu: 1 function(s), 1 fused group function(s) for 1 group call(s)
// CHECK: void [[$G:tk_fused_[0-9a-f]+]](float *__restrict o0, float *__restrict o1, const float *__restrict i0, const float *__restrict i1) {
// CHECK-NEXT: // nn.exp, nn.mul, nn.sub, nn.tanh, nn.maximum
// CHECK-NEXT: #pragma omp parallel for simd if (128 >= 32768)
// CHECK-NEXT: for (int64_t i = 0; i < 128; ++i) {
// CHECK-NEXT: const float t_i0 = i0[i];
// CHECK-NEXT: const float t_i1 = i1[0];
// CHECK-NEXT: const float t0 = (float)tandem_math::exp((double)t_i0);
// CHECK-NEXT: const float t1 = (t0 * t_i1);
// CHECK-NEXT: const float t2 = (t1 - (float)(0x1p-1));
// CHECK-NEXT: const float t3 = (float)tandem_math::tanh((double)t2);
// CHECK-NEXT: const float t4 = tk_maximum(t3, t0);
// CHECK-NEXT: o0[i] = t0;
// CHECK-NEXT: o1[i] = t4;
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NOT: for (

// CHECK-LABEL: extern "C" int tandem_chain(
// CHECK-NOT: for (
// CHECK: // fused group of 5 ops: exp mul sub tanh maximum
// CHECK-NEXT: [[$G]]({{v[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}});
// CHECK-NEXT: return 0;
func.func @chain(%x: tensor<128xf32>, %s: tensor<f32>) -> (tensor<128xf32>, tensor<128xf32>) {
  %e = nn.exp %x : tensor<128xf32>
  %m = nn.mul %e, %s : tensor<128xf32>, tensor<f32> -> tensor<128xf32>
  %half = nn.constant dense<0.5> : tensor<f32>
  %d = nn.sub %m, %half : tensor<128xf32>, tensor<f32> -> tensor<128xf32>
  %t = nn.tanh %d : tensor<128xf32>
  %y = nn.maximum %t, %e : tensor<128xf32>, tensor<128xf32> -> tensor<128xf32>
  return %e, %y : tensor<128xf32>, tensor<128xf32>
}
