// RUN: tandem-opt %s | tandem-opt | FileCheck %s
// RUN: tandem-opt %s --mlir-print-op-generic | tandem-opt | FileCheck %s
// Softmax-like ops, normalizations, embedding, attention and the loss.

// CHECK-LABEL: func.func @softmax_all_float_types(
// CHECK-SAME: %[[X0:.*]]: tensor<4x10xf64>, %[[X1:.*]]: tensor<4x10xf32>, %[[X2:.*]]: tensor<4x10xf16>, %[[X3:.*]]: tensor<4x10xbf16>, %[[X4:.*]]: tensor<4x10xf8E4M3FN>, %[[X5:.*]]: tensor<4x10xf8E5M2>) -> (tensor<4x10xf64>, tensor<4x10xf32>, tensor<4x10xf16>, tensor<4x10xbf16>, tensor<4x10xf8E4M3FN>, tensor<4x10xf8E5M2>)
// CHECK-NEXT: %[[R0:.*]] = nn.softmax %[[X0]] {axis = 0 : i64} : tensor<4x10xf64>
// CHECK-NEXT: %[[R1:.*]] = nn.softmax %[[X1]] {axis = 1 : i64} : tensor<4x10xf32>
// CHECK-NEXT: %[[R2:.*]] = nn.softmax %[[X2]] {axis = 0 : i64} : tensor<4x10xf16>
// CHECK-NEXT: %[[R3:.*]] = nn.softmax %[[X3]] {axis = 1 : i64} : tensor<4x10xbf16>
// CHECK-NEXT: %[[R4:.*]] = nn.softmax %[[X4]] {axis = 0 : i64} : tensor<4x10xf8E4M3FN>
// CHECK-NEXT: %[[R5:.*]] = nn.softmax %[[X5]] {axis = 1 : i64} : tensor<4x10xf8E5M2>
// CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]] : tensor<4x10xf64>, tensor<4x10xf32>, tensor<4x10xf16>, tensor<4x10xbf16>, tensor<4x10xf8E4M3FN>, tensor<4x10xf8E5M2>
func.func @softmax_all_float_types(%x0: tensor<4x10xf64>, %x1: tensor<4x10xf32>, %x2: tensor<4x10xf16>, %x3: tensor<4x10xbf16>, %x4: tensor<4x10xf8E4M3FN>, %x5: tensor<4x10xf8E5M2>) -> (tensor<4x10xf64>, tensor<4x10xf32>, tensor<4x10xf16>, tensor<4x10xbf16>, tensor<4x10xf8E4M3FN>, tensor<4x10xf8E5M2>) {
  %r0 = nn.softmax %x0 {axis = 0 : i64} : tensor<4x10xf64>
  %r1 = nn.softmax %x1 {axis = 1 : i64} : tensor<4x10xf32>
  %r2 = nn.softmax %x2 {axis = 0 : i64} : tensor<4x10xf16>
  %r3 = nn.softmax %x3 {axis = 1 : i64} : tensor<4x10xbf16>
  %r4 = nn.softmax %x4 {axis = 0 : i64} : tensor<4x10xf8E4M3FN>
  %r5 = nn.softmax %x5 {axis = 1 : i64} : tensor<4x10xf8E5M2>
  return %r0, %r1, %r2, %r3, %r4, %r5 : tensor<4x10xf64>, tensor<4x10xf32>, tensor<4x10xf16>, tensor<4x10xbf16>, tensor<4x10xf8E4M3FN>, tensor<4x10xf8E5M2>
}

