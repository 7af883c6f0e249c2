// RUN: tandem-opt %s | tandem-opt | FileCheck %s
// RUN: tandem-opt %s --mlir-print-op-generic | tandem-opt | FileCheck %s
// nn.matmul: 2-D, batched, a 2-D rhs shared across batches, both transpose
// flags, and every float element type.

// CHECK-LABEL: func.func @matmul_2d_all_float_types(
// CHECK-SAME: %[[A0:.*]]: tensor<4x8xf64>, %[[B0:.*]]: tensor<8x3xf64>, %[[A1:.*]]: tensor<4x8xf32>, %[[B1:.*]]: tensor<8x3xf32>, %[[A2:.*]]: tensor<4x8xf16>, %[[B2:.*]]: tensor<8x3xf16>, %[[A3:.*]]: tensor<4x8xbf16>, %[[B3:.*]]: tensor<8x3xbf16>, %[[A4:.*]]: tensor<4x8xf8E4M3FN>, %[[B4:.*]]: tensor<8x3xf8E4M3FN>, %[[A5:.*]]: tensor<4x8xf8E5M2>, %[[B5:.*]]: tensor<8x3xf8E5M2>) -> (tensor<4x3xf64>, tensor<4x3xf32>, tensor<4x3xf16>, tensor<4x3xbf16>, tensor<4x3xf8E4M3FN>, tensor<4x3xf8E5M2>)
// CHECK-NEXT: %[[R0:.*]] = nn.matmul %[[A0]], %[[B0]] : tensor<4x8xf64>, tensor<8x3xf64> -> tensor<4x3xf64>
// CHECK-NEXT: %[[R1:.*]] = nn.matmul %[[A1]], %[[B1]] : tensor<4x8xf32>, tensor<8x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT: %[[R2:.*]] = nn.matmul %[[A2]], %[[B2]] : tensor<4x8xf16>, tensor<8x3xf16> -> tensor<4x3xf16>
// CHECK-NEXT: %[[R3:.*]] = nn.matmul %[[A3]], %[[B3]] : tensor<4x8xbf16>, tensor<8x3xbf16> -> tensor<4x3xbf16>
// CHECK-NEXT: %[[R4:.*]] = nn.matmul %[[A4]], %[[B4]] : tensor<4x8xf8E4M3FN>, tensor<8x3xf8E4M3FN> -> tensor<4x3xf8E4M3FN>
// CHECK-NEXT: %[[R5:.*]] = nn.matmul %[[A5]], %[[B5]] : tensor<4x8xf8E5M2>, tensor<8x3xf8E5M2> -> tensor<4x3xf8E5M2>
// CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]] : tensor<4x3xf64>, tensor<4x3xf32>, tensor<4x3xf16>, tensor<4x3xbf16>, tensor<4x3xf8E4M3FN>, tensor<4x3xf8E5M2>
func.func @matmul_2d_all_float_types(%a0: tensor<4x8xf64>, %b0: tensor<8x3xf64>, %a1: tensor<4x8xf32>, %b1: tensor<8x3xf32>, %a2: tensor<4x8xf16>, %b2: tensor<8x3xf16>, %a3: tensor<4x8xbf16>, %b3: tensor<8x3xbf16>, %a4: tensor<4x8xf8E4M3FN>, %b4: tensor<8x3xf8E4M3FN>, %a5: tensor<4x8xf8E5M2>, %b5: tensor<8x3xf8E5M2>) -> (tensor<4x3xf64>, tensor<4x3xf32>, tensor<4x3xf16>, tensor<4x3xbf16>, tensor<4x3xf8E4M3FN>, tensor<4x3xf8E5M2>) {
  %r0 = nn.matmul %a0, %b0 : tensor<4x8xf64>, tensor<8x3xf64> -> tensor<4x3xf64>
  %r1 = nn.matmul %a1, %b1 : tensor<4x8xf32>, tensor<8x3xf32> -> tensor<4x3xf32>
  %r2 = nn.matmul %a2, %b2 : tensor<4x8xf16>, tensor<8x3xf16> -> tensor<4x3xf16>
  %r3 = nn.matmul %a3, %b3 : tensor<4x8xbf16>, tensor<8x3xbf16> -> tensor<4x3xbf16>
  %r4 = nn.matmul %a4, %b4 : tensor<4x8xf8E4M3FN>, tensor<8x3xf8E4M3FN> -> tensor<4x3xf8E4M3FN>
  %r5 = nn.matmul %a5, %b5 : tensor<4x8xf8E5M2>, tensor<8x3xf8E5M2> -> tensor<4x3xf8E5M2>
  return %r0, %r1, %r2, %r3, %r4, %r5 : tensor<4x3xf64>, tensor<4x3xf32>, tensor<4x3xf16>, tensor<4x3xbf16>, tensor<4x3xf8E4M3FN>, tensor<4x3xf8E5M2>
}

