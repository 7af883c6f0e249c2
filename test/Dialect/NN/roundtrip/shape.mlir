// RUN: tandem-opt %s | tandem-opt | FileCheck %s
// RUN: tandem-opt %s --mlir-print-op-generic | tandem-opt | FileCheck %s
// Shape manipulation: reshape, transpose, broadcast_to, concat, slice, split.

// CHECK-LABEL: func.func @reshape(
// CHECK-SAME: %[[X:.*]]: tensor<8x16x32xf32>, %[[S:.*]]: tensor<f64>, %[[I:.*]]: tensor<2x3xi32>, %[[B:.*]]: tensor<6xbf16>, %[[Q:.*]]: tensor<4x4xf8E4M3FN>, %[[R:.*]]: tensor<4x4xf8E5M2>, %[[H:.*]]: tensor<2x2xf16>, %[[L:.*]]: tensor<4xi64>) -> (tensor<128x32xf32>, tensor<1x1xf64>, tensor<6xi32>, tensor<3x1x2xbf16>, tensor<16xf8E4M3FN>, tensor<2x8xf8E5M2>, tensor<4xf16>, tensor<2x2xi64>, tensor<8x16x32xf32>)
// CHECK-NEXT: %[[A:.*]] = nn.reshape %[[X]] : tensor<8x16x32xf32> to tensor<128x32xf32>
// CHECK-NEXT: %[[C:.*]] = nn.reshape %[[S]] : tensor<f64> to tensor<1x1xf64>
// CHECK-NEXT: %[[D:.*]] = nn.reshape %[[I]] : tensor<2x3xi32> to tensor<6xi32>
// CHECK-NEXT: %[[E:.*]] = nn.reshape %[[B]] : tensor<6xbf16> to tensor<3x1x2xbf16>
// CHECK-NEXT: %[[F:.*]] = nn.reshape %[[Q]] : tensor<4x4xf8E4M3FN> to tensor<16xf8E4M3FN>
// CHECK-NEXT: %[[G:.*]] = nn.reshape %[[R]] : tensor<4x4xf8E5M2> to tensor<2x8xf8E5M2>
// CHECK-NEXT: %[[J:.*]] = nn.reshape %[[H]] : tensor<2x2xf16> to tensor<4xf16>
// CHECK-NEXT: %[[K:.*]] = nn.reshape %[[L]] {tandem.note = "kept"} : tensor<4xi64> to tensor<2x2xi64>
// CHECK-NEXT: %[[M:.*]] = nn.reshape %[[X]] : tensor<8x16x32xf32> to tensor<8x16x32xf32>
// CHECK-NEXT: return %[[A]], %[[C]], %[[D]], %[[E]], %[[F]], %[[G]], %[[J]], %[[K]], %[[M]] : tensor<128x32xf32>, tensor<1x1xf64>, tensor<6xi32>, tensor<3x1x2xbf16>, tensor<16xf8E4M3FN>, tensor<2x8xf8E5M2>, tensor<4xf16>, tensor<2x2xi64>, tensor<8x16x32xf32>
func.func @reshape(%x: tensor<8x16x32xf32>, %s: tensor<f64>, %i: tensor<2x3xi32>, %b: tensor<6xbf16>, %q: tensor<4x4xf8E4M3FN>, %r: tensor<4x4xf8E5M2>, %h: tensor<2x2xf16>, %l: tensor<4xi64>) -> (tensor<128x32xf32>, tensor<1x1xf64>, tensor<6xi32>, tensor<3x1x2xbf16>, tensor<16xf8E4M3FN>, tensor<2x8xf8E5M2>, tensor<4xf16>, tensor<2x2xi64>, tensor<8x16x32xf32>) {
  %a = nn.reshape %x : tensor<8x16x32xf32> to tensor<128x32xf32>
  %c = nn.reshape %s : tensor<f64> to tensor<1x1xf64>
  %d = nn.reshape %i : tensor<2x3xi32> to tensor<6xi32>
  %e = nn.reshape %b : tensor<6xbf16> to tensor<3x1x2xbf16>
  %f = nn.reshape %q : tensor<4x4xf8E4M3FN> to tensor<16xf8E4M3FN>
  %g = nn.reshape %r : tensor<4x4xf8E5M2> to tensor<2x8xf8E5M2>
  %j = nn.reshape %h : tensor<2x2xf16> to tensor<4xf16>
  %k = nn.reshape %l {tandem.note = "kept"} : tensor<4xi64> to tensor<2x2xi64>
  %m = nn.reshape %x : tensor<8x16x32xf32> to tensor<8x16x32xf32>
  return %a, %c, %d, %e, %f, %g, %j, %k, %m : tensor<128x32xf32>, tensor<1x1xf64>, tensor<6xi32>, tensor<3x1x2xbf16>, tensor<16xf8E4M3FN>, tensor<2x8xf8E5M2>, tensor<4xf16>, tensor<2x2xi64>, tensor<8x16x32xf32>
}