// CHECK-LABEL: func.func @log_softmax_all_float_types(
// CHECK-SAME: %[[X0:.*]]: tensor<2x3x5xf64>, %[[X1:.*]]: tensor<2x3x5xf32>, %[[X2:.*]]: tensor<2x3x5xf16>, %[[X3:.*]]: tensor<2x3x5xbf16>, %[[X4:.*]]: tensor<2x3x5xf8E4M3FN>, %[[X5:.*]]: tensor<2x3x5xf8E5M2>) -> (tensor<2x3x5xf64>, tensor<2x3x5xf32>, tensor<2x3x5xf16>, tensor<2x3x5xbf16>, tensor<2x3x5xf8E4M3FN>, tensor<2x3x5xf8E5M2>)
// CHECK-NEXT: %[[R0:.*]] = nn.log_softmax %[[X0]] {axis = 0 : i64} : tensor<2x3x5xf64>
// CHECK-NEXT: %[[R1:.*]] = nn.log_softmax %[[X1]] {axis = 1 : i64} : tensor<2x3x5xf32>
// CHECK-NEXT: %[[R2:.*]] = nn.log_softmax %[[X2]] {axis = 2 : i64} : tensor<2x3x5xf16>
// CHECK-NEXT: %[[R3:.*]] = nn.log_softmax %[[X3]] {axis = 0 : i64} : tensor<2x3x5xbf16>
// CHECK-NEXT: %[[R4:.*]] = nn.log_softmax %[[X4]] {axis = 1 : i64} : tensor<2x3x5xf8E4M3FN>
// CHECK-NEXT: %[[R5:.*]] = nn.log_softmax %[[X5]] {axis = 2 : i64} : tensor<2x3x5xf8E5M2>
// CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]] : tensor<2x3x5xf64>, tensor<2x3x5xf32>, tensor<2x3x5xf16>, tensor<2x3x5xbf16>, tensor<2x3x5xf8E4M3FN>, tensor<2x3x5xf8E5M2>
func.func @log_softmax_all_float_types(%x0: tensor<2x3x5xf64>, %x1: tensor<2x3x5xf32>, %x2: tensor<2x3x5xf16>, %x3: tensor<2x3x5xbf16>, %x4: tensor<2x3x5xf8E4M3FN>, %x5: tensor<2x3x5xf8E5M2>) -> (tensor<2x3x5xf64>, tensor<2x3x5xf32>, tensor<2x3x5xf16>, tensor<2x3x5xbf16>, tensor<2x3x5xf8E4M3FN>, tensor<2x3x5xf8E5M2>) {
  %r0 = nn.log_softmax %x0 {axis = 0 : i64} : tensor<2x3x5xf64>
  %r1 = nn.log_softmax %x1 {axis = 1 : i64} : tensor<2x3x5xf32>
  %r2 = nn.log_softmax %x2 {axis = 2 : i64} : tensor<2x3x5xf16>
  %r3 = nn.log_softmax %x3 {axis = 0 : i64} : tensor<2x3x5xbf16>
  %r4 = nn.log_softmax %x4 {axis = 1 : i64} : tensor<2x3x5xf8E4M3FN>
  %r5 = nn.log_softmax %x5 {axis = 2 : i64} : tensor<2x3x5xf8E5M2>
  return %r0, %r1, %r2, %r3, %r4, %r5 : tensor<2x3x5xf64>, tensor<2x3x5xf32>, tensor<2x3x5xf16>, tensor<2x3x5xbf16>, tensor<2x3x5xf8E4M3FN>, tensor<2x3x5xf8E5M2>
}

// CHECK-LABEL: func.func @softmax_rank1(
// CHECK-SAME: %[[X:.*]]: tensor<7xf32>) -> (tensor<7xf32>, tensor<7xf32>)
// CHECK-NEXT: %[[A:.*]] = nn.softmax %[[X]] {axis = 0 : i64} : tensor<7xf32>
// CHECK-NEXT: %[[B:.*]] = nn.log_softmax %[[X]] {axis = 0 : i64, tandem.note = "kept"} : tensor<7xf32>
// CHECK-NEXT: return %[[A]], %[[B]] : tensor<7xf32>, tensor<7xf32>
func.func @softmax_rank1(%x: tensor<7xf32>) -> (tensor<7xf32>, tensor<7xf32>) {
  %a = nn.softmax %x {axis = 0 : i64} : tensor<7xf32>
  %b = nn.log_softmax %x {axis = 0 : i64, tandem.note = "kept"} : tensor<7xf32>
  return %a, %b : tensor<7xf32>, tensor<7xf32>
}

