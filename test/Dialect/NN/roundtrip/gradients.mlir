// RUN: tandem-opt %s | tandem-opt | FileCheck %s
// RUN: tandem-opt %s --mlir-print-op-generic | tandem-opt | FileCheck %s
// The ops nn-autodiff emits besides ordinary forward ops, and its attributes.

// CHECK-LABEL: func.func @greater_equal(
// CHECK: nn.greater_equal %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
func.func @greater_equal(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = nn.greater_equal %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @embedding_grad(
// CHECK: nn.embedding_grad %{{.*}}, %{{.*}} : tensor<2x3x4xf32>, tensor<2x3xi32> -> tensor<10x4xf32>
func.func @embedding_grad(%d: tensor<2x3x4xf32>, %ids: tensor<2x3xi32>) -> tensor<10x4xf32> {
  %0 = nn.embedding_grad %d, %ids : tensor<2x3x4xf32>, tensor<2x3xi32> -> tensor<10x4xf32>
  return %0 : tensor<10x4xf32>
}

// CHECK-LABEL: func.func @cross_entropy_grad(
// CHECK: nn.cross_entropy_grad %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x3x5xbf16>, tensor<2x3xi64>, tensor<bf16> -> tensor<2x3x5xbf16>
func.func @cross_entropy_grad(%l: tensor<2x3x5xbf16>, %t: tensor<2x3xi64>, %g: tensor<bf16>) -> tensor<2x3x5xbf16> {
  %0 = nn.cross_entropy_grad %l, %t, %g : tensor<2x3x5xbf16>, tensor<2x3xi64>, tensor<bf16> -> tensor<2x3x5xbf16>
  return %0 : tensor<2x3x5xbf16>
}

// CHECK-LABEL: func.func @tags(
// CHECK: nn.neg %{{.*}} {nn.id = 3 : i64} : tensor<4xf32>
// CHECK: nn.neg %{{.*}} {nn.grad = #nn.grad<B, of = 3>} : tensor<4xf32>
// CHECK: nn.neg %{{.*}} {nn.grad = #nn.grad<W, of = 12>} : tensor<4xf32>
func.func @tags(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.neg %x {nn.id = 3 : i64} : tensor<4xf32>
  %1 = nn.neg %0 {nn.grad = #nn.grad<B, of = 3>} : tensor<4xf32>
  %2 = nn.neg %1 {nn.grad = #nn.grad<W, of = 12>} : tensor<4xf32>
  return %2 : tensor<4xf32>
}

// CHECK-LABEL: func.func @attention_grad(
// CHECK: nn.attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {causal, heads = 2 : i64, scale = 5.000000e-01 : f64} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x2x4xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
func.func @attention_grad(%q: tensor<2x4x8xf32>, %y: tensor<2x4x8xf32>, %lse: tensor<2x2x4xf32>, %dy: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %dq, %dk, %dv = nn.attention_grad %q, %q, %q, %y, %lse, %dy {causal, heads = 2 : i64, scale = 0.5 : f64} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x2x4xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
  return %dk : tensor<2x4x8xf32>
}

// CHECK-LABEL: func.func @norm_grads(
// CHECK: %{{.*}}, %{{.*}} = nn.layer_norm_grad %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-05 : f64} : tensor<2x4x8xbf16>, tensor<8xbf16>, tensor<2x4x8xbf16>
// CHECK: %{{.*}}, %{{.*}} = nn.rms_norm_grad %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 9.9999999999999995E-7 : f64} : tensor<2x4x8xbf16>, tensor<8xbf16>, tensor<2x4x8xbf16>
func.func @norm_grads(%x: tensor<2x4x8xbf16>, %w: tensor<8xbf16>, %dy: tensor<2x4x8xbf16>) -> (tensor<2x4x8xbf16>, tensor<2x4x8xbf16>) {
  %dx, %xhat = nn.layer_norm_grad %x, %w, %dy {epsilon = 1.0e-05 : f64} : tensor<2x4x8xbf16>, tensor<8xbf16>, tensor<2x4x8xbf16>
  %rx, %rhat = nn.rms_norm_grad %x, %w, %dy {epsilon = 1.0e-06 : f64} : tensor<2x4x8xbf16>, tensor<8xbf16>, tensor<2x4x8xbf16>
  return %dx, %rhat : tensor<2x4x8xbf16>, tensor<2x4x8xbf16>
}

// CHECK-LABEL: func.func @gelu_grad(
// CHECK: nn.gelu_grad %{{.*}}, %{{.*}} : tensor<2x4x8xbf16>
func.func @gelu_grad(%x: tensor<2x4x8xbf16>, %dy: tensor<2x4x8xbf16>) -> tensor<2x4x8xbf16> {
  %dx = nn.gelu_grad %x, %dy : tensor<2x4x8xbf16>
  return %dx : tensor<2x4x8xbf16>
}