// CHECK-LABEL: func.func @transpose(
// CHECK-SAME: %[[X:.*]]: tensor<8x16x32xf32>, %[[M:.*]]: tensor<3x5xi64>, %[[S:.*]]: tensor<f16>, %[[V:.*]]: tensor<7xbf16>, %[[Q:.*]]: tensor<2x3x4x5xf8E4M3FN>, %[[R:.*]]: tensor<2x3xf8E5M2>, %[[D:.*]]: tensor<2x3xf64>, %[[I:.*]]: tensor<2x3xi32>) -> (tensor<8x32x16xf32>, tensor<5x3xi64>, tensor<f16>, tensor<7xbf16>, tensor<5x2x4x3xf8E4M3FN>, tensor<3x2xf8E5M2>, tensor<3x2xf64>, tensor<3x2xi32>)
// CHECK-NEXT: %[[A:.*]] = nn.transpose %[[X]], [0, 2, 1] : tensor<8x16x32xf32> -> tensor<8x32x16xf32>
// CHECK-NEXT: %[[B:.*]] = nn.transpose %[[M]], [1, 0] : tensor<3x5xi64> -> tensor<5x3xi64>
// CHECK-NEXT: %[[C:.*]] = nn.transpose %[[S]], [] : tensor<f16> -> tensor<f16>
// CHECK-NEXT: %[[E:.*]] = nn.transpose %[[V]], [0] : tensor<7xbf16> -> tensor<7xbf16>
// CHECK-NEXT: %[[F:.*]] = nn.transpose %[[Q]], [3, 0, 2, 1] : tensor<2x3x4x5xf8E4M3FN> -> tensor<5x2x4x3xf8E4M3FN>
// CHECK-NEXT: %[[G:.*]] = nn.transpose %[[R]], [1, 0] {tandem.note = "kept"} : tensor<2x3xf8E5M2> -> tensor<3x2xf8E5M2>
// CHECK-NEXT: %[[H:.*]] = nn.transpose %[[D]], [1, 0] : tensor<2x3xf64> -> tensor<3x2xf64>
// CHECK-NEXT: %[[J:.*]] = nn.transpose %[[I]], [1, 0] : tensor<2x3xi32> -> tensor<3x2xi32>
// CHECK-NEXT: return %[[A]], %[[B]], %[[C]], %[[E]], %[[F]], %[[G]], %[[H]], %[[J]] : tensor<8x32x16xf32>, tensor<5x3xi64>, tensor<f16>, tensor<7xbf16>, tensor<5x2x4x3xf8E4M3FN>, tensor<3x2xf8E5M2>, tensor<3x2xf64>, tensor<3x2xi32>
func.func @transpose(%x: tensor<8x16x32xf32>, %m: tensor<3x5xi64>, %s: tensor<f16>, %v: tensor<7xbf16>, %q: tensor<2x3x4x5xf8E4M3FN>, %r: tensor<2x3xf8E5M2>, %d: tensor<2x3xf64>, %i: tensor<2x3xi32>) -> (tensor<8x32x16xf32>, tensor<5x3xi64>, tensor<f16>, tensor<7xbf16>, tensor<5x2x4x3xf8E4M3FN>, tensor<3x2xf8E5M2>, tensor<3x2xf64>, tensor<3x2xi32>) {
  %a = nn.transpose %x, [0, 2, 1] : tensor<8x16x32xf32> -> tensor<8x32x16xf32>
  %b = nn.transpose %m, [1, 0] : tensor<3x5xi64> -> tensor<5x3xi64>
  %c = nn.transpose %s, [] : tensor<f16> -> tensor<f16>
  %e = nn.transpose %v, [0] : tensor<7xbf16> -> tensor<7xbf16>
  %f = nn.transpose %q, [3, 0, 2, 1] : tensor<2x3x4x5xf8E4M3FN> -> tensor<5x2x4x3xf8E4M3FN>
  %g = nn.transpose %r, [1, 0] {tandem.note = "kept"} : tensor<2x3xf8E5M2> -> tensor<3x2xf8E5M2>
  %h = nn.transpose %d, [1, 0] : tensor<2x3xf64> -> tensor<3x2xf64>
  %j = nn.transpose %i, [1, 0] : tensor<2x3xi32> -> tensor<3x2xi32>
  return %a, %b, %c, %e, %f, %g, %h, %j : tensor<8x32x16xf32>, tensor<5x3xi64>, tensor<f16>, tensor<7xbf16>, tensor<5x2x4x3xf8E4M3FN>, tensor<3x2xf8E5M2>, tensor<3x2xf64>, tensor<3x2xi32>
}