// CHECK-LABEL: func.func @layer_norm_all_float_types(
// CHECK-SAME: %[[X0:.*]]: tensor<2x8xf64>, %[[W0:.*]]: tensor<8xf64>, %[[B0:.*]]: tensor<8xf64>, %[[X1:.*]]: tensor<2x8xf32>, %[[W1:.*]]: tensor<8xf32>, %[[B1:.*]]: tensor<8xf32>, %[[X2:.*]]: tensor<2x8xf16>, %[[W2:.*]]: tensor<8xf16>, %[[B2:.*]]: tensor<8xf16>, %[[X3:.*]]: tensor<2x8xbf16>, %[[W3:.*]]: tensor<8xbf16>, %[[B3:.*]]: tensor<8xbf16>, %[[X4:.*]]: tensor<2x8xf8E4M3FN>, %[[W4:.*]]: tensor<8xf8E4M3FN>, %[[B4:.*]]: tensor<8xf8E4M3FN>, %[[X5:.*]]: tensor<2x8xf8E5M2>, %[[W5:.*]]: tensor<8xf8E5M2>, %[[B5:.*]]: tensor<8xf8E5M2>) -> (tensor<2x8xf64>, tensor<2x8xf32>, tensor<2x8xf16>, tensor<2x8xbf16>, tensor<2x8xf8E4M3FN>, tensor<2x8xf8E5M2>)
// CHECK-NEXT: %[[R0:.*]] = nn.layer_norm %[[X0]], %[[W0]], %[[B0]] {epsilon = 1.000000e-05 : f64} : tensor<2x8xf64>, tensor<8xf64>, tensor<8xf64>
// CHECK-NEXT: %[[R1:.*]] = nn.layer_norm %[[X1]], %[[W1]], %[[B1]] {epsilon = 9.9999999999999995E-7 : f64} : tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>
// CHECK-NEXT: %[[R2:.*]] = nn.layer_norm %[[X2]], %[[W2]], %[[B2]] {epsilon = 1.000000e-03 : f64} : tensor<2x8xf16>, tensor<8xf16>, tensor<8xf16>
// CHECK-NEXT: %[[R3:.*]] = nn.layer_norm %[[X3]], %[[W3]], %[[B3]] {epsilon = 1.000000e-02 : f64} : tensor<2x8xbf16>, tensor<8xbf16>, tensor<8xbf16>
// CHECK-NEXT: %[[R4:.*]] = nn.layer_norm %[[X4]], %[[W4]], %[[B4]] {epsilon = 1.250000e-01 : f64} : tensor<2x8xf8E4M3FN>, tensor<8xf8E4M3FN>, tensor<8xf8E4M3FN>
// CHECK-NEXT: %[[R5:.*]] = nn.layer_norm %[[X5]], %[[W5]], %[[B5]] {epsilon = 1.000000e+00 : f64} : tensor<2x8xf8E5M2>, tensor<8xf8E5M2>, tensor<8xf8E5M2>
// CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]] : tensor<2x8xf64>, tensor<2x8xf32>, tensor<2x8xf16>, tensor<2x8xbf16>, tensor<2x8xf8E4M3FN>, tensor<2x8xf8E5M2>
func.func @layer_norm_all_float_types(%x0: tensor<2x8xf64>, %w0: tensor<8xf64>, %b0: tensor<8xf64>, %x1: tensor<2x8xf32>, %w1: tensor<8xf32>, %b1: tensor<8xf32>, %x2: tensor<2x8xf16>, %w2: tensor<8xf16>, %b2: tensor<8xf16>, %x3: tensor<2x8xbf16>, %w3: tensor<8xbf16>, %b3: tensor<8xbf16>, %x4: tensor<2x8xf8E4M3FN>, %w4: tensor<8xf8E4M3FN>, %b4: tensor<8xf8E4M3FN>, %x5: tensor<2x8xf8E5M2>, %w5: tensor<8xf8E5M2>, %b5: tensor<8xf8E5M2>) -> (tensor<2x8xf64>, tensor<2x8xf32>, tensor<2x8xf16>, tensor<2x8xbf16>, tensor<2x8xf8E4M3FN>, tensor<2x8xf8E5M2>) {
  %r0 = nn.layer_norm %x0, %w0, %b0 {epsilon = 1.000000e-05 : f64} : tensor<2x8xf64>, tensor<8xf64>, tensor<8xf64>
  %r1 = nn.layer_norm %x1, %w1, %b1 {epsilon = 9.9999999999999995E-7 : f64} : tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>
  %r2 = nn.layer_norm %x2, %w2, %b2 {epsilon = 1.000000e-03 : f64} : tensor<2x8xf16>, tensor<8xf16>, tensor<8xf16>
  %r3 = nn.layer_norm %x3, %w3, %b3 {epsilon = 1.000000e-02 : f64} : tensor<2x8xbf16>, tensor<8xbf16>, tensor<8xbf16>
  %r4 = nn.layer_norm %x4, %w4, %b4 {epsilon = 1.250000e-01 : f64} : tensor<2x8xf8E4M3FN>, tensor<8xf8E4M3FN>, tensor<8xf8E4M3FN>
  %r5 = nn.layer_norm %x5, %w5, %b5 {epsilon = 1.000000e+00 : f64} : tensor<2x8xf8E5M2>, tensor<8xf8E5M2>, tensor<8xf8E5M2>
  return %r0, %r1, %r2, %r3, %r4, %r5 : tensor<2x8xf64>, tensor<2x8xf32>, tensor<2x8xf16>, tensor<2x8xbf16>, tensor<2x8xf8E4M3FN>, tensor<2x8xf8E5M2>
}

