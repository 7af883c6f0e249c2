// RUN: tandem-opt %s | tandem-opt | FileCheck %s
// RUN: tandem-opt %s --mlir-print-op-generic | tandem-opt | FileCheck %s
// RUN: tandem-opt %s --canonicalize | FileCheck %s --check-prefix=CANON
// The ops a JAX import needs: nn.erf and nn.erfc (exact GELU),
// nn.stop_gradient (log_softmax's max) and nn.one_hot (take_along_axis).

// CHECK-LABEL: func.func @error_functions(
// CHECK-SAME: %[[X:.*]]: tensor<3xf32>, %[[H:.*]]: tensor<2x2xbf16>, %[[D:.*]]: tensor<4xf64>
// CHECK-NEXT: %[[E:.*]] = nn.erf %[[X]] : tensor<3xf32>
// CHECK-NEXT: %[[C:.*]] = nn.erfc %[[X]] : tensor<3xf32>
// CHECK-NEXT: %[[EH:.*]] = nn.erf %[[H]] : tensor<2x2xbf16>
// CHECK-NEXT: %[[CD:.*]] = nn.erfc %[[D]] : tensor<4xf64>
// CHECK-NEXT: return %[[E]], %[[C]], %[[EH]], %[[CD]]
func.func @error_functions(%x: tensor<3xf32>, %h: tensor<2x2xbf16>, %d: tensor<4xf64>) -> (tensor<3xf32>, tensor<3xf32>, tensor<2x2xbf16>, tensor<4xf64>) {
  %e = nn.erf %x : tensor<3xf32>
  %c = nn.erfc %x : tensor<3xf32>
  %eh = nn.erf %h : tensor<2x2xbf16>
  %cd = nn.erfc %d : tensor<4xf64>
  return %e, %c, %eh, %cd : tensor<3xf32>, tensor<3xf32>, tensor<2x2xbf16>, tensor<4xf64>
}

// stop_gradient prints and parses, and canonicalization keeps it (folding it
// away would change the gradients nn-autodiff computes afterwards), also of
// a constant.
// CHECK-LABEL: func.func @stop_gradient(
// CHECK-SAME: %[[X:.*]]: tensor<8x1xf32>, %[[H:.*]]: tensor<f16>
// CHECK-NEXT: %[[S:.*]] = nn.stop_gradient %[[X]] : tensor<8x1xf32>
// CHECK-NEXT: %[[SH:.*]] = nn.stop_gradient %[[H]] {tandem.note = "kept"} : tensor<f16>
// CHECK-NEXT: %[[C:.*]] = nn.constant dense<2.000000e+00> : tensor<4xf32>
// CHECK-NEXT: %[[SC:.*]] = nn.stop_gradient %[[C]] : tensor<4xf32>
// CHECK-NEXT: return %[[S]], %[[SH]], %[[SC]]
// CANON-LABEL: func.func @stop_gradient(
// CANON: nn.stop_gradient %{{.*}} : tensor<8x1xf32>
// CANON: nn.stop_gradient %{{.*}} : tensor<f16>
// CANON: nn.stop_gradient %{{.*}} : tensor<4xf32>
func.func @stop_gradient(%x: tensor<8x1xf32>, %h: tensor<f16>) -> (tensor<8x1xf32>, tensor<f16>, tensor<4xf32>) {
  %s = nn.stop_gradient %x : tensor<8x1xf32>
  %sh = nn.stop_gradient %h {tandem.note = "kept"} : tensor<f16>
  %c = nn.constant dense<2.0> : tensor<4xf32>
  %sc = nn.stop_gradient %c : tensor<4xf32>
  return %s, %sh, %sc : tensor<8x1xf32>, tensor<f16>, tensor<4xf32>
}

// CHECK-LABEL: func.func @one_hot(
// CHECK-SAME: %[[I:.*]]: tensor<8x16xi32>, %[[L:.*]]: tensor<5xi64>, %[[S:.*]]: tensor<i32>
// CHECK-NEXT: %[[A:.*]] = nn.one_hot %[[I]] {classes = 256 : i64} : tensor<8x16xi32> -> tensor<8x16x256xf32>
// CHECK-NEXT: %[[B:.*]] = nn.one_hot %[[L]] {classes = 3 : i64} : tensor<5xi64> -> tensor<5x3xbf16>
// CHECK-NEXT: %[[C:.*]] = nn.one_hot %[[S]] {classes = 1 : i64} : tensor<i32> -> tensor<1xf64>
// CHECK-NEXT: return %[[A]], %[[B]], %[[C]]
func.func @one_hot(%i: tensor<8x16xi32>, %l: tensor<5xi64>, %s: tensor<i32>) -> (tensor<8x16x256xf32>, tensor<5x3xbf16>, tensor<1xf64>) {
  %a = nn.one_hot %i {classes = 256 : i64} : tensor<8x16xi32> -> tensor<8x16x256xf32>
  %b = nn.one_hot %l {classes = 3 : i64} : tensor<5xi64> -> tensor<5x3xbf16>
  %c = nn.one_hot %s {classes = 1 : i64} : tensor<i32> -> tensor<1xf64>
  return %a, %b, %c : tensor<8x16x256xf32>, tensor<5x3xbf16>, tensor<1xf64>
}