// CHECK-LABEL: func.func @broadcast_to(
// CHECK-SAME: %[[B:.*]]: tensor<32xf32>, %[[S:.*]]: tensor<f64>, %[[C:.*]]: tensor<4x1xi32>, %[[H:.*]]: tensor<1x3xf16>, %[[BF:.*]]: tensor<3xbf16>, %[[Q:.*]]: tensor<1xf8E4M3FN>, %[[R:.*]]: tensor<2x1x1xf8E5M2>, %[[L:.*]]: tensor<1xi64>) -> (tensor<8x32xf32>, tensor<2x3xf64>, tensor<2x4x5xi32>, tensor<4x3xf16>, tensor<3xbf16>, tensor<6xf8E4M3FN>, tensor<2x3x4xf8E5M2>, tensor<1xi64>)
// CHECK-NEXT: %[[A:.*]] = nn.broadcast_to %[[B]] : tensor<32xf32> to tensor<8x32xf32>
// CHECK-NEXT: %[[D:.*]] = nn.broadcast_to %[[S]] : tensor<f64> to tensor<2x3xf64>
// CHECK-NEXT: %[[E:.*]] = nn.broadcast_to %[[C]] : tensor<4x1xi32> to tensor<2x4x5xi32>
// CHECK-NEXT: %[[F:.*]] = nn.broadcast_to %[[H]] : tensor<1x3xf16> to tensor<4x3xf16>
// CHECK-NEXT: %[[G:.*]] = nn.broadcast_to %[[BF]] : tensor<3xbf16> to tensor<3xbf16>
// CHECK-NEXT: %[[J:.*]] = nn.broadcast_to %[[Q]] : tensor<1xf8E4M3FN> to tensor<6xf8E4M3FN>
// CHECK-NEXT: %[[K:.*]] = nn.broadcast_to %[[R]] {tandem.note = "kept"} : tensor<2x1x1xf8E5M2> to tensor<2x3x4xf8E5M2>
// CHECK-NEXT: %[[M:.*]] = nn.broadcast_to %[[L]] : tensor<1xi64> to tensor<1xi64>
// CHECK-NEXT: return %[[A]], %[[D]], %[[E]], %[[F]], %[[G]], %[[J]], %[[K]], %[[M]] : tensor<8x32xf32>, tensor<2x3xf64>, tensor<2x4x5xi32>, tensor<4x3xf16>, tensor<3xbf16>, tensor<6xf8E4M3FN>, tensor<2x3x4xf8E5M2>, tensor<1xi64>
func.func @broadcast_to(%b: tensor<32xf32>, %s: tensor<f64>, %c: tensor<4x1xi32>, %h: tensor<1x3xf16>, %bf: tensor<3xbf16>, %q: tensor<1xf8E4M3FN>, %r: tensor<2x1x1xf8E5M2>, %l: tensor<1xi64>) -> (tensor<8x32xf32>, tensor<2x3xf64>, tensor<2x4x5xi32>, tensor<4x3xf16>, tensor<3xbf16>, tensor<6xf8E4M3FN>, tensor<2x3x4xf8E5M2>, tensor<1xi64>) {
  %a = nn.broadcast_to %b : tensor<32xf32> to tensor<8x32xf32>
  %d = nn.broadcast_to %s : tensor<f64> to tensor<2x3xf64>
  %e = nn.broadcast_to %c : tensor<4x1xi32> to tensor<2x4x5xi32>
  %f = nn.broadcast_to %h : tensor<1x3xf16> to tensor<4x3xf16>
  %g = nn.broadcast_to %bf : tensor<3xbf16> to tensor<3xbf16>
  %j = nn.broadcast_to %q : tensor<1xf8E4M3FN> to tensor<6xf8E4M3FN>
  %k = nn.broadcast_to %r {tandem.note = "kept"} : tensor<2x1x1xf8E5M2> to tensor<2x3x4xf8E5M2>
  %m = nn.broadcast_to %l : tensor<1xi64> to tensor<1xi64>
  return %a, %d, %e, %f, %g, %j, %k, %m : tensor<8x32xf32>, tensor<2x3xf64>, tensor<2x4x5xi32>, tensor<4x3xf16>, tensor<3xbf16>, tensor<6xf8E4M3FN>, tensor<2x3x4xf8E5M2>, tensor<1xi64>
}