// CHECK-LABEL: func.func @rms_norm_all_float_types(
// CHECK-SAME: %[[X0:.*]]: tensor<3x2x8xf64>, %[[W0:.*]]: tensor<8xf64>, %[[X1:.*]]: tensor<3x2x8xf32>, %[[W1:.*]]: tensor<8xf32>, %[[X2:.*]]: tensor<3x2x8xf16>, %[[W2:.*]]: tensor<8xf16>, %[[X3:.*]]: tensor<3x2x8xbf16>, %[[W3:.*]]: tensor<8xbf16>, %[[X4:.*]]: tensor<3x2x8xf8E4M3FN>, %[[W4:.*]]: tensor<8xf8E4M3FN>, %[[X5:.*]]: tensor<3x2x8xf8E5M2>, %[[W5:.*]]: tensor<8xf8E5M2>) -> (tensor<3x2x8xf64>, tensor<3x2x8xf32>, tensor<3x2x8xf16>, tensor<3x2x8xbf16>, tensor<3x2x8xf8E4M3FN>, tensor<3x2x8xf8E5M2>)
// CHECK-NEXT: %[[R0:.*]] = nn.rms_norm %[[X0]], %[[W0]] {epsilon = 1.000000e-05 : f64} : tensor<3x2x8xf64>, tensor<8xf64>
// CHECK-NEXT: %[[R1:.*]] = nn.rms_norm %[[X1]], %[[W1]] {epsilon = 9.9999999999999995E-7 : f64} : tensor<3x2x8xf32>, tensor<8xf32>
// CHECK-NEXT: %[[R2:.*]] = nn.rms_norm %[[X2]], %[[W2]] {epsilon = 1.000000e-03 : f64} : tensor<3x2x8xf16>, tensor<8xf16>
// CHECK-NEXT: %[[R3:.*]] = nn.rms_norm %[[X3]], %[[W3]] {epsilon = 1.000000e-02 : f64} : tensor<3x2x8xbf16>, tensor<8xbf16>
// CHECK-NEXT: %[[R4:.*]] = nn.rms_norm %[[X4]], %[[W4]] {epsilon = 1.250000e-01 : f64} : tensor<3x2x8xf8E4M3FN>, tensor<8xf8E4M3FN>
// CHECK-NEXT: %[[R5:.*]] = nn.rms_norm %[[X5]], %[[W5]] {epsilon = 1.000000e+00 : f64} : tensor<3x2x8xf8E5M2>, tensor<8xf8E5M2>
// CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]] : tensor<3x2x8xf64>, tensor<3x2x8xf32>, tensor<3x2x8xf16>, tensor<3x2x8xbf16>, tensor<3x2x8xf8E4M3FN>, tensor<3x2x8xf8E5M2>
func.func @rms_norm_all_float_types(%x0: tensor<3x2x8xf64>, %w0: tensor<8xf64>, %x1: tensor<3x2x8xf32>, %w1: tensor<8xf32>, %x2: tensor<3x2x8xf16>, %w2: tensor<8xf16>, %x3: tensor<3x2x8xbf16>, %w3: tensor<8xbf16>, %x4: tensor<3x2x8xf8E4M3FN>, %w4: tensor<8xf8E4M3FN>, %x5: tensor<3x2x8xf8E5M2>, %w5: tensor<8xf8E5M2>) -> (tensor<3x2x8xf64>, tensor<3x2x8xf32>, tensor<3x2x8xf16>, tensor<3x2x8xbf16>, tensor<3x2x8xf8E4M3FN>, tensor<3x2x8xf8E5M2>) {
  %r0 = nn.rms_norm %x0, %w0 {epsilon = 1.000000e-05 : f64} : tensor<3x2x8xf64>, tensor<8xf64>
  %r1 = nn.rms_norm %x1, %w1 {epsilon = 9.9999999999999995E-7 : f64} : tensor<3x2x8xf32>, tensor<8xf32>
  %r2 = nn.rms_norm %x2, %w2 {epsilon = 1.000000e-03 : f64} : tensor<3x2x8xf16>, tensor<8xf16>
  %r3 = nn.rms_norm %x3, %w3 {epsilon = 1.000000e-02 : f64} : tensor<3x2x8xbf16>, tensor<8xbf16>
  %r4 = nn.rms_norm %x4, %w4 {epsilon = 1.250000e-01 : f64} : tensor<3x2x8xf8E4M3FN>, tensor<8xf8E4M3FN>
  %r5 = nn.rms_norm %x5, %w5 {epsilon = 1.000000e+00 : f64} : tensor<3x2x8xf8E5M2>, tensor<8xf8E5M2>
  return %r0, %r1, %r2, %r3, %r4, %r5 : tensor<3x2x8xf64>, tensor<3x2x8xf32>, tensor<3x2x8xf16>, tensor<3x2x8xbf16>, tensor<3x2x8xf8E4M3FN>, tensor<3x2x8xf8E5M2>
}

