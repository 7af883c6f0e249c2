// RUN: tandem-opt %s | tandem-opt | FileCheck %s
// RUN: tandem-opt %s --mlir-print-op-generic | tandem-opt | FileCheck %s
// nn.constant over every element type (splat, dense, rank 0) and nn.cast
// between element types, with and without an explicit f8 overflow choice.

// CHECK-LABEL: func.func @constant_all_types(
// CHECK-SAME: ) -> (tensor<4xf64>, tensor<2x2xf32>, tensor<f16>, tensor<3xbf16>, tensor<2xf8E4M3FN>, tensor<2xf8E5M2>, tensor<2x3xi32>, tensor<i64>)
// CHECK-NEXT: %[[A:.*]] = nn.constant dense<1.500000e+00> : tensor<4xf64>
// CHECK-NEXT: %[[B:.*]] = nn.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00{{\]\]}}> : tensor<2x2xf32>
// CHECK-NEXT: %[[C:.*]] = nn.constant dense<-2.500000e-01> : tensor<f16>
// CHECK-NEXT: %[[D:.*]] = nn.constant dense<[1.000000e+00, 5.000000e-01, 2.500000e-01]> : tensor<3xbf16>
// CHECK-NEXT: %[[E:.*]] = nn.constant dense<[4.480000e+02, -2.000000e+00]> : tensor<2xf8E4M3FN>
// CHECK-NEXT: %[[F:.*]] = nn.constant dense<[5.734400e+04, 1.000000e+00]> : tensor<2xf8E5M2>
// CHECK-NEXT: %[[G:.*]] = nn.constant dense<{{\[\[}}1, 2, 3], [4, 5, 6{{\]\]}}> : tensor<2x3xi32>
// CHECK-NEXT: %[[H:.*]] = nn.constant dense<-7> : tensor<i64>
// CHECK-NEXT: return %[[A]], %[[B]], %[[C]], %[[D]], %[[E]], %[[F]], %[[G]], %[[H]] : tensor<4xf64>, tensor<2x2xf32>, tensor<f16>, tensor<3xbf16>, tensor<2xf8E4M3FN>, tensor<2xf8E5M2>, tensor<2x3xi32>, tensor<i64>
func.func @constant_all_types() -> (tensor<4xf64>, tensor<2x2xf32>, tensor<f16>, tensor<3xbf16>, tensor<2xf8E4M3FN>, tensor<2xf8E5M2>, tensor<2x3xi32>, tensor<i64>) {
  %a = nn.constant dense<1.500000e+00> : tensor<4xf64>
  %b = nn.constant dense<[[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
  %c = nn.constant dense<-2.500000e-01> : tensor<f16>
  %d = nn.constant dense<[1.000000e+00, 5.000000e-01, 2.500000e-01]> : tensor<3xbf16>
  %e = nn.constant dense<[4.480000e+02, -2.000000e+00]> : tensor<2xf8E4M3FN>
  %f = nn.constant dense<[5.734400e+04, 1.000000e+00]> : tensor<2xf8E5M2>
  %g = nn.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %h = nn.constant dense<-7> : tensor<i64>
  return %a, %b, %c, %d, %e, %f, %g, %h : tensor<4xf64>, tensor<2x2xf32>, tensor<f16>, tensor<3xbf16>, tensor<2xf8E4M3FN>, tensor<2xf8E5M2>, tensor<2x3xi32>, tensor<i64>
}

// CHECK-LABEL: func.func @constant_with_attr(
// CHECK-SAME: ) -> tensor<2xf32>
// CHECK-NEXT: %[[A:.*]] = nn.constant dense<[0.000000e+00, 0xFF800000]> : tensor<2xf32> {tandem.note = "kept"}
// CHECK-NEXT: return %[[A]] : tensor<2xf32>
func.func @constant_with_attr() -> tensor<2xf32> {
  %a = nn.constant dense<[0.000000e+00, 0xFF800000]> : tensor<2xf32> {tandem.note = "kept"}
  return %a : tensor<2xf32>
}

// CHECK-LABEL: func.func @cast_float_widths(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32>) -> (tensor<4x8xf64>, tensor<4x8xf16>, tensor<4x8xbf16>, tensor<4x8xf32>)
// CHECK-NEXT: %[[A:.*]] = nn.cast %[[X]] : tensor<4x8xf32> to tensor<4x8xf64>
// CHECK-NEXT: %[[B:.*]] = nn.cast %[[A]] : tensor<4x8xf64> to tensor<4x8xf16>
// CHECK-NEXT: %[[C:.*]] = nn.cast %[[B]] : tensor<4x8xf16> to tensor<4x8xbf16>
// CHECK-NEXT: %[[D:.*]] = nn.cast %[[C]] : tensor<4x8xbf16> to tensor<4x8xf32>
// CHECK-NEXT: return %[[A]], %[[B]], %[[C]], %[[D]] : tensor<4x8xf64>, tensor<4x8xf16>, tensor<4x8xbf16>, tensor<4x8xf32>
func.func @cast_float_widths(%x: tensor<4x8xf32>) -> (tensor<4x8xf64>, tensor<4x8xf16>, tensor<4x8xbf16>, tensor<4x8xf32>) {
  %a = nn.cast %x : tensor<4x8xf32> to tensor<4x8xf64>
  %b = nn.cast %a : tensor<4x8xf64> to tensor<4x8xf16>
  %c = nn.cast %b : tensor<4x8xf16> to tensor<4x8xbf16>
  %d = nn.cast %c : tensor<4x8xbf16> to tensor<4x8xf32>
  return %a, %b, %c, %d : tensor<4x8xf64>, tensor<4x8xf16>, tensor<4x8xbf16>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @cast_to_f8_saturate(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32>, %[[H:.*]]: tensor<4x8xbf16>) -> (tensor<4x8xf8E4M3FN>, tensor<4x8xf8E4M3FN>, tensor<4x8xf8E5M2>, tensor<4x8xf8E5M2>)
// CHECK-NEXT: %[[A:.*]] = nn.cast %[[X]] {saturate = true} : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
// CHECK-NEXT: %[[B:.*]] = nn.cast %[[H]] {saturate = false} : tensor<4x8xbf16> to tensor<4x8xf8E4M3FN>
// CHECK-NEXT: %[[C:.*]] = nn.cast %[[X]] {saturate = true} : tensor<4x8xf32> to tensor<4x8xf8E5M2>
// CHECK-NEXT: %[[D:.*]] = nn.cast %[[A]] {saturate = false} : tensor<4x8xf8E4M3FN> to tensor<4x8xf8E5M2>
// CHECK-NEXT: return %[[A]], %[[B]], %[[C]], %[[D]] : tensor<4x8xf8E4M3FN>, tensor<4x8xf8E4M3FN>, tensor<4x8xf8E5M2>, tensor<4x8xf8E5M2>
func.func @cast_to_f8_saturate(%x: tensor<4x8xf32>, %h: tensor<4x8xbf16>) -> (tensor<4x8xf8E4M3FN>, tensor<4x8xf8E4M3FN>, tensor<4x8xf8E5M2>, tensor<4x8xf8E5M2>) {
  %a = nn.cast %x {saturate = true} : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
  %b = nn.cast %h {saturate = false} : tensor<4x8xbf16> to tensor<4x8xf8E4M3FN>
  %c = nn.cast %x {saturate = true} : tensor<4x8xf32> to tensor<4x8xf8E5M2>
  %d = nn.cast %a {saturate = false} : tensor<4x8xf8E4M3FN> to tensor<4x8xf8E5M2>
  return %a, %b, %c, %d : tensor<4x8xf8E4M3FN>, tensor<4x8xf8E4M3FN>, tensor<4x8xf8E5M2>, tensor<4x8xf8E5M2>
}

// CHECK-LABEL: func.func @cast_from_f8(
// CHECK-SAME: %[[A:.*]]: tensor<16xf8E4M3FN>, %[[B:.*]]: tensor<16xf8E5M2>) -> (tensor<16xf32>, tensor<16xbf16>)
// CHECK-NEXT: %[[X:.*]] = nn.cast %[[A]] : tensor<16xf8E4M3FN> to tensor<16xf32>
// CHECK-NEXT: %[[Y:.*]] = nn.cast %[[B]] : tensor<16xf8E5M2> to tensor<16xbf16>
// CHECK-NEXT: return %[[X]], %[[Y]] : tensor<16xf32>, tensor<16xbf16>
func.func @cast_from_f8(%a: tensor<16xf8E4M3FN>, %b: tensor<16xf8E5M2>) -> (tensor<16xf32>, tensor<16xbf16>) {
  %x = nn.cast %a : tensor<16xf8E4M3FN> to tensor<16xf32>
  %y = nn.cast %b : tensor<16xf8E5M2> to tensor<16xbf16>
  return %x, %y : tensor<16xf32>, tensor<16xbf16>
}

// CHECK-LABEL: func.func @cast_int_float(
// CHECK-SAME: %[[I:.*]]: tensor<8xi32>, %[[X:.*]]: tensor<8xf64>) -> (tensor<8xf32>, tensor<8xi64>, tensor<8xi32>, tensor<8xf8E5M2>)
// CHECK-NEXT: %[[A:.*]] = nn.cast %[[I]] : tensor<8xi32> to tensor<8xf32>
// CHECK-NEXT: %[[B:.*]] = nn.cast %[[X]] : tensor<8xf64> to tensor<8xi64>
// CHECK-NEXT: %[[C:.*]] = nn.cast %[[B]] : tensor<8xi64> to tensor<8xi32>
// CHECK-NEXT: %[[D:.*]] = nn.cast %[[I]] {saturate = true} : tensor<8xi32> to tensor<8xf8E5M2>
// CHECK-NEXT: return %[[A]], %[[B]], %[[C]], %[[D]] : tensor<8xf32>, tensor<8xi64>, tensor<8xi32>, tensor<8xf8E5M2>
func.func @cast_int_float(%i: tensor<8xi32>, %x: tensor<8xf64>) -> (tensor<8xf32>, tensor<8xi64>, tensor<8xi32>, tensor<8xf8E5M2>) {
  %a = nn.cast %i : tensor<8xi32> to tensor<8xf32>
  %b = nn.cast %x : tensor<8xf64> to tensor<8xi64>
  %c = nn.cast %b : tensor<8xi64> to tensor<8xi32>
  %d = nn.cast %i {saturate = true} : tensor<8xi32> to tensor<8xf8E5M2>
  return %a, %b, %c, %d : tensor<8xf32>, tensor<8xi64>, tensor<8xi32>, tensor<8xf8E5M2>
}

// CHECK-LABEL: func.func @cast_rank0_identity(
// CHECK-SAME: %[[X:.*]]: tensor<f32>) -> tensor<f32>
// CHECK-NEXT: %[[A:.*]] = nn.cast %[[X]] : tensor<f32> to tensor<f32>
// CHECK-NEXT: return %[[A]] : tensor<f32>
func.func @cast_rank0_identity(%x: tensor<f32>) -> tensor<f32> {
  %a = nn.cast %x : tensor<f32> to tensor<f32>
  return %a : tensor<f32>
}