// CHECK-LABEL: func.func @matmul_2d_transposes(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32>, %[[XT:.*]]: tensor<8x4xf32>, %[[W:.*]]: tensor<8x3xf32>, %[[WT:.*]]: tensor<3x8xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>)
// CHECK-NEXT: %[[A:.*]] = nn.matmul %[[X]], %[[W]] : tensor<4x8xf32>, tensor<8x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT: %[[B:.*]] = nn.matmul %[[XT]], %[[W]] {transpose_lhs} : tensor<8x4xf32>, tensor<8x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT: %[[C:.*]] = nn.matmul %[[X]], %[[WT]] {transpose_rhs} : tensor<4x8xf32>, tensor<3x8xf32> -> tensor<4x3xf32>
// CHECK-NEXT: %[[D:.*]] = nn.matmul %[[XT]], %[[WT]] {transpose_lhs, transpose_rhs} : tensor<8x4xf32>, tensor<3x8xf32> -> tensor<4x3xf32>
// CHECK-NEXT: return %[[A]], %[[B]], %[[C]], %[[D]] : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
func.func @matmul_2d_transposes(%x: tensor<4x8xf32>, %xt: tensor<8x4xf32>, %w: tensor<8x3xf32>, %wt: tensor<3x8xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>) {
  %a = nn.matmul %x, %w : tensor<4x8xf32>, tensor<8x3xf32> -> tensor<4x3xf32>
  %b = nn.matmul %xt, %w {transpose_lhs} : tensor<8x4xf32>, tensor<8x3xf32> -> tensor<4x3xf32>
  %c = nn.matmul %x, %wt {transpose_rhs} : tensor<4x8xf32>, tensor<3x8xf32> -> tensor<4x3xf32>
  %d = nn.matmul %xt, %wt {transpose_lhs, transpose_rhs} : tensor<8x4xf32>, tensor<3x8xf32> -> tensor<4x3xf32>
  return %a, %b, %c, %d : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
}

// CHECK-LABEL: func.func @matmul_batched(
// CHECK-SAME: %[[Q:.*]]: tensor<2x4x16x8xf32>, %[[K:.*]]: tensor<2x4x16x8xf32>, %[[P:.*]]: tensor<2x4x16x16xf32>) -> (tensor<2x4x16x16xf32>, tensor<2x4x8x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x8x16xf32>)
// CHECK-NEXT: %[[S:.*]] = nn.matmul %[[Q]], %[[K]] {transpose_rhs} : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x16x16xf32>
// CHECK-NEXT: %[[G:.*]] = nn.matmul %[[Q]], %[[K]] {transpose_lhs} : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x8x8xf32>
// CHECK-NEXT: %[[O:.*]] = nn.matmul %[[P]], %[[K]] : tensor<2x4x16x16xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x16x8xf32>
// CHECK-NEXT: %[[T:.*]] = nn.matmul %[[K]], %[[P]] {transpose_lhs, transpose_rhs} : tensor<2x4x16x8xf32>, tensor<2x4x16x16xf32> -> tensor<2x4x8x16xf32>
// CHECK-NEXT: return %[[S]], %[[G]], %[[O]], %[[T]] : tensor<2x4x16x16xf32>, tensor<2x4x8x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x8x16xf32>
func.func @matmul_batched(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>, %p: tensor<2x4x16x16xf32>) -> (tensor<2x4x16x16xf32>, tensor<2x4x8x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x8x16xf32>) {
  %s = nn.matmul %q, %k {transpose_rhs} : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x16x16xf32>
  %g = nn.matmul %q, %k {transpose_lhs} : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x8x8xf32>
  %o = nn.matmul %p, %k : tensor<2x4x16x16xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x16x8xf32>
  %t = nn.matmul %k, %p {transpose_lhs, transpose_rhs} : tensor<2x4x16x8xf32>, tensor<2x4x16x16xf32> -> tensor<2x4x8x16xf32>
  return %s, %g, %o, %t : tensor<2x4x16x16xf32>, tensor<2x4x8x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x8x16xf32>
}

// CHECK-LABEL: func.func @matmul_shared_rhs(
// CHECK-SAME: %[[X:.*]]: tensor<8x16x32xbf16>, %[[W:.*]]: tensor<32x96xbf16>, %[[WT:.*]]: tensor<96x32xbf16>, %[[XT:.*]]: tensor<8x32x16xbf16>) -> (tensor<8x16x96xbf16>, tensor<8x16x96xbf16>, tensor<8x16x96xbf16>)
// CHECK-NEXT: %[[A:.*]] = nn.matmul %[[X]], %[[W]] : tensor<8x16x32xbf16>, tensor<32x96xbf16> -> tensor<8x16x96xbf16>
// CHECK-NEXT: %[[B:.*]] = nn.matmul %[[X]], %[[WT]] {transpose_rhs} : tensor<8x16x32xbf16>, tensor<96x32xbf16> -> tensor<8x16x96xbf16>
// CHECK-NEXT: %[[C:.*]] = nn.matmul %[[XT]], %[[W]] {tandem.note = "kept", transpose_lhs} : tensor<8x32x16xbf16>, tensor<32x96xbf16> -> tensor<8x16x96xbf16>
// CHECK-NEXT: return %[[A]], %[[B]], %[[C]] : tensor<8x16x96xbf16>, tensor<8x16x96xbf16>, tensor<8x16x96xbf16>
func.func @matmul_shared_rhs(%x: tensor<8x16x32xbf16>, %w: tensor<32x96xbf16>, %wt: tensor<96x32xbf16>, %xt: tensor<8x32x16xbf16>) -> (tensor<8x16x96xbf16>, tensor<8x16x96xbf16>, tensor<8x16x96xbf16>) {
  %a = nn.matmul %x, %w : tensor<8x16x32xbf16>, tensor<32x96xbf16> -> tensor<8x16x96xbf16>
  %b = nn.matmul %x, %wt {transpose_rhs} : tensor<8x16x32xbf16>, tensor<96x32xbf16> -> tensor<8x16x96xbf16>
  %c = nn.matmul %xt, %w {tandem.note = "kept", transpose_lhs} : tensor<8x32x16xbf16>, tensor<32x96xbf16> -> tensor<8x16x96xbf16>
  return %a, %b, %c : tensor<8x16x96xbf16>, tensor<8x16x96xbf16>, tensor<8x16x96xbf16>
}