// CHECK-LABEL: func.func @norms_rank1(
// CHECK-SAME: %[[X:.*]]: tensor<8xf32>, %[[W:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
// CHECK-NEXT: %[[A:.*]] = nn.layer_norm %[[X]], %[[W]], %[[B]] {epsilon = 1.000000e-05 : f64, tandem.note = "kept"} : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
// CHECK-NEXT: %[[C:.*]] = nn.rms_norm %[[X]], %[[W]] {epsilon = 1.000000e-05 : f64} : tensor<8xf32>, tensor<8xf32>
// CHECK-NEXT: return %[[A]], %[[C]] : tensor<8xf32>, tensor<8xf32>
func.func @norms_rank1(%x: tensor<8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %a = nn.layer_norm %x, %w, %b {epsilon = 1.000000e-05 : f64, tandem.note = "kept"} : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  %c = nn.rms_norm %x, %w {epsilon = 1.000000e-05 : f64} : tensor<8xf32>, tensor<8xf32>
  return %a, %c : tensor<8xf32>, tensor<8xf32>
}

// CHECK-LABEL: func.func @embedding(
// CHECK-SAME: %[[WTE:.*]]: tensor<256x32xf32>, %[[TOK32:.*]]: tensor<8x16xi32>, %[[TOK64:.*]]: tensor<8x16xi64>, %[[T16:.*]]: tensor<100x4xf16>, %[[ONE:.*]]: tensor<i32>, %[[FLAT:.*]]: tensor<5xi64>, %[[TB:.*]]: tensor<10x6xbf16>, %[[T8:.*]]: tensor<10x6xf8E4M3FN>, %[[T85:.*]]: tensor<10x6xf8E5M2>, %[[T64:.*]]: tensor<10x6xf64>) -> (tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<4xf16>, tensor<5x6xbf16>, tensor<5x6xf8E4M3FN>, tensor<5x6xf8E5M2>, tensor<5x6xf64>)
// CHECK-NEXT: %[[A:.*]] = nn.embedding %[[WTE]], %[[TOK32]] : tensor<256x32xf32>, tensor<8x16xi32> -> tensor<8x16x32xf32>
// CHECK-NEXT: %[[B:.*]] = nn.embedding %[[WTE]], %[[TOK64]] : tensor<256x32xf32>, tensor<8x16xi64> -> tensor<8x16x32xf32>
// CHECK-NEXT: %[[C:.*]] = nn.embedding %[[T16]], %[[ONE]] : tensor<100x4xf16>, tensor<i32> -> tensor<4xf16>
// CHECK-NEXT: %[[D:.*]] = nn.embedding %[[TB]], %[[FLAT]] : tensor<10x6xbf16>, tensor<5xi64> -> tensor<5x6xbf16>
// CHECK-NEXT: %[[E:.*]] = nn.embedding %[[T8]], %[[FLAT]] : tensor<10x6xf8E4M3FN>, tensor<5xi64> -> tensor<5x6xf8E4M3FN>
// CHECK-NEXT: %[[F:.*]] = nn.embedding %[[T85]], %[[FLAT]] : tensor<10x6xf8E5M2>, tensor<5xi64> -> tensor<5x6xf8E5M2>
// CHECK-NEXT: %[[G:.*]] = nn.embedding %[[T64]], %[[FLAT]] : tensor<10x6xf64>, tensor<5xi64> -> tensor<5x6xf64>
// CHECK-NEXT: return %[[A]], %[[B]], %[[C]], %[[D]], %[[E]], %[[F]], %[[G]] : tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<4xf16>, tensor<5x6xbf16>, tensor<5x6xf8E4M3FN>, tensor<5x6xf8E5M2>, tensor<5x6xf64>
func.func @embedding(%wte: tensor<256x32xf32>, %tok32: tensor<8x16xi32>, %tok64: tensor<8x16xi64>, %t16: tensor<100x4xf16>, %one: tensor<i32>, %flat: tensor<5xi64>, %tb: tensor<10x6xbf16>, %t8: tensor<10x6xf8E4M3FN>, %t85: tensor<10x6xf8E5M2>, %t64: tensor<10x6xf64>) -> (tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<4xf16>, tensor<5x6xbf16>, tensor<5x6xf8E4M3FN>, tensor<5x6xf8E5M2>, tensor<5x6xf64>) {
  %a = nn.embedding %wte, %tok32 : tensor<256x32xf32>, tensor<8x16xi32> -> tensor<8x16x32xf32>
  %b = nn.embedding %wte, %tok64 : tensor<256x32xf32>, tensor<8x16xi64> -> tensor<8x16x32xf32>
  %c = nn.embedding %t16, %one : tensor<100x4xf16>, tensor<i32> -> tensor<4xf16>
  %d = nn.embedding %tb, %flat : tensor<10x6xbf16>, tensor<5xi64> -> tensor<5x6xbf16>
  %e = nn.embedding %t8, %flat : tensor<10x6xf8E4M3FN>, tensor<5xi64> -> tensor<5x6xf8E4M3FN>
  %f = nn.embedding %t85, %flat : tensor<10x6xf8E5M2>, tensor<5xi64> -> tensor<5x6xf8E5M2>
  %g = nn.embedding %t64, %flat : tensor<10x6xf64>, tensor<5xi64> -> tensor<5x6xf64>
  return %a, %b, %c, %d, %e, %f, %g : tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<4xf16>, tensor<5x6xbf16>, tensor<5x6xf8E4M3FN>, tensor<5x6xf8E5M2>, tensor<5x6xf64>
}

