// RUN: tandem-opt %s | tandem-opt | FileCheck %s
// RUN: tandem-opt %s --mlir-print-op-generic | tandem-opt | FileCheck %s
// Pipeline structure: nn.stage_end carries one or more values of any element
// type across a stage boundary.

// CHECK-LABEL: func.func @stage_end_one(
// CHECK-SAME: %[[X:.*]]: tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
// CHECK-NEXT: %[[H:.*]] = nn.stage_end %[[X]] : tensor<8x16x32xf32>
// CHECK-NEXT: return %[[H]] : tensor<8x16x32xf32>
func.func @stage_end_one(%x: tensor<8x16x32xf32>) -> tensor<8x16x32xf32> {
  %h = nn.stage_end %x : tensor<8x16x32xf32>
  return %h : tensor<8x16x32xf32>
}

// CHECK-LABEL: func.func @stage_end_many(
// CHECK-SAME: %[[X:.*]]: tensor<8x16x32xbf16>, %[[T:.*]]: tensor<8x16xi32>, %[[M:.*]]: tensor<8xi64>, %[[S:.*]]: tensor<f64>) -> (tensor<8x16x32xbf16>, tensor<8x16xi32>, tensor<8xi64>, tensor<f64>)
// CHECK-NEXT: %[[A:.*]]:4 = nn.stage_end %[[X]], %[[T]], %[[M]], %[[S]] : tensor<8x16x32xbf16>, tensor<8x16xi32>, tensor<8xi64>, tensor<f64>
// CHECK-NEXT: return %[[A]]#0, %[[A]]#1, %[[A]]#2, %[[A]]#3 : tensor<8x16x32xbf16>, tensor<8x16xi32>, tensor<8xi64>, tensor<f64>
func.func @stage_end_many(%x: tensor<8x16x32xbf16>, %t: tensor<8x16xi32>, %m: tensor<8xi64>, %s: tensor<f64>) -> (tensor<8x16x32xbf16>, tensor<8x16xi32>, tensor<8xi64>, tensor<f64>) {
  %a, %b, %c, %d = nn.stage_end %x, %t, %m, %s : tensor<8x16x32xbf16>, tensor<8x16xi32>, tensor<8xi64>, tensor<f64>
  return %a, %b, %c, %d : tensor<8x16x32xbf16>, tensor<8x16xi32>, tensor<8xi64>, tensor<f64>
}

// CHECK-LABEL: func.func @stage_end_low_precision(
// CHECK-SAME: %[[X:.*]]: tensor<4xf16>, %[[Q:.*]]: tensor<4xf8E4M3FN>, %[[R:.*]]: tensor<4xf8E5M2>) -> (tensor<4xf16>, tensor<4xf8E4M3FN>, tensor<4xf8E5M2>)
// CHECK-NEXT: %[[A:.*]]:2 = nn.stage_end %[[X]], %[[Q]] {tandem.stage = 0 : i64} : tensor<4xf16>, tensor<4xf8E4M3FN>
// CHECK-NEXT: %[[C:.*]] = nn.stage_end %[[R]] {tandem.stage = 1 : i64} : tensor<4xf8E5M2>
// CHECK-NEXT: return %[[A]]#0, %[[A]]#1, %[[C]] : tensor<4xf16>, tensor<4xf8E4M3FN>, tensor<4xf8E5M2>
func.func @stage_end_low_precision(%x: tensor<4xf16>, %q: tensor<4xf8E4M3FN>, %r: tensor<4xf8E5M2>) -> (tensor<4xf16>, tensor<4xf8E4M3FN>, tensor<4xf8E5M2>) {
  %a, %b = nn.stage_end %x, %q {tandem.stage = 0 : i64} : tensor<4xf16>, tensor<4xf8E4M3FN>
  %c = nn.stage_end %r {tandem.stage = 1 : i64} : tensor<4xf8E5M2>
  return %a, %b, %c : tensor<4xf16>, tensor<4xf8E4M3FN>, tensor<4xf8E5M2>
}

// CHECK-LABEL: func.func @stage_end_unused_result(
// CHECK-SAME: %[[X:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[Y:.*]] = nn.exp %[[X]] : tensor<4xf32>
// CHECK-NEXT: %[[H:.*]] = nn.stage_end %[[Y]] : tensor<4xf32>
// CHECK-NEXT: return %[[Y]] : tensor<4xf32>
func.func @stage_end_unused_result(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = nn.exp %x : tensor<4xf32>
  %h = nn.stage_end %y : tensor<4xf32>
  return %y : tensor<4xf32>
}

// CHECK-LABEL: func.func @stage_end_chain(
// CHECK-SAME: %[[X:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[A:.*]] = nn.stage_end %[[X]] : tensor<4xf32>
// CHECK-NEXT: %[[B:.*]] = nn.relu %[[A]] : tensor<4xf32>
// CHECK-NEXT: %[[C:.*]] = nn.stage_end %[[B]] : tensor<4xf32>
// CHECK-NEXT: %[[D:.*]] = nn.tanh %[[C]] : tensor<4xf32>
// CHECK-NEXT: %[[E:.*]] = nn.stage_end %[[D]] : tensor<4xf32>
// CHECK-NEXT: return %[[E]] : tensor<4xf32>
func.func @stage_end_chain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = nn.stage_end %x : tensor<4xf32>
  %b = nn.relu %a : tensor<4xf32>
  %c = nn.stage_end %b : tensor<4xf32>
  %d = nn.tanh %c : tensor<4xf32>
  %e = nn.stage_end %d : tensor<4xf32>
  return %e : tensor<4xf32>
}
