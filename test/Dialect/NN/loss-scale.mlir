// Loss scaling in the IR: nn-mixed-precision records it, nn-autodiff seeds
// the backward pass with the scale (the initial scale times the
// @opt.loss_scale factor), nn-optimizer unscales the gradients in step ops,
// decides once whether every gradient is finite (a chain of per-gradient
// probes in canonical order), selects every result's old value on a
// non-finite step, and grows or backs off the scale.
//
// RUN: tandem-opt %s --nn-mixed-precision="policy=fp16 loss-scale=dynamic:1024:3" --nn-autodiff --nn-optimizer="optimizer=sgd lr=0.5" | FileCheck %s
// RUN: tandem-opt %s --nn-mixed-precision="policy=fp16 loss-scale=static:8" --nn-autodiff --nn-optimizer="optimizer=sgd lr=0.5" | FileCheck %s --check-prefix=STATIC

// CHECK-LABEL: func.func @forward_grad(
// CHECK: %[[LOSS:.*]] = nn.reduce_sum %{{.*}} [0, 1] {nn.id = 8 : i64} : tensor<2x4xf32> -> tensor<f32>
// CHECK-NEXT: %[[S0:.*]] = nn.constant dense<1.024000e+03> : tensor<f32> {nn.grad = #nn.grad<B, of = 8>}
// CHECK-NEXT: %[[F:.*]] = nn.param @opt.loss_scale {nn.grad = #nn.grad<B, of = 8>} : tensor<f32>
// CHECK-NEXT: %[[SEED:.*]] = nn.mul %[[S0]], %[[F]] {nn.grad = #nn.grad<B, of = 8>}
// CHECK-NEXT: nn.reshape %[[SEED]]
// The f16 matmul's weight gradient and the f16 bias add's bias gradient
// come back f32 through the cast rule.
// CHECK: %[[BG16:.*]] = nn.reduce_sum {{.*}} -> tensor<4xf16>
// CHECK-NEXT: %[[WG16:.*]] = nn.matmul {{.*}} -> tensor<4x4xf16>
// CHECK-NEXT: %[[BG:.*]] = nn.cast %[[BG16]] {nn.grad = #nn.grad<W, of = 4>} : tensor<4xf16> to tensor<4xf32>
// CHECK-NEXT: %[[WG:.*]] = nn.cast %[[WG16]] {nn.grad = #nn.grad<W, of = 2>} : tensor<4x4xf16> to tensor<4x4xf32>
// CHECK: return %[[LOSS]], %[[WG]], %[[BG]] : tensor<f32>, tensor<4x4xf32>, tensor<4xf32>

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: attributes {nn.updates = [@w, @b, @opt.step, @opt.loss_scale, @opt.good_steps]}
// CHECK: %[[WG:.*]] = nn.cast %{{.*}} {nn.grad = #nn.grad<W, of = 2>} : tensor<4x4xf16> to tensor<4x4xf32>
// CHECK-NEXT: %[[Z0:.*]] = nn.constant dense<0.000000e+00> : tensor<f32> {nn.optimizer}
// CHECK-NEXT: %[[P0:.*]] = nn.mul %[[WG]], %[[Z0]] {nn.optimizer}
// CHECK-NEXT: %[[Q0:.*]] = nn.reduce_sum %[[P0]] [0, 1] {nn.optimizer}
// CHECK-NEXT: nn.constant dense<0.000000e+00>
// CHECK-NEXT: %[[P1:.*]] = nn.mul %[[BG:.*]], %{{.*}} {nn.optimizer} : tensor<4xf32>, tensor<f32>
// CHECK-NEXT: %[[Q1:.*]] = nn.reduce_sum %[[P1]] [0] {nn.optimizer}
// CHECK-NEXT: %[[PROBE:.*]] = nn.add %[[Q0]], %[[Q1]] {nn.optimizer}
// CHECK-NEXT: %[[Z:.*]] = nn.constant dense<0.000000e+00> : tensor<f32> {nn.optimizer}
// CHECK-NEXT: %[[OK:.*]] = nn.greater_equal %[[PROBE]], %[[Z]] {nn.optimizer}
// CHECK-NEXT: %[[S0:.*]] = nn.constant dense<1.024000e+03> : tensor<f32> {nn.optimizer}
// CHECK-NEXT: %[[F:.*]] = nn.param @opt.loss_scale {nn.optimizer} : tensor<f32>
// CHECK-NEXT: %[[SCALE:.*]] = nn.mul %[[S0]], %[[F]] {nn.optimizer}
// CHECK-NEXT: %[[WU:.*]] = nn.div %[[WG]], %[[SCALE]] {nn.optimizer}
// CHECK-NEXT: %[[BU:.*]] = nn.div %[[BG]], %[[SCALE]] {nn.optimizer}
// CHECK-NEXT: %[[T:.*]] = nn.param @opt.step {nn.optimizer}
// CHECK: %[[T1:.*]] = nn.add %[[T]], %{{.*}} {nn.optimizer}
// CHECK: %[[W:.*]] = nn.param @w {nn.optimizer}
// CHECK-NEXT: nn.mul %[[WU]]
// CHECK-NEXT: %[[WNEW:.*]] = nn.sub %[[W]]
// CHECK-NEXT: %[[B:.*]] = nn.param @b {nn.optimizer}
// CHECK-NEXT: nn.mul %[[BU]]
// CHECK-NEXT: %[[BNEW:.*]] = nn.sub %[[B]]
// CHECK-NEXT: %[[WR:.*]] = nn.select %[[OK]], %[[WNEW]], %[[W]] {nn.optimizer} : tensor<f32>, tensor<4x4xf32>
// CHECK-NEXT: %[[BR:.*]] = nn.select %[[OK]], %[[BNEW]], %[[B]] {nn.optimizer} : tensor<f32>, tensor<4xf32>
// CHECK-NEXT: %[[TR:.*]] = nn.select %[[OK]], %[[T1]], %[[T]] {nn.optimizer} : tensor<f32>, tensor<f32>
// CHECK-NEXT: %[[G:.*]] = nn.param @opt.good_steps {nn.optimizer}
// CHECK-NEXT: %[[ONE:.*]] = nn.constant dense<1.000000e+00>
// CHECK-NEXT: %[[ZERO:.*]] = nn.constant dense<0.000000e+00>
// CHECK-NEXT: %[[G1:.*]] = nn.add %[[G]], %[[ONE]]
// CHECK-NEXT: %[[N:.*]] = nn.constant dense<3.000000e+00>
// CHECK-NEXT: %[[GROW:.*]] = nn.greater_equal %[[G1]], %[[N]]
// CHECK-NEXT: %[[TWO:.*]] = nn.constant dense<2.000000e+00>
// CHECK-NEXT: %[[F2:.*]] = nn.mul %[[F]], %[[TWO]]
// CHECK-NEXT: %[[FG:.*]] = nn.select %[[GROW]], %[[F2]], %[[F]]
// CHECK-NEXT: %[[HALF:.*]] = nn.constant dense<5.000000e-01>
// CHECK-NEXT: %[[FH:.*]] = nn.mul %[[F]], %[[HALF]]
// CHECK-NEXT: %[[FR:.*]] = nn.select %[[OK]], %[[FG]], %[[FH]]
// CHECK-NEXT: %[[GG:.*]] = nn.select %[[GROW]], %[[ZERO]], %[[G1]]
// CHECK-NEXT: %[[GR:.*]] = nn.select %[[OK]], %[[GG]], %[[ZERO]]
// CHECK-NEXT: return %{{.*}}, %[[WR]], %[[BR]], %[[TR]], %[[FR]], %[[GR]]

// Static scaling: a constant seed, the same unscaling and skip, no state.
// STATIC-NOT: @opt.loss_scale
// STATIC-LABEL: func.func @forward_grad(
// STATIC: nn.constant dense<8.000000e+00> : tensor<f32> {nn.grad = #nn.grad<B, of = 8>}
// STATIC-LABEL: func.func @train_step(
// STATIC-SAME: attributes {nn.updates = [@w, @b, @opt.step]}
// STATIC: %[[OK:.*]] = nn.greater_equal
// STATIC-NEXT: %[[S:.*]] = nn.constant dense<8.000000e+00> : tensor<f32> {nn.optimizer}
// STATIC-NEXT: nn.div %{{.*}}, %[[S]]
// STATIC: nn.select %[[OK]]
// STATIC-NOT: @opt.good_steps

nn.parameter @w : tensor<4x4xf32> = normal(0.02)
nn.parameter @b : tensor<4xf32> = zeros

func.func @forward(%x: tensor<2x4xf32>) -> tensor<f32> {
  %w = nn.param @w : tensor<4x4xf32>
  %b = nn.param @b : tensor<4xf32>
  %m = nn.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %a = nn.add %m, %b : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
  %l = nn.reduce_sum %a [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