// CHECK-LABEL: func.func @attention_flags(
// CHECK-SAME: %[[Q:.*]]: tensor<2x4x8xf32>, %[[KL:.*]]: tensor<2x6x8xf32>, %[[VL:.*]]: tensor<2x6x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>)
// CHECK-NEXT: %[[A:.*]] = nn.attention %[[Q]], %[[Q]], %[[Q]] {heads = 1 : i64} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[B:.*]] = nn.attention %[[Q]], %[[Q]], %[[Q]] {causal, heads = 2 : i64} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[C:.*]] = nn.attention %[[Q]], %[[KL]], %[[VL]] {heads = 4 : i64, scale = 1.250000e-01 : f64} : tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[D:.*]] = nn.attention %[[Q]], %[[Q]], %[[Q]] {causal, heads = 8 : i64, scale = 0.35355339059327379 : f64} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[E:.*]] = nn.attention %[[Q]], %[[Q]], %[[Q]] {causal, heads = 2 : i64, tandem.note = "kept"} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT: return %[[A]], %[[B]], %[[C]], %[[D]], %[[E]] : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
func.func @attention_flags(%q: tensor<2x4x8xf32>, %kl: tensor<2x6x8xf32>, %vl: tensor<2x6x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  %a = nn.attention %q, %q, %q {heads = 1 : i64} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %b = nn.attention %q, %q, %q {causal, heads = 2 : i64} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %c = nn.attention %q, %kl, %vl {heads = 4 : i64, scale = 1.250000e-01 : f64} : tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32> -> tensor<2x4x8xf32>
  %d = nn.attention %q, %q, %q {causal, heads = 8 : i64, scale = 0.35355339059327379 : f64} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %e = nn.attention %q, %q, %q {causal, heads = 2 : i64, tandem.note = "kept"} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  return %a, %b, %c, %d, %e : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
}

// Grouped-query attention: key and value kv_heads·D/heads wide.
// CHECK-LABEL: func.func @attention_kv_heads(
// CHECK-NEXT: nn.attention %{{.*}}, %{{.*}}, %{{.*}} {causal, heads = 4 : i64, kv_heads = 2 : i64} : tensor<2x4x8xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT: nn.attention %{{.*}}, %{{.*}}, %{{.*}} {heads = 4 : i64, kv_heads = 1 : i64, scale = 5.000000e-01 : f64} : tensor<2x4x8xf32>, tensor<2x6x2xf32>, tensor<2x6x2xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[Y:.*]], %[[LSE:.*]] = nn.attention %{{.*}}, %{{.*}}, %{{.*}} {causal, heads = 4 : i64, kv_heads = 2 : i64} : tensor<2x4x8xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32> -> tensor<2x4x8xf32>, tensor<2x4x4xf32>
// CHECK-NEXT: nn.attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %[[Y]], %[[LSE]], %{{.*}} {causal, heads = 4 : i64, kv_heads = 2 : i64} : tensor<2x4x8xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4x8xf32>, tensor<2x4x4xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>
func.func @attention_kv_heads(%q: tensor<2x4x8xf32>, %k: tensor<2x4x4xf32>, %k1: tensor<2x6x2xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x4xf32>) {
  %a = nn.attention %q, %k, %k {causal, heads = 4 : i64, kv_heads = 2 : i64} : tensor<2x4x8xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32> -> tensor<2x4x8xf32>
  %b = nn.attention %q, %k1, %k1 {heads = 4 : i64, kv_heads = 1 : i64, scale = 0.5 : f64} : tensor<2x4x8xf32>, tensor<2x6x2xf32>, tensor<2x6x2xf32> -> tensor<2x4x8xf32>
  %y, %lse = nn.attention %q, %k, %k {causal, heads = 4 : i64, kv_heads = 2 : i64} : tensor<2x4x8xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32> -> tensor<2x4x8xf32>, tensor<2x4x4xf32>
  %dq, %dk, %dv = nn.attention_grad %q, %k, %k, %y, %lse, %a {causal, heads = 4 : i64, kv_heads = 2 : i64} : tensor<2x4x8xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4x8xf32>, tensor<2x4x4xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>
  return %b, %dq, %dk : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x4xf32>
}