// CHECK-LABEL: func.func @concat(
// CHECK-SAME: %[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<4x2xf32>, %[[C:.*]]: tensor<1x8xf32>, %[[I:.*]]: tensor<3xi64>, %[[J:.*]]: tensor<2xi64>, %[[H:.*]]: tensor<2x2xf16>, %[[BF:.*]]: tensor<2x2xbf16>, %[[D:.*]]: tensor<2xf64>, %[[Q:.*]]: tensor<2xf8E4M3FN>, %[[R:.*]]: tensor<2xf8E5M2>, %[[N:.*]]: tensor<2xi32>) -> (tensor<4x10xf32>, tensor<9x8xf32>, tensor<5xi64>, tensor<2x2xf16>, tensor<2x6xbf16>, tensor<4xf64>, tensor<4xf8E4M3FN>, tensor<2xf8E5M2>, tensor<6xi32>)
// CHECK-NEXT: %[[X:.*]] = nn.concat %[[A]], %[[B]] {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x2xf32>) -> tensor<4x10xf32>
// CHECK-NEXT: %[[Y:.*]] = nn.concat %[[A]], %[[C]], %[[A]] {axis = 0 : i64} : (tensor<4x8xf32>, tensor<1x8xf32>, tensor<4x8xf32>) -> tensor<9x8xf32>
// CHECK-NEXT: %[[Z:.*]] = nn.concat %[[I]], %[[J]] {axis = 0 : i64} : (tensor<3xi64>, tensor<2xi64>) -> tensor<5xi64>
// CHECK-NEXT: %[[W:.*]] = nn.concat %[[H]] {axis = 1 : i64} : (tensor<2x2xf16>) -> tensor<2x2xf16>
// CHECK-NEXT: %[[V:.*]] = nn.concat %[[BF]], %[[BF]], %[[BF]] {axis = 1 : i64, tandem.note = "kept"} : (tensor<2x2xbf16>, tensor<2x2xbf16>, tensor<2x2xbf16>) -> tensor<2x6xbf16>
// CHECK-NEXT: %[[U:.*]] = nn.concat %[[D]], %[[D]] {axis = 0 : i64} : (tensor<2xf64>, tensor<2xf64>) -> tensor<4xf64>
// CHECK-NEXT: %[[T:.*]] = nn.concat %[[Q]], %[[Q]] {axis = 0 : i64} : (tensor<2xf8E4M3FN>, tensor<2xf8E4M3FN>) -> tensor<4xf8E4M3FN>
// CHECK-NEXT: %[[S:.*]] = nn.concat %[[R]] {axis = 0 : i64} : (tensor<2xf8E5M2>) -> tensor<2xf8E5M2>
// CHECK-NEXT: %[[O:.*]] = nn.concat %[[N]], %[[N]], %[[N]] {axis = 0 : i64} : (tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<6xi32>
// CHECK-NEXT: return %[[X]], %[[Y]], %[[Z]], %[[W]], %[[V]], %[[U]], %[[T]], %[[S]], %[[O]] : tensor<4x10xf32>, tensor<9x8xf32>, tensor<5xi64>, tensor<2x2xf16>, tensor<2x6xbf16>, tensor<4xf64>, tensor<4xf8E4M3FN>, tensor<2xf8E5M2>, tensor<6xi32>
func.func @concat(%a: tensor<4x8xf32>, %b: tensor<4x2xf32>, %c: tensor<1x8xf32>, %i: tensor<3xi64>, %j: tensor<2xi64>, %h: tensor<2x2xf16>, %bf: tensor<2x2xbf16>, %d: tensor<2xf64>, %q: tensor<2xf8E4M3FN>, %r: tensor<2xf8E5M2>, %n: tensor<2xi32>) -> (tensor<4x10xf32>, tensor<9x8xf32>, tensor<5xi64>, tensor<2x2xf16>, tensor<2x6xbf16>, tensor<4xf64>, tensor<4xf8E4M3FN>, tensor<2xf8E5M2>, tensor<6xi32>) {
  %x = nn.concat %a, %b {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x2xf32>) -> tensor<4x10xf32>
  %y = nn.concat %a, %c, %a {axis = 0 : i64} : (tensor<4x8xf32>, tensor<1x8xf32>, tensor<4x8xf32>) -> tensor<9x8xf32>
  %z = nn.concat %i, %j {axis = 0 : i64} : (tensor<3xi64>, tensor<2xi64>) -> tensor<5xi64>
  %w = nn.concat %h {axis = 1 : i64} : (tensor<2x2xf16>) -> tensor<2x2xf16>
  %v = nn.concat %bf, %bf, %bf {axis = 1 : i64, tandem.note = "kept"} : (tensor<2x2xbf16>, tensor<2x2xbf16>, tensor<2x2xbf16>) -> tensor<2x6xbf16>
  %u = nn.concat %d, %d {axis = 0 : i64} : (tensor<2xf64>, tensor<2xf64>) -> tensor<4xf64>
  %t = nn.concat %q, %q {axis = 0 : i64} : (tensor<2xf8E4M3FN>, tensor<2xf8E4M3FN>) -> tensor<4xf8E4M3FN>
  %s = nn.concat %r {axis = 0 : i64} : (tensor<2xf8E5M2>) -> tensor<2xf8E5M2>
  %o = nn.concat %n, %n, %n {axis = 0 : i64} : (tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<6xi32>
  return %x, %y, %z, %w, %v, %u, %t, %s, %o : tensor<4x10xf32>, tensor<9x8xf32>, tensor<5xi64>, tensor<2x2xf16>, tensor<2x6xbf16>, tensor<4xf64>, tensor<4xf8E4M3FN>, tensor<2xf8E5M2>, tensor<6xi32>
}

// CHECK-LABEL: func.func @slice(
// CHECK-SAME: %[[X:.*]]: tensor<4x32xf32>, %[[V:.*]]: tensor<10xi32>, %[[S:.*]]: tensor<f64>, %[[H:.*]]: tensor<3x3xf16>, %[[B:.*]]: tensor<5xbf16>, %[[Q:.*]]: tensor<8xf8E4M3FN>, %[[R:.*]]: tensor<8xf8E5M2>, %[[L:.*]]: tensor<6xi64>) -> (tensor<4x8xf32>, tensor<3xi32>, tensor<f64>, tensor<2x1xf16>, tensor<5xbf16>, tensor<1xf8E4M3FN>, tensor<4xf8E5M2>, tensor<2xi64>)
// CHECK-NEXT: %[[A:.*]] = nn.slice %[[X]] [0, 8] to [4, 16] step [1, 1] : tensor<4x32xf32> -> tensor<4x8xf32>
// CHECK-NEXT: %[[C:.*]] = nn.slice %[[V]] [1] to [10] step [3] : tensor<10xi32> -> tensor<3xi32>
// CHECK-NEXT: %[[D:.*]] = nn.slice %[[S]] [] to [] step [] : tensor<f64> -> tensor<f64>
// CHECK-NEXT: %[[E:.*]] = nn.slice %[[H]] [0, 2] to [3, 3] step [2, 1] : tensor<3x3xf16> -> tensor<2x1xf16>
// CHECK-NEXT: %[[F:.*]] = nn.slice %[[B]] [0] to [5] step [1] {tandem.note = "kept"} : tensor<5xbf16> -> tensor<5xbf16>
// CHECK-NEXT: %[[G:.*]] = nn.slice %[[Q]] [7] to [8] step [1] : tensor<8xf8E4M3FN> -> tensor<1xf8E4M3FN>
// CHECK-NEXT: %[[J:.*]] = nn.slice %[[R]] [0] to [8] step [2] : tensor<8xf8E5M2> -> tensor<4xf8E5M2>
// CHECK-NEXT: %[[K:.*]] = nn.slice %[[L]] [1] to [6] step [4] : tensor<6xi64> -> tensor<2xi64>
// CHECK-NEXT: return %[[A]], %[[C]], %[[D]], %[[E]], %[[F]], %[[G]], %[[J]], %[[K]] : tensor<4x8xf32>, tensor<3xi32>, tensor<f64>, tensor<2x1xf16>, tensor<5xbf16>, tensor<1xf8E4M3FN>, tensor<4xf8E5M2>, tensor<2xi64>
func.func @slice(%x: tensor<4x32xf32>, %v: tensor<10xi32>, %s: tensor<f64>, %h: tensor<3x3xf16>, %b: tensor<5xbf16>, %q: tensor<8xf8E4M3FN>, %r: tensor<8xf8E5M2>, %l: tensor<6xi64>) -> (tensor<4x8xf32>, tensor<3xi32>, tensor<f64>, tensor<2x1xf16>, tensor<5xbf16>, tensor<1xf8E4M3FN>, tensor<4xf8E5M2>, tensor<2xi64>) {
  %a = nn.slice %x [0, 8] to [4, 16] step [1, 1] : tensor<4x32xf32> -> tensor<4x8xf32>
  %c = nn.slice %v [1] to [10] step [3] : tensor<10xi32> -> tensor<3xi32>
  %d = nn.slice %s [] to [] step [] : tensor<f64> -> tensor<f64>
  %e = nn.slice %h [0, 2] to [3, 3] step [2, 1] : tensor<3x3xf16> -> tensor<2x1xf16>
  %f = nn.slice %b [0] to [5] step [1] {tandem.note = "kept"} : tensor<5xbf16> -> tensor<5xbf16>
  %g = nn.slice %q [7] to [8] step [1] : tensor<8xf8E4M3FN> -> tensor<1xf8E4M3FN>
  %j = nn.slice %r [0] to [8] step [2] : tensor<8xf8E5M2> -> tensor<4xf8E5M2>
  %k = nn.slice %l [1] to [6] step [4] : tensor<6xi64> -> tensor<2xi64>
  return %a, %c, %d, %e, %f, %g, %j, %k : tensor<4x8xf32>, tensor<3xi32>, tensor<f64>, tensor<2x1xf16>, tensor<5xbf16>, tensor<1xf8E4M3FN>, tensor<4xf8E5M2>, tensor<2xi64>
}

// A stride beyond the dimension takes one element (and must not overflow
// the size computation).
// CHECK-LABEL: func.func @slice_huge_stride(
// CHECK-SAME: %[[X:.*]]: tensor<4x6xf32>) -> tensor<1x2xf32>
// CHECK-NEXT: %[[A:.*]] = nn.slice %[[X]] [1, 2] to [4, 6] step [9223372036854775807, 2] : tensor<4x6xf32> -> tensor<1x2xf32>
// CHECK-NEXT: return %[[A]] : tensor<1x2xf32>
func.func @slice_huge_stride(%x: tensor<4x6xf32>) -> tensor<1x2xf32> {
  %a = nn.slice %x [1, 2] to [4, 6] step [9223372036854775807, 2] : tensor<4x6xf32> -> tensor<1x2xf32>
  return %a : tensor<1x2xf32>
}

// CHECK-LABEL: func.func @split(
// CHECK-SAME: %[[QKV:.*]]: tensor<8x16x96xf32>, %[[V:.*]]: tensor<10xi64>, %[[H:.*]]: tensor<4x2xf16>, %[[B:.*]]: tensor<4xbf16>, %[[D:.*]]: tensor<3xf64>, %[[Q:.*]]: tensor<2x2xf8E4M3FN>, %[[R:.*]]: tensor<6xf8E5M2>, %[[I:.*]]: tensor<5xi32>) -> (tensor<8x16x32xf32>, tensor<3xi64>, tensor<7xi64>, tensor<4x2xf16>, tensor<1xbf16>, tensor<3xf64>, tensor<2x1xf8E4M3FN>, tensor<1xf8E5M2>, tensor<4xi32>)
// CHECK-NEXT: %[[Q1:.*]]:3 = nn.split %[[QKV]] {axis = 2 : i64, sizes = array<i64: 32, 32, 32>} : tensor<8x16x96xf32> -> tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<8x16x32xf32>
// CHECK-NEXT: %[[A:.*]]:2 = nn.split %[[V]] {axis = 0 : i64, sizes = array<i64: 3, 7>} : tensor<10xi64> -> tensor<3xi64>, tensor<7xi64>
// CHECK-NEXT: %[[E:.*]] = nn.split %[[H]] {axis = 1 : i64, sizes = array<i64: 2>} : tensor<4x2xf16> -> tensor<4x2xf16>
// CHECK-NEXT: %[[F:.*]]:2 = nn.split %[[B]] {axis = 0 : i64, sizes = array<i64: 1, 3>, tandem.note = "kept"} : tensor<4xbf16> -> tensor<1xbf16>, tensor<3xbf16>
// CHECK-NEXT: %[[J:.*]] = nn.split %[[D]] {axis = 0 : i64, sizes = array<i64: 3>} : tensor<3xf64> -> tensor<3xf64>
// CHECK-NEXT: %[[K:.*]]:2 = nn.split %[[Q]] {axis = 1 : i64, sizes = array<i64: 1, 1>} : tensor<2x2xf8E4M3FN> -> tensor<2x1xf8E4M3FN>, tensor<2x1xf8E4M3FN>
// CHECK-NEXT: %[[M:.*]]:3 = nn.split %[[R]] {axis = 0 : i64, sizes = array<i64: 1, 2, 3>} : tensor<6xf8E5M2> -> tensor<1xf8E5M2>, tensor<2xf8E5M2>, tensor<3xf8E5M2>
// CHECK-NEXT: %[[P:.*]]:2 = nn.split %[[I]] {axis = 0 : i64, sizes = array<i64: 1, 4>} : tensor<5xi32> -> tensor<1xi32>, tensor<4xi32>
// CHECK-NEXT: return %[[Q1]]#1, %[[A]]#0, %[[A]]#1, %[[E]], %[[F]]#0, %[[J]], %[[K]]#1, %[[M]]#0, %[[P]]#1 : tensor<8x16x32xf32>, tensor<3xi64>, tensor<7xi64>, tensor<4x2xf16>, tensor<1xbf16>, tensor<3xf64>, tensor<2x1xf8E4M3FN>, tensor<1xf8E5M2>, tensor<4xi32>
func.func @split(%qkv: tensor<8x16x96xf32>, %v: tensor<10xi64>, %h: tensor<4x2xf16>, %b: tensor<4xbf16>, %d: tensor<3xf64>, %q: tensor<2x2xf8E4M3FN>, %r: tensor<6xf8E5M2>, %i: tensor<5xi32>) -> (tensor<8x16x32xf32>, tensor<3xi64>, tensor<7xi64>, tensor<4x2xf16>, tensor<1xbf16>, tensor<3xf64>, tensor<2x1xf8E4M3FN>, tensor<1xf8E5M2>, tensor<4xi32>) {
  %q1, %k1, %v1 = nn.split %qkv {axis = 2 : i64, sizes = array<i64: 32, 32, 32>} : tensor<8x16x96xf32> -> tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<8x16x32xf32>
  %a, %c = nn.split %v {axis = 0 : i64, sizes = array<i64: 3, 7>} : tensor<10xi64> -> tensor<3xi64>, tensor<7xi64>
  %e = nn.split %h {axis = 1 : i64, sizes = array<i64: 2>} : tensor<4x2xf16> -> tensor<4x2xf16>
  %f, %g = nn.split %b {axis = 0 : i64, sizes = array<i64: 1, 3>, tandem.note = "kept"} : tensor<4xbf16> -> tensor<1xbf16>, tensor<3xbf16>
  %j = nn.split %d {axis = 0 : i64, sizes = array<i64: 3>} : tensor<3xf64> -> tensor<3xf64>
  %k, %l = nn.split %q {axis = 1 : i64, sizes = array<i64: 1, 1>} : tensor<2x2xf8E4M3FN> -> tensor<2x1xf8E4M3FN>, tensor<2x1xf8E4M3FN>
  %m, %n, %o = nn.split %r {axis = 0 : i64, sizes = array<i64: 1, 2, 3>} : tensor<6xf8E5M2> -> tensor<1xf8E5M2>, tensor<2xf8E5M2>, tensor<3xf8E5M2>
  %p, %s = nn.split %i {axis = 0 : i64, sizes = array<i64: 1, 4>} : tensor<5xi32> -> tensor<1xi32>, tensor<4xi32>
  return %k1, %a, %c, %e, %f, %j, %l, %m, %s : tensor<8x16x32xf32>, tensor<3xi64>, tensor<7xi64>, tensor<4x2xf16>, tensor<1xbf16>, tensor<3xf64>, tensor<2x1xf8E4M3FN>, tensor<1xf8E5M2>, tensor<4xi32>
}
