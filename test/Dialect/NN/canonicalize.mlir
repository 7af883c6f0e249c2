// RUN: tandem-opt %s --canonicalize --split-input-file | FileCheck %s
// RUN: tandem-opt %s --canonicalize --cse --split-input-file | FileCheck %s --check-prefix=CSE

// Folders of the nn ops, and cases that must not fold.

// Identical constants are uniqued by the folder.
// CHECK-LABEL: func.func @constant_dedup()
// CHECK-NEXT: %[[C:.*]] = nn.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK-NEXT: return %[[C]], %[[C]] : tensor<4xf32>, tensor<4xf32>
func.func @constant_dedup() -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = nn.constant dense<1.0> : tensor<4xf32>
  %1 = nn.constant dense<1.0> : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @cast_identity(
// CHECK-SAME: %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: return %[[X]] : tensor<4xf32>
func.func @cast_identity(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.cast %x : tensor<4xf32> to tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A round trip through a narrower type changes values: not folded.
// CHECK-LABEL: func.func @cast_round_trip_kept(
// CHECK-SAME: %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[H:.*]] = nn.cast %[[X]] : tensor<4xf32> to tensor<4xbf16>
// CHECK-NEXT: %[[F:.*]] = nn.cast %[[H]] : tensor<4xbf16> to tensor<4xf32>
// CHECK-NEXT: return %[[F]] : tensor<4xf32>
func.func @cast_round_trip_kept(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.cast %x : tensor<4xf32> to tensor<4xbf16>
  %1 = nn.cast %0 : tensor<4xbf16> to tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @neg_neg(
// CHECK-SAME: %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: return %[[X]] : tensor<4xf32>
func.func @neg_neg(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.neg %x : tensor<4xf32>
  %1 = nn.neg %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @neg_neg_neg(
// CHECK-SAME: %[[X:.*]]: tensor<4xf16>)
// CHECK-NEXT: %[[N:.*]] = nn.neg %[[X]] : tensor<4xf16>
// CHECK-NEXT: return %[[N]] : tensor<4xf16>
func.func @neg_neg_neg(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = nn.neg %x : tensor<4xf16>
  %1 = nn.neg %0 : tensor<4xf16>
  %2 = nn.neg %1 : tensor<4xf16>
  return %2 : tensor<4xf16>
}

// -----

// CHECK-LABEL: func.func @pow_one(
// CHECK-SAME: %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: return %[[X]] : tensor<4xf32>
func.func @pow_one(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.pow %x, 1.0 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @pow_other_kept(
// CHECK-SAME: %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[A:.*]] = nn.pow %[[X]], 2.000000e+00 : tensor<4xf32>
// CHECK-NEXT: %[[B:.*]] = nn.pow %[[X]], 0.000000e+00 : tensor<4xf32>
// CHECK-NEXT: return %[[A]], %[[B]]
func.func @pow_other_kept(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = nn.pow %x, 2.0 : tensor<4xf32>
  %1 = nn.pow %x, 0.0 : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_identity(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]] : tensor<4x8xf32>
func.func @reshape_identity(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = nn.reshape %x : tensor<4x8xf32> to tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_reshape(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[R:.*]] = nn.reshape %[[X]] : tensor<4x8xf32> to tensor<2x16xf32>
// CHECK-NEXT: return %[[R]] : tensor<2x16xf32>
func.func @reshape_reshape(%x: tensor<4x8xf32>) -> tensor<2x16xf32> {
  %0 = nn.reshape %x : tensor<4x8xf32> to tensor<32xf32>
  %1 = nn.reshape %0 : tensor<32xf32> to tensor<2x16xf32>
  return %1 : tensor<2x16xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_reshape_back(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]] : tensor<4x8xf32>
func.func @reshape_reshape_back(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = nn.reshape %x : tensor<4x8xf32> to tensor<32xf32>
  %1 = nn.reshape %0 : tensor<32xf32> to tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_constant()
// CHECK-NEXT: %[[A:.*]] = nn.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00{{\]\]}}> : tensor<2x2xf32>
// CHECK-NEXT: %[[B:.*]] = nn.constant dense<7> : tensor<3x2xi32>
// CHECK-NEXT: return %[[A]], %[[B]] : tensor<2x2xf32>, tensor<3x2xi32>
func.func @reshape_constant() -> (tensor<2x2xf32>, tensor<3x2xi32>) {
  %0 = nn.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %1 = nn.reshape %0 : tensor<4xf32> to tensor<2x2xf32>
  %2 = nn.constant dense<7> : tensor<6xi32>
  %3 = nn.reshape %2 : tensor<6xi32> to tensor<3x2xi32>
  return %1, %3 : tensor<2x2xf32>, tensor<3x2xi32>
}

// -----

// CHECK-LABEL: func.func @reshape_kept(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[R:.*]] = nn.reshape %[[X]] : tensor<4x8xf32> to tensor<32xf32>
// CHECK-NEXT: return %[[R]] : tensor<32xf32>
func.func @reshape_kept(%x: tensor<4x8xf32>) -> tensor<32xf32> {
  %0 = nn.reshape %x : tensor<4x8xf32> to tensor<32xf32>
  return %0 : tensor<32xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_identity(
// CHECK-SAME: %[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: return %[[X]] : tensor<2x3x4xf32>
func.func @transpose_identity(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = nn.transpose %x, [0, 1, 2] : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// transpose(transpose(x, [1, 0, 2]), [2, 1, 0]) = transpose(x, [2, 0, 1]).
// CHECK-LABEL: func.func @transpose_transpose(
// CHECK-SAME: %[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[T:.*]] = nn.transpose %[[X]], [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT: return %[[T]] : tensor<4x2x3xf32>
func.func @transpose_transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = nn.transpose %x, [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  %1 = nn.transpose %0, [2, 1, 0] : tensor<3x2x4xf32> -> tensor<4x2x3xf32>
  return %1 : tensor<4x2x3xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_transpose_inverse(
// CHECK-SAME: %[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: return %[[X]] : tensor<2x3x4xf32>
func.func @transpose_transpose_inverse(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = nn.transpose %x, [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %1 = nn.transpose %0, [1, 2, 0] : tensor<4x2x3xf32> -> tensor<2x3x4xf32>
  return %1 : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_kept(
// CHECK-SAME: %[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: %[[T:.*]] = nn.transpose %[[X]], [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
// CHECK-NEXT: return %[[T]] : tensor<3x2xf32>
func.func @transpose_kept(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = nn.transpose %x, [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast_to_identity(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]] : tensor<4x8xf32>
func.func @broadcast_to_identity(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = nn.broadcast_to %x : tensor<4x8xf32> to tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast_to_splat()
// CHECK-NEXT: %[[A:.*]] = nn.constant dense<5.000000e-01> : tensor<4x8xf32>
// CHECK-NEXT: %[[B:.*]] = nn.constant dense<3> : tensor<2x3xi64>
// CHECK-NEXT: return %[[A]], %[[B]] : tensor<4x8xf32>, tensor<2x3xi64>
func.func @broadcast_to_splat() -> (tensor<4x8xf32>, tensor<2x3xi64>) {
  %0 = nn.constant dense<5.0e-01> : tensor<8xf32>
  %1 = nn.broadcast_to %0 : tensor<8xf32> to tensor<4x8xf32>
  %2 = nn.constant dense<3> : tensor<i64>
  %3 = nn.broadcast_to %2 : tensor<i64> to tensor<2x3xi64>
  return %1, %3 : tensor<4x8xf32>, tensor<2x3xi64>
}

// -----

// CHECK-LABEL: func.func @broadcast_to_non_splat_kept()
// CHECK-NEXT: %[[C:.*]] = nn.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT: %[[B:.*]] = nn.broadcast_to %[[C]] : tensor<2xf32> to tensor<2x2xf32>
// CHECK-NEXT: return %[[B]] : tensor<2x2xf32>
func.func @broadcast_to_non_splat_kept() -> tensor<2x2xf32> {
  %0 = nn.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %1 = nn.broadcast_to %0 : tensor<2xf32> to tensor<2x2xf32>
  return %1 : tensor<2x2xf32>
}

// -----

// CHECK-LABEL: func.func @concat_single(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]] : tensor<4x8xf32>
func.func @concat_single(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = nn.concat %x {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @concat_kept(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[C:.*]] = nn.concat %[[X]], %[[X]] {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: return %[[C]] : tensor<4x16xf32>
func.func @concat_kept(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %0 = nn.concat %x, %x {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @slice_full(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]] : tensor<4x8xf32>
func.func @slice_full(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = nn.slice %x [0, 0] to [4, 8] step [1, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @slice_kept(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[A:.*]] = nn.slice %[[X]] [0, 0] to [4, 8] step [1, 2] : tensor<4x8xf32> -> tensor<4x4xf32>
// CHECK-NEXT: %[[B:.*]] = nn.slice %[[X]] [0, 4] to [4, 8] step [1, 1] : tensor<4x8xf32> -> tensor<4x4xf32>
// CHECK-NEXT: %[[Y:.*]] = nn.reshape %[[X]] : tensor<4x8xf32> to tensor<32xf32>
// CHECK-NEXT: %[[C:.*]] = nn.slice %[[Y]] [31] to [32] step [1] : tensor<32xf32> -> tensor<1xf32>
// CHECK-NEXT: return %[[A]], %[[B]], %[[C]]
func.func @slice_kept(%x: tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<1xf32>) {
  %0 = nn.slice %x [0, 0] to [4, 8] step [1, 2] : tensor<4x8xf32> -> tensor<4x4xf32>
  %1 = nn.slice %x [0, 4] to [4, 8] step [1, 1] : tensor<4x8xf32> -> tensor<4x4xf32>
  %y = nn.reshape %x : tensor<4x8xf32> to tensor<32xf32>
  %2 = nn.slice %y [31] to [32] step [1] : tensor<32xf32> -> tensor<1xf32>
  return %0, %1, %2 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<1xf32>
}

// -----

// CHECK-LABEL: func.func @reduce_no_axes(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]], %[[X]], %[[X]] : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
func.func @reduce_no_axes(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = nn.reduce_sum %x [] : tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = nn.reduce_mean %x [] keepdims : tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = nn.reduce_max %x [] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0, %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A reduction over a size-1 axis with keepdims has the input's type but is
// not an empty reduction; it is kept (a later pass may simplify it).
// CHECK-LABEL: func.func @reduce_kept(
// CHECK-SAME: %[[X:.*]]: tensor<4x1xf32>)
// CHECK-NEXT: %[[A:.*]] = nn.reduce_sum %[[X]] [1] : tensor<4x1xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[B:.*]] = nn.reduce_max %[[X]] [1] keepdims : tensor<4x1xf32> -> tensor<4x1xf32>
// CHECK-NEXT: return %[[A]], %[[B]]
func.func @reduce_kept(%x: tensor<4x1xf32>) -> (tensor<4xf32>, tensor<4x1xf32>) {
  %0 = nn.reduce_sum %x [1] : tensor<4x1xf32> -> tensor<4xf32>
  %1 = nn.reduce_max %x [1] keepdims : tensor<4x1xf32> -> tensor<4x1xf32>
  return %0, %1 : tensor<4xf32>, tensor<4x1xf32>
}

// -----

// stage_end carries the user's intent: it is not folded, not erased when its
// results are unused, and two identical markers are not merged.
// CHECK-LABEL: func.func @stage_end_kept(
// CHECK-SAME: %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[C:.*]] = nn.constant dense<2.000000e+00> : tensor<4xf32>
// CHECK-NEXT: %{{.*}} = nn.stage_end %[[X]] : tensor<4xf32>
// CHECK-NEXT: %{{.*}} = nn.stage_end %[[X]] : tensor<4xf32>
// CHECK-NEXT: %{{.*}} = nn.stage_end %[[C]] : tensor<4xf32>
// CHECK-NEXT: return %[[X]] : tensor<4xf32>
// CSE-LABEL: func.func @stage_end_kept(
// CSE-SAME: %[[X:.*]]: tensor<4xf32>)
// CSE-NEXT: %[[C:.*]] = nn.constant dense<2.000000e+00> : tensor<4xf32>
// CSE-NEXT: %{{.*}} = nn.stage_end %[[X]] : tensor<4xf32>
// CSE-NEXT: %{{.*}} = nn.stage_end %[[X]] : tensor<4xf32>
// CSE-NEXT: %{{.*}} = nn.stage_end %[[C]] : tensor<4xf32>
// CSE-NEXT: return %[[X]] : tensor<4xf32>
func.func @stage_end_kept(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.stage_end %x : tensor<4xf32>
  %1 = nn.stage_end %x : tensor<4xf32>
  %c = nn.constant dense<2.0> : tensor<4xf32>
  %2 = nn.stage_end %c : tensor<4xf32>
  return %x : tensor<4xf32>
}

// -----

// Unused pure ops are erased.
// CHECK-LABEL: func.func @dead_pure_ops(
// CHECK-SAME: %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: return %[[X]] : tensor<4xf32>
func.func @dead_pure_ops(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.exp %x : tensor<4xf32>
  %1 = nn.add %0, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %x : tensor<4xf32>
}

// -----

// nn.select folds when both sides are one value or the mask is a constant
// splat; a non-splat or unknown mask stays.
// CHECK-LABEL: func.func @select_folds(
// CHECK-SAME: %[[A:[^:]*]]: tensor<3xf32>, %[[B:[^:]*]]: tensor<3xf32>, %[[M:[^:]*]]: tensor<f32>)
// CHECK-DAG: %[[MIXED:.*]] = nn.constant dense<[1.000000e+00, 0.000000e+00, 1.000000e+00]> : tensor<3xf32>
// CHECK-DAG: %[[S0:.*]] = nn.select %[[MIXED]], %[[A]], %[[B]] : tensor<3xf32>, tensor<3xf32>
// CHECK-DAG: %[[S1:.*]] = nn.select %[[M]], %[[A]], %[[B]] : tensor<f32>, tensor<3xf32>
// CHECK: return %[[A]], %[[B]], %[[A]], %[[S0]], %[[S1]]
func.func @select_folds(%a: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<f32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %one = nn.constant dense<1.0> : tensor<f32>
  %zero = nn.constant dense<0.0> : tensor<f32>
  %mixed = nn.constant dense<[1.0, 0.0, 1.0]> : tensor<3xf32>
  %0 = nn.select %one, %a, %b : tensor<f32>, tensor<3xf32>
  %1 = nn.select %zero, %a, %b : tensor<f32>, tensor<3xf32>
  %2 = nn.select %m, %a, %a : tensor<f32>, tensor<3xf32>
  %3 = nn.select %mixed, %a, %b : tensor<3xf32>, tensor<3xf32>
  %4 = nn.select %m, %a, %b : tensor<f32>, tensor<3xf32>
  return %0, %1, %2, %3, %4 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}