// CHECK-LABEL: func.func @attention_all_float_types(
// CHECK-SAME: %[[X0:.*]]: tensor<1x3x4xf64>, %[[X1:.*]]: tensor<1x3x4xf32>, %[[X2:.*]]: tensor<1x3x4xf16>, %[[X3:.*]]: tensor<1x3x4xbf16>, %[[X4:.*]]: tensor<1x3x4xf8E4M3FN>, %[[X5:.*]]: tensor<1x3x4xf8E5M2>) -> (tensor<1x3x4xf64>, tensor<1x3x4xf32>, tensor<1x3x4xf16>, tensor<1x3x4xbf16>, tensor<1x3x4xf8E4M3FN>, tensor<1x3x4xf8E5M2>)
// CHECK-NEXT: %[[R0:.*]] = nn.attention %[[X0]], %[[X0]], %[[X0]] {causal, heads = 2 : i64} : tensor<1x3x4xf64>, tensor<1x3x4xf64>, tensor<1x3x4xf64> -> tensor<1x3x4xf64>
// CHECK-NEXT: %[[R1:.*]] = nn.attention %[[X1]], %[[X1]], %[[X1]] {causal, heads = 2 : i64} : tensor<1x3x4xf32>, tensor<1x3x4xf32>, tensor<1x3x4xf32> -> tensor<1x3x4xf32>
// CHECK-NEXT: %[[R2:.*]] = nn.attention %[[X2]], %[[X2]], %[[X2]] {causal, heads = 2 : i64} : tensor<1x3x4xf16>, tensor<1x3x4xf16>, tensor<1x3x4xf16> -> tensor<1x3x4xf16>
// CHECK-NEXT: %[[R3:.*]] = nn.attention %[[X3]], %[[X3]], %[[X3]] {causal, heads = 2 : i64} : tensor<1x3x4xbf16>, tensor<1x3x4xbf16>, tensor<1x3x4xbf16> -> tensor<1x3x4xbf16>
// CHECK-NEXT: %[[R4:.*]] = nn.attention %[[X4]], %[[X4]], %[[X4]] {causal, heads = 2 : i64} : tensor<1x3x4xf8E4M3FN>, tensor<1x3x4xf8E4M3FN>, tensor<1x3x4xf8E4M3FN> -> tensor<1x3x4xf8E4M3FN>
// CHECK-NEXT: %[[R5:.*]] = nn.attention %[[X5]], %[[X5]], %[[X5]] {causal, heads = 2 : i64} : tensor<1x3x4xf8E5M2>, tensor<1x3x4xf8E5M2>, tensor<1x3x4xf8E5M2> -> tensor<1x3x4xf8E5M2>
// CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]] : tensor<1x3x4xf64>, tensor<1x3x4xf32>, tensor<1x3x4xf16>, tensor<1x3x4xbf16>, tensor<1x3x4xf8E4M3FN>, tensor<1x3x4xf8E5M2>
func.func @attention_all_float_types(%x0: tensor<1x3x4xf64>, %x1: tensor<1x3x4xf32>, %x2: tensor<1x3x4xf16>, %x3: tensor<1x3x4xbf16>, %x4: tensor<1x3x4xf8E4M3FN>, %x5: tensor<1x3x4xf8E5M2>) -> (tensor<1x3x4xf64>, tensor<1x3x4xf32>, tensor<1x3x4xf16>, tensor<1x3x4xbf16>, tensor<1x3x4xf8E4M3FN>, tensor<1x3x4xf8E5M2>) {
  %r0 = nn.attention %x0, %x0, %x0 {causal, heads = 2 : i64} : tensor<1x3x4xf64>, tensor<1x3x4xf64>, tensor<1x3x4xf64> -> tensor<1x3x4xf64>
  %r1 = nn.attention %x1, %x1, %x1 {causal, heads = 2 : i64} : tensor<1x3x4xf32>, tensor<1x3x4xf32>, tensor<1x3x4xf32> -> tensor<1x3x4xf32>
  %r2 = nn.attention %x2, %x2, %x2 {causal, heads = 2 : i64} : tensor<1x3x4xf16>, tensor<1x3x4xf16>, tensor<1x3x4xf16> -> tensor<1x3x4xf16>
  %r3 = nn.attention %x3, %x3, %x3 {causal, heads = 2 : i64} : tensor<1x3x4xbf16>, tensor<1x3x4xbf16>, tensor<1x3x4xbf16> -> tensor<1x3x4xbf16>
  %r4 = nn.attention %x4, %x4, %x4 {causal, heads = 2 : i64} : tensor<1x3x4xf8E4M3FN>, tensor<1x3x4xf8E4M3FN>, tensor<1x3x4xf8E4M3FN> -> tensor<1x3x4xf8E4M3FN>
  %r5 = nn.attention %x5, %x5, %x5 {causal, heads = 2 : i64} : tensor<1x3x4xf8E5M2>, tensor<1x3x4xf8E5M2>, tensor<1x3x4xf8E5M2> -> tensor<1x3x4xf8E5M2>
  return %r0, %r1, %r2, %r3, %r4, %r5 : tensor<1x3x4xf64>, tensor<1x3x4xf32>, tensor<1x3x4xf16>, tensor<1x3x4xbf16>, tensor<1x3x4xf8E4M3FN>, tensor<1x3x4xf8E5M2>
}

// CHECK-LABEL: func.func @cross_entropy(
// CHECK-SAME: %[[LOGITS:.*]]: tensor<8x16x256xf32>, %[[T32:.*]]: tensor<8x16xi32>, %[[T64:.*]]: tensor<8x16xi64>, %[[L1:.*]]: tensor<10xf64>, %[[T0:.*]]: tensor<i64>, %[[L16:.*]]: tensor<4x3xf16>, %[[LB:.*]]: tensor<4x3xbf16>, %[[L8:.*]]: tensor<4x3xf8E4M3FN>, %[[L85:.*]]: tensor<4x3xf8E5M2>, %[[T4:.*]]: tensor<4xi32>) -> (tensor<f32>, tensor<f32>, tensor<f64>, tensor<f16>, tensor<bf16>, tensor<f8E4M3FN>, tensor<f8E5M2>)
// CHECK-NEXT: %[[A:.*]] = nn.cross_entropy %[[LOGITS]], %[[T32]] : tensor<8x16x256xf32>, tensor<8x16xi32> -> tensor<f32>
// CHECK-NEXT: %[[B:.*]] = nn.cross_entropy %[[LOGITS]], %[[T64]] : tensor<8x16x256xf32>, tensor<8x16xi64> -> tensor<f32>
// CHECK-NEXT: %[[C:.*]] = nn.cross_entropy %[[L1]], %[[T0]] : tensor<10xf64>, tensor<i64> -> tensor<f64>
// CHECK-NEXT: %[[D:.*]] = nn.cross_entropy %[[L16]], %[[T4]] : tensor<4x3xf16>, tensor<4xi32> -> tensor<f16>
// CHECK-NEXT: %[[E:.*]] = nn.cross_entropy %[[LB]], %[[T4]] : tensor<4x3xbf16>, tensor<4xi32> -> tensor<bf16>
// CHECK-NEXT: %[[F:.*]] = nn.cross_entropy %[[L8]], %[[T4]] : tensor<4x3xf8E4M3FN>, tensor<4xi32> -> tensor<f8E4M3FN>
// CHECK-NEXT: %[[G:.*]] = nn.cross_entropy %[[L85]], %[[T4]] {tandem.note = "kept"} : tensor<4x3xf8E5M2>, tensor<4xi32> -> tensor<f8E5M2>
// CHECK-NEXT: return %[[A]], %[[B]], %[[C]], %[[D]], %[[E]], %[[F]], %[[G]] : tensor<f32>, tensor<f32>, tensor<f64>, tensor<f16>, tensor<bf16>, tensor<f8E4M3FN>, tensor<f8E5M2>
func.func @cross_entropy(%logits: tensor<8x16x256xf32>, %t32: tensor<8x16xi32>, %t64: tensor<8x16xi64>, %l1: tensor<10xf64>, %t0: tensor<i64>, %l16: tensor<4x3xf16>, %lb: tensor<4x3xbf16>, %l8: tensor<4x3xf8E4M3FN>, %l85: tensor<4x3xf8E5M2>, %t4: tensor<4xi32>) -> (tensor<f32>, tensor<f32>, tensor<f64>, tensor<f16>, tensor<bf16>, tensor<f8E4M3FN>, tensor<f8E5M2>) {
  %a = nn.cross_entropy %logits, %t32 : tensor<8x16x256xf32>, tensor<8x16xi32> -> tensor<f32>
  %b = nn.cross_entropy %logits, %t64 : tensor<8x16x256xf32>, tensor<8x16xi64> -> tensor<f32>
  %c = nn.cross_entropy %l1, %t0 : tensor<10xf64>, tensor<i64> -> tensor<f64>
  %d = nn.cross_entropy %l16, %t4 : tensor<4x3xf16>, tensor<4xi32> -> tensor<f16>
  %e = nn.cross_entropy %lb, %t4 : tensor<4x3xbf16>, tensor<4xi32> -> tensor<bf16>
  %f = nn.cross_entropy %l8, %t4 : tensor<4x3xf8E4M3FN>, tensor<4xi32> -> tensor<f8E4M3FN>
  %g = nn.cross_entropy %l85, %t4 {tandem.note = "kept"} : tensor<4x3xf8E5M2>, tensor<4xi32> -> tensor<f8E5M2>
  return %a, %b, %c, %d, %e, %f, %g : tensor<f32>, tensor<f32>, tensor<f64>, tensor<f16>, tensor<bf16>, tensor<f8E4M3FN>, tensor<f8E5M2>
}
