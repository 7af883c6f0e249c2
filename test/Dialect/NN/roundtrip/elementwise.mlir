// RUN: tandem-opt %s | tandem-opt | FileCheck %s
// RUN: tandem-opt %s --mlir-print-op-generic | tandem-opt | FileCheck %s
// Elementwise ops: the unary ops and nn.pow over every float element type,
// the binary ops over every element type and with NumPy broadcasting.

// CHECK-LABEL: func.func @neg_all_float_types(
// CHECK-SAME: %[[X0:.*]]: tensor<2x3xf64>, %[[X1:.*]]: tensor<2x3xf32>, %[[X2:.*]]: tensor<2x3xf16>, %[[X3:.*]]: tensor<2x3xbf16>, %[[X4:.*]]: tensor<2x3xf8E4M3FN>, %[[X5:.*]]: tensor<2x3xf8E5M2>) -> (tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>)
// CHECK-NEXT: %[[R0:.*]] = nn.neg %[[X0]] : tensor<2x3xf64>
// CHECK-NEXT: %[[R1:.*]] = nn.neg %[[X1]] : tensor<2x3xf32>
// CHECK-NEXT: %[[R2:.*]] = nn.neg %[[X2]] : tensor<2x3xf16>
// CHECK-NEXT: %[[R3:.*]] = nn.neg %[[X3]] : tensor<2x3xbf16>
// CHECK-NEXT: %[[R4:.*]] = nn.neg %[[X4]] : tensor<2x3xf8E4M3FN>
// CHECK-NEXT: %[[R5:.*]] = nn.neg %[[X5]] : tensor<2x3xf8E5M2>
// CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]] : tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>
func.func @neg_all_float_types(%x0: tensor<2x3xf64>, %x1: tensor<2x3xf32>, %x2: tensor<2x3xf16>, %x3: tensor<2x3xbf16>, %x4: tensor<2x3xf8E4M3FN>, %x5: tensor<2x3xf8E5M2>) -> (tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>) {
  %r0 = nn.neg %x0 : tensor<2x3xf64>
  %r1 = nn.neg %x1 : tensor<2x3xf32>
  %r2 = nn.neg %x2 : tensor<2x3xf16>
  %r3 = nn.neg %x3 : tensor<2x3xbf16>
  %r4 = nn.neg %x4 : tensor<2x3xf8E4M3FN>
  %r5 = nn.neg %x5 : tensor<2x3xf8E5M2>
  return %r0, %r1, %r2, %r3, %r4, %r5 : tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>
}

// CHECK-LABEL: func.func @exp_all_float_types(
// CHECK-SAME: %[[X0:.*]]: tensor<2x3xf64>, %[[X1:.*]]: tensor<2x3xf32>, %[[X2:.*]]: tensor<2x3xf16>, %[[X3:.*]]: tensor<2x3xbf16>, %[[X4:.*]]: tensor<2x3xf8E4M3FN>, %[[X5:.*]]: tensor<2x3xf8E5M2>) -> (tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>)
// CHECK-NEXT: %[[R0:.*]] = nn.exp %[[X0]] : tensor<2x3xf64>
// CHECK-NEXT: %[[R1:.*]] = nn.exp %[[X1]] : tensor<2x3xf32>
// CHECK-NEXT: %[[R2:.*]] = nn.exp %[[X2]] : tensor<2x3xf16>
// CHECK-NEXT: %[[R3:.*]] = nn.exp %[[X3]] : tensor<2x3xbf16>
// CHECK-NEXT: %[[R4:.*]] = nn.exp %[[X4]] : tensor<2x3xf8E4M3FN>
// CHECK-NEXT: %[[R5:.*]] = nn.exp %[[X5]] : tensor<2x3xf8E5M2>
// CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]] : tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>
func.func @exp_all_float_types(%x0: tensor<2x3xf64>, %x1: tensor<2x3xf32>, %x2: tensor<2x3xf16>, %x3: tensor<2x3xbf16>, %x4: tensor<2x3xf8E4M3FN>, %x5: tensor<2x3xf8E5M2>) -> (tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>) {
  %r0 = nn.exp %x0 : tensor<2x3xf64>
  %r1 = nn.exp %x1 : tensor<2x3xf32>
  %r2 = nn.exp %x2 : tensor<2x3xf16>
  %r3 = nn.exp %x3 : tensor<2x3xbf16>
  %r4 = nn.exp %x4 : tensor<2x3xf8E4M3FN>
  %r5 = nn.exp %x5 : tensor<2x3xf8E5M2>
  return %r0, %r1, %r2, %r3, %r4, %r5 : tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>
}

// CHECK-LABEL: func.func @log_all_float_types(
// CHECK-SAME: %[[X0:.*]]: tensor<2x3xf64>, %[[X1:.*]]: tensor<2x3xf32>, %[[X2:.*]]: tensor<2x3xf16>, %[[X3:.*]]: tensor<2x3xbf16>, %[[X4:.*]]: tensor<2x3xf8E4M3FN>, %[[X5:.*]]: tensor<2x3xf8E5M2>) -> (tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>)
// CHECK-NEXT: %[[R0:.*]] = nn.log %[[X0]] : tensor<2x3xf64>
// CHECK-NEXT: %[[R1:.*]] = nn.log %[[X1]] : tensor<2x3xf32>
// CHECK-NEXT: %[[R2:.*]] = nn.log %[[X2]] : tensor<2x3xf16>
// CHECK-NEXT: %[[R3:.*]] = nn.log %[[X3]] : tensor<2x3xbf16>
// CHECK-NEXT: %[[R4:.*]] = nn.log %[[X4]] : tensor<2x3xf8E4M3FN>
// CHECK-NEXT: %[[R5:.*]] = nn.log %[[X5]] : tensor<2x3xf8E5M2>
// CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]] : tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>
func.func @log_all_float_types(%x0: tensor<2x3xf64>, %x1: tensor<2x3xf32>, %x2: tensor<2x3xf16>, %x3: tensor<2x3xbf16>, %x4: tensor<2x3xf8E4M3FN>, %x5: tensor<2x3xf8E5M2>) -> (tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>) {
  %r0 = nn.log %x0 : tensor<2x3xf64>
  %r1 = nn.log %x1 : tensor<2x3xf32>
  %r2 = nn.log %x2 : tensor<2x3xf16>
  %r3 = nn.log %x3 : tensor<2x3xbf16>
  %r4 = nn.log %x4 : tensor<2x3xf8E4M3FN>
  %r5 = nn.log %x5 : tensor<2x3xf8E5M2>
  return %r0, %r1, %r2, %r3, %r4, %r5 : tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>
}

// CHECK-LABEL: func.func @tanh_all_float_types(
// CHECK-SAME: %[[X0:.*]]: tensor<2x3xf64>, %[[X1:.*]]: tensor<2x3xf32>, %[[X2:.*]]: tensor<2x3xf16>, %[[X3:.*]]: tensor<2x3xbf16>, %[[X4:.*]]: tensor<2x3xf8E4M3FN>, %[[X5:.*]]: tensor<2x3xf8E5M2>) -> (tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>)
// CHECK-NEXT: %[[R0:.*]] = nn.tanh %[[X0]] : tensor<2x3xf64>
// CHECK-NEXT: %[[R1:.*]] = nn.tanh %[[X1]] : tensor<2x3xf32>
// CHECK-NEXT: %[[R2:.*]] = nn.tanh %[[X2]] : tensor<2x3xf16>
// CHECK-NEXT: %[[R3:.*]] = nn.tanh %[[X3]] : tensor<2x3xbf16>
// CHECK-NEXT: %[[R4:.*]] = nn.tanh %[[X4]] : tensor<2x3xf8E4M3FN>
// CHECK-NEXT: %[[R5:.*]] = nn.tanh %[[X5]] : tensor<2x3xf8E5M2>
// CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]] : tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>
func.func @tanh_all_float_types(%x0: tensor<2x3xf64>, %x1: tensor<2x3xf32>, %x2: tensor<2x3xf16>, %x3: tensor<2x3xbf16>, %x4: tensor<2x3xf8E4M3FN>, %x5: tensor<2x3xf8E5M2>) -> (tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>) {
  %r0 = nn.tanh %x0 : tensor<2x3xf64>
  %r1 = nn.tanh %x1 : tensor<2x3xf32>
  %r2 = nn.tanh %x2 : tensor<2x3xf16>
  %r3 = nn.tanh %x3 : tensor<2x3xbf16>
  %r4 = nn.tanh %x4 : tensor<2x3xf8E4M3FN>
  %r5 = nn.tanh %x5 : tensor<2x3xf8E5M2>
  return %r0, %r1, %r2, %r3, %r4, %r5 : tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>
}

// CHECK-LABEL: func.func @sqrt_all_float_types(
// CHECK-SAME: %[[X0:.*]]: tensor<2x3xf64>, %[[X1:.*]]: tensor<2x3xf32>, %[[X2:.*]]: tensor<2x3xf16>, %[[X3:.*]]: tensor<2x3xbf16>, %[[X4:.*]]: tensor<2x3xf8E4M3FN>, %[[X5:.*]]: tensor<2x3xf8E5M2>) -> (tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>)
// CHECK-NEXT: %[[R0:.*]] = nn.sqrt %[[X0]] : tensor<2x3xf64>
// CHECK-NEXT: %[[R1:.*]] = nn.sqrt %[[X1]] : tensor<2x3xf32>
// CHECK-NEXT: %[[R2:.*]] = nn.sqrt %[[X2]] : tensor<2x3xf16>
// CHECK-NEXT: %[[R3:.*]] = nn.sqrt %[[X3]] : tensor<2x3xbf16>
// CHECK-NEXT: %[[R4:.*]] = nn.sqrt %[[X4]] : tensor<2x3xf8E4M3FN>
// CHECK-NEXT: %[[R5:.*]] = nn.sqrt %[[X5]] : tensor<2x3xf8E5M2>
// CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]] : tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>
func.func @sqrt_all_float_types(%x0: tensor<2x3xf64>, %x1: tensor<2x3xf32>, %x2: tensor<2x3xf16>, %x3: tensor<2x3xbf16>, %x4: tensor<2x3xf8E4M3FN>, %x5: tensor<2x3xf8E5M2>) -> (tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>) {
  %r0 = nn.sqrt %x0 : tensor<2x3xf64>
  %r1 = nn.sqrt %x1 : tensor<2x3xf32>
  %r2 = nn.sqrt %x2 : tensor<2x3xf16>
  %r3 = nn.sqrt %x3 : tensor<2x3xbf16>
  %r4 = nn.sqrt %x4 : tensor<2x3xf8E4M3FN>
  %r5 = nn.sqrt %x5 : tensor<2x3xf8E5M2>
  return %r0, %r1, %r2, %r3, %r4, %r5 : tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>
}

// CHECK-LABEL: func.func @rsqrt_all_float_types(
// CHECK-SAME: %[[X0:.*]]: tensor<2x3xf64>, %[[X1:.*]]: tensor<2x3xf32>, %[[X2:.*]]: tensor<2x3xf16>, %[[X3:.*]]: tensor<2x3xbf16>, %[[X4:.*]]: tensor<2x3xf8E4M3FN>, %[[X5:.*]]: tensor<2x3xf8E5M2>) -> (tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>)
// CHECK-NEXT: %[[R0:.*]] = nn.rsqrt %[[X0]] : tensor<2x3xf64>
// CHECK-NEXT: %[[R1:.*]] = nn.rsqrt %[[X1]] : tensor<2x3xf32>
// CHECK-NEXT: %[[R2:.*]] = nn.rsqrt %[[X2]] : tensor<2x3xf16>
// CHECK-NEXT: %[[R3:.*]] = nn.rsqrt %[[X3]] : tensor<2x3xbf16>
// CHECK-NEXT: %[[R4:.*]] = nn.rsqrt %[[X4]] : tensor<2x3xf8E4M3FN>
// CHECK-NEXT: %[[R5:.*]] = nn.rsqrt %[[X5]] : tensor<2x3xf8E5M2>
// CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]] : tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>
func.func @rsqrt_all_float_types(%x0: tensor<2x3xf64>, %x1: tensor<2x3xf32>, %x2: tensor<2x3xf16>, %x3: tensor<2x3xbf16>, %x4: tensor<2x3xf8E4M3FN>, %x5: tensor<2x3xf8E5M2>) -> (tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>) {
  %r0 = nn.rsqrt %x0 : tensor<2x3xf64>
  %r1 = nn.rsqrt %x1 : tensor<2x3xf32>
  %r2 = nn.rsqrt %x2 : tensor<2x3xf16>
  %r3 = nn.rsqrt %x3 : tensor<2x3xbf16>
  %r4 = nn.rsqrt %x4 : tensor<2x3xf8E4M3FN>
  %r5 = nn.rsqrt %x5 : tensor<2x3xf8E5M2>
  return %r0, %r1, %r2, %r3, %r4, %r5 : tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>
}

// CHECK-LABEL: func.func @relu_all_float_types(
// CHECK-SAME: %[[X0:.*]]: tensor<2x3xf64>, %[[X1:.*]]: tensor<2x3xf32>, %[[X2:.*]]: tensor<2x3xf16>, %[[X3:.*]]: tensor<2x3xbf16>, %[[X4:.*]]: tensor<2x3xf8E4M3FN>, %[[X5:.*]]: tensor<2x3xf8E5M2>) -> (tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>)
// CHECK-NEXT: %[[R0:.*]] = nn.relu %[[X0]] : tensor<2x3xf64>
// CHECK-NEXT: %[[R1:.*]] = nn.relu %[[X1]] : tensor<2x3xf32>
// CHECK-NEXT: %[[R2:.*]] = nn.relu %[[X2]] : tensor<2x3xf16>
// CHECK-NEXT: %[[R3:.*]] = nn.relu %[[X3]] : tensor<2x3xbf16>
// CHECK-NEXT: %[[R4:.*]] = nn.relu %[[X4]] : tensor<2x3xf8E4M3FN>
// CHECK-NEXT: %[[R5:.*]] = nn.relu %[[X5]] : tensor<2x3xf8E5M2>
// CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]] : tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>
func.func @relu_all_float_types(%x0: tensor<2x3xf64>, %x1: tensor<2x3xf32>, %x2: tensor<2x3xf16>, %x3: tensor<2x3xbf16>, %x4: tensor<2x3xf8E4M3FN>, %x5: tensor<2x3xf8E5M2>) -> (tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>) {
  %r0 = nn.relu %x0 : tensor<2x3xf64>
  %r1 = nn.relu %x1 : tensor<2x3xf32>
  %r2 = nn.relu %x2 : tensor<2x3xf16>
  %r3 = nn.relu %x3 : tensor<2x3xbf16>
  %r4 = nn.relu %x4 : tensor<2x3xf8E4M3FN>
  %r5 = nn.relu %x5 : tensor<2x3xf8E5M2>
  return %r0, %r1, %r2, %r3, %r4, %r5 : tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>
}

// CHECK-LABEL: func.func @gelu_all_float_types(
// CHECK-SAME: %[[X0:.*]]: tensor<2x3xf64>, %[[X1:.*]]: tensor<2x3xf32>, %[[X2:.*]]: tensor<2x3xf16>, %[[X3:.*]]: tensor<2x3xbf16>, %[[X4:.*]]: tensor<2x3xf8E4M3FN>, %[[X5:.*]]: tensor<2x3xf8E5M2>) -> (tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>)
// CHECK-NEXT: %[[R0:.*]] = nn.gelu %[[X0]] : tensor<2x3xf64>
// CHECK-NEXT: %[[R1:.*]] = nn.gelu %[[X1]] : tensor<2x3xf32>
// CHECK-NEXT: %[[R2:.*]] = nn.gelu %[[X2]] : tensor<2x3xf16>
// CHECK-NEXT: %[[R3:.*]] = nn.gelu %[[X3]] : tensor<2x3xbf16>
// CHECK-NEXT: %[[R4:.*]] = nn.gelu %[[X4]] : tensor<2x3xf8E4M3FN>
// CHECK-NEXT: %[[R5:.*]] = nn.gelu %[[X5]] : tensor<2x3xf8E5M2>
// CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]] : tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>
func.func @gelu_all_float_types(%x0: tensor<2x3xf64>, %x1: tensor<2x3xf32>, %x2: tensor<2x3xf16>, %x3: tensor<2x3xbf16>, %x4: tensor<2x3xf8E4M3FN>, %x5: tensor<2x3xf8E5M2>) -> (tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>) {
  %r0 = nn.gelu %x0 : tensor<2x3xf64>
  %r1 = nn.gelu %x1 : tensor<2x3xf32>
  %r2 = nn.gelu %x2 : tensor<2x3xf16>
  %r3 = nn.gelu %x3 : tensor<2x3xbf16>
  %r4 = nn.gelu %x4 : tensor<2x3xf8E4M3FN>
  %r5 = nn.gelu %x5 : tensor<2x3xf8E5M2>
  return %r0, %r1, %r2, %r3, %r4, %r5 : tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>
}

// CHECK-LABEL: func.func @silu_all_float_types(
// CHECK-SAME: %[[X0:.*]]: tensor<2x3xf64>, %[[X1:.*]]: tensor<2x3xf32>, %[[X2:.*]]: tensor<2x3xf16>, %[[X3:.*]]: tensor<2x3xbf16>, %[[X4:.*]]: tensor<2x3xf8E4M3FN>, %[[X5:.*]]: tensor<2x3xf8E5M2>) -> (tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>)
// CHECK-NEXT: %[[R0:.*]] = nn.silu %[[X0]] : tensor<2x3xf64>
// CHECK-NEXT: %[[R1:.*]] = nn.silu %[[X1]] : tensor<2x3xf32>
// CHECK-NEXT: %[[R2:.*]] = nn.silu %[[X2]] : tensor<2x3xf16>
// CHECK-NEXT: %[[R3:.*]] = nn.silu %[[X3]] : tensor<2x3xbf16>
// CHECK-NEXT: %[[R4:.*]] = nn.silu %[[X4]] : tensor<2x3xf8E4M3FN>
// CHECK-NEXT: %[[R5:.*]] = nn.silu %[[X5]] : tensor<2x3xf8E5M2>
// CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]] : tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>
func.func @silu_all_float_types(%x0: tensor<2x3xf64>, %x1: tensor<2x3xf32>, %x2: tensor<2x3xf16>, %x3: tensor<2x3xbf16>, %x4: tensor<2x3xf8E4M3FN>, %x5: tensor<2x3xf8E5M2>) -> (tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>) {
  %r0 = nn.silu %x0 : tensor<2x3xf64>
  %r1 = nn.silu %x1 : tensor<2x3xf32>
  %r2 = nn.silu %x2 : tensor<2x3xf16>
  %r3 = nn.silu %x3 : tensor<2x3xbf16>
  %r4 = nn.silu %x4 : tensor<2x3xf8E4M3FN>
  %r5 = nn.silu %x5 : tensor<2x3xf8E5M2>
  return %r0, %r1, %r2, %r3, %r4, %r5 : tensor<2x3xf64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2>
}

// CHECK-LABEL: func.func @unary_rank0_and_attr(
// CHECK-SAME: %[[X:.*]]: tensor<f32>) -> tensor<f32>
// CHECK-NEXT: %[[A:.*]] = nn.exp %[[X]] {tandem.note = "kept"} : tensor<f32>
// CHECK-NEXT: return %[[A]] : tensor<f32>
func.func @unary_rank0_and_attr(%x: tensor<f32>) -> tensor<f32> {
  %a = nn.exp %x {tandem.note = "kept"} : tensor<f32>
  return %a : tensor<f32>
}

// CHECK-LABEL: func.func @pow_all_float_types(
// CHECK-SAME: %[[X0:.*]]: tensor<5xf64>, %[[X1:.*]]: tensor<5xf32>, %[[X2:.*]]: tensor<5xf16>, %[[X3:.*]]: tensor<5xbf16>, %[[X4:.*]]: tensor<5xf8E4M3FN>, %[[X5:.*]]: tensor<5xf8E5M2>) -> (tensor<5xf64>, tensor<5xf32>, tensor<5xf16>, tensor<5xbf16>, tensor<5xf8E4M3FN>, tensor<5xf8E5M2>)
// CHECK-NEXT: %[[R0:.*]] = nn.pow %[[X0]], 3.000000e+00 : tensor<5xf64>
// CHECK-NEXT: %[[R1:.*]] = nn.pow %[[X1]], -5.000000e-01 : tensor<5xf32>
// CHECK-NEXT: %[[R2:.*]] = nn.pow %[[X2]], 2.000000e+00 : tensor<5xf16>
// CHECK-NEXT: %[[R3:.*]] = nn.pow %[[X3]], 1.000000e+00 : tensor<5xbf16>
// CHECK-NEXT: %[[R4:.*]] = nn.pow %[[X4]], 0.000000e+00 : tensor<5xf8E4M3FN>
// CHECK-NEXT: %[[R5:.*]] = nn.pow %[[X5]], 0.33333333333333331 : tensor<5xf8E5M2>
// CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]] : tensor<5xf64>, tensor<5xf32>, tensor<5xf16>, tensor<5xbf16>, tensor<5xf8E4M3FN>, tensor<5xf8E5M2>
func.func @pow_all_float_types(%x0: tensor<5xf64>, %x1: tensor<5xf32>, %x2: tensor<5xf16>, %x3: tensor<5xbf16>, %x4: tensor<5xf8E4M3FN>, %x5: tensor<5xf8E5M2>) -> (tensor<5xf64>, tensor<5xf32>, tensor<5xf16>, tensor<5xbf16>, tensor<5xf8E4M3FN>, tensor<5xf8E5M2>) {
  %r0 = nn.pow %x0, 3.000000e+00 : tensor<5xf64>
  %r1 = nn.pow %x1, -5.000000e-01 : tensor<5xf32>
  %r2 = nn.pow %x2, 2.000000e+00 : tensor<5xf16>
  %r3 = nn.pow %x3, 1.000000e+00 : tensor<5xbf16>
  %r4 = nn.pow %x4, 0.000000e+00 : tensor<5xf8E4M3FN>
  %r5 = nn.pow %x5, 0.33333333333333331 : tensor<5xf8E5M2>
  return %r0, %r1, %r2, %r3, %r4, %r5 : tensor<5xf64>, tensor<5xf32>, tensor<5xf16>, tensor<5xbf16>, tensor<5xf8E4M3FN>, tensor<5xf8E5M2>
}

// CHECK-LABEL: func.func @add_all_types(
// CHECK-SAME: %[[A0:.*]]: tensor<4xf64>, %[[B0:.*]]: tensor<4xf64>, %[[A1:.*]]: tensor<4xf32>, %[[B1:.*]]: tensor<4xf32>, %[[A2:.*]]: tensor<4xf16>, %[[B2:.*]]: tensor<4xf16>, %[[A3:.*]]: tensor<4xbf16>, %[[B3:.*]]: tensor<4xbf16>, %[[A4:.*]]: tensor<4xf8E4M3FN>, %[[B4:.*]]: tensor<4xf8E4M3FN>, %[[A5:.*]]: tensor<4xf8E5M2>, %[[B5:.*]]: tensor<4xf8E5M2>, %[[A6:.*]]: tensor<4xi32>, %[[B6:.*]]: tensor<4xi32>, %[[A7:.*]]: tensor<4xi64>, %[[B7:.*]]: tensor<4xi64>) -> (tensor<4xf64>, tensor<4xf32>, tensor<4xf16>, tensor<4xbf16>, tensor<4xf8E4M3FN>, tensor<4xf8E5M2>, tensor<4xi32>, tensor<4xi64>)
// CHECK-NEXT: %[[R0:.*]] = nn.add %[[A0]], %[[B0]] : tensor<4xf64>, tensor<4xf64> -> tensor<4xf64>
// CHECK-NEXT: %[[R1:.*]] = nn.add %[[A1]], %[[B1]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[R2:.*]] = nn.add %[[A2]], %[[B2]] : tensor<4xf16>, tensor<4xf16> -> tensor<4xf16>
// CHECK-NEXT: %[[R3:.*]] = nn.add %[[A3]], %[[B3]] : tensor<4xbf16>, tensor<4xbf16> -> tensor<4xbf16>
// CHECK-NEXT: %[[R4:.*]] = nn.add %[[A4]], %[[B4]] : tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN> -> tensor<4xf8E4M3FN>
// CHECK-NEXT: %[[R5:.*]] = nn.add %[[A5]], %[[B5]] : tensor<4xf8E5M2>, tensor<4xf8E5M2> -> tensor<4xf8E5M2>
// CHECK-NEXT: %[[R6:.*]] = nn.add %[[A6]], %[[B6]] : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
// CHECK-NEXT: %[[R7:.*]] = nn.add %[[A7]], %[[B7]] : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
// CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]], %[[R6]], %[[R7]] : tensor<4xf64>, tensor<4xf32>, tensor<4xf16>, tensor<4xbf16>, tensor<4xf8E4M3FN>, tensor<4xf8E5M2>, tensor<4xi32>, tensor<4xi64>
func.func @add_all_types(%a0: tensor<4xf64>, %b0: tensor<4xf64>, %a1: tensor<4xf32>, %b1: tensor<4xf32>, %a2: tensor<4xf16>, %b2: tensor<4xf16>, %a3: tensor<4xbf16>, %b3: tensor<4xbf16>, %a4: tensor<4xf8E4M3FN>, %b4: tensor<4xf8E4M3FN>, %a5: tensor<4xf8E5M2>, %b5: tensor<4xf8E5M2>, %a6: tensor<4xi32>, %b6: tensor<4xi32>, %a7: tensor<4xi64>, %b7: tensor<4xi64>) -> (tensor<4xf64>, tensor<4xf32>, tensor<4xf16>, tensor<4xbf16>, tensor<4xf8E4M3FN>, tensor<4xf8E5M2>, tensor<4xi32>, tensor<4xi64>) {
  %r0 = nn.add %a0, %b0 : tensor<4xf64>, tensor<4xf64> -> tensor<4xf64>
  %r1 = nn.add %a1, %b1 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %r2 = nn.add %a2, %b2 : tensor<4xf16>, tensor<4xf16> -> tensor<4xf16>
  %r3 = nn.add %a3, %b3 : tensor<4xbf16>, tensor<4xbf16> -> tensor<4xbf16>
  %r4 = nn.add %a4, %b4 : tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN> -> tensor<4xf8E4M3FN>
  %r5 = nn.add %a5, %b5 : tensor<4xf8E5M2>, tensor<4xf8E5M2> -> tensor<4xf8E5M2>
  %r6 = nn.add %a6, %b6 : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  %r7 = nn.add %a7, %b7 : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7 : tensor<4xf64>, tensor<4xf32>, tensor<4xf16>, tensor<4xbf16>, tensor<4xf8E4M3FN>, tensor<4xf8E5M2>, tensor<4xi32>, tensor<4xi64>
}

// CHECK-LABEL: func.func @sub_all_types(
// CHECK-SAME: %[[A0:.*]]: tensor<4xf64>, %[[B0:.*]]: tensor<4xf64>, %[[A1:.*]]: tensor<4xf32>, %[[B1:.*]]: tensor<4xf32>, %[[A2:.*]]: tensor<4xf16>, %[[B2:.*]]: tensor<4xf16>, %[[A3:.*]]: tensor<4xbf16>, %[[B3:.*]]: tensor<4xbf16>, %[[A4:.*]]: tensor<4xf8E4M3FN>, %[[B4:.*]]: tensor<4xf8E4M3FN>, %[[A5:.*]]: tensor<4xf8E5M2>, %[[B5:.*]]: tensor<4xf8E5M2>, %[[A6:.*]]: tensor<4xi32>, %[[B6:.*]]: tensor<4xi32>, %[[A7:.*]]: tensor<4xi64>, %[[B7:.*]]: tensor<4xi64>) -> (tensor<4xf64>, tensor<4xf32>, tensor<4xf16>, tensor<4xbf16>, tensor<4xf8E4M3FN>, tensor<4xf8E5M2>, tensor<4xi32>, tensor<4xi64>)
// CHECK-NEXT: %[[R0:.*]] = nn.sub %[[A0]], %[[B0]] : tensor<4xf64>, tensor<4xf64> -> tensor<4xf64>
// CHECK-NEXT: %[[R1:.*]] = nn.sub %[[A1]], %[[B1]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[R2:.*]] = nn.sub %[[A2]], %[[B2]] : tensor<4xf16>, tensor<4xf16> -> tensor<4xf16>
// CHECK-NEXT: %[[R3:.*]] = nn.sub %[[A3]], %[[B3]] : tensor<4xbf16>, tensor<4xbf16> -> tensor<4xbf16>
// CHECK-NEXT: %[[R4:.*]] = nn.sub %[[A4]], %[[B4]] : tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN> -> tensor<4xf8E4M3FN>
// CHECK-NEXT: %[[R5:.*]] = nn.sub %[[A5]], %[[B5]] : tensor<4xf8E5M2>, tensor<4xf8E5M2> -> tensor<4xf8E5M2>
// CHECK-NEXT: %[[R6:.*]] = nn.sub %[[A6]], %[[B6]] : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
// CHECK-NEXT: %[[R7:.*]] = nn.sub %[[A7]], %[[B7]] : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
// CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]], %[[R6]], %[[R7]] : tensor<4xf64>, tensor<4xf32>, tensor<4xf16>, tensor<4xbf16>, tensor<4xf8E4M3FN>, tensor<4xf8E5M2>, tensor<4xi32>, tensor<4xi64>
func.func @sub_all_types(%a0: tensor<4xf64>, %b0: tensor<4xf64>, %a1: tensor<4xf32>, %b1: tensor<4xf32>, %a2: tensor<4xf16>, %b2: tensor<4xf16>, %a3: tensor<4xbf16>, %b3: tensor<4xbf16>, %a4: tensor<4xf8E4M3FN>, %b4: tensor<4xf8E4M3FN>, %a5: tensor<4xf8E5M2>, %b5: tensor<4xf8E5M2>, %a6: tensor<4xi32>, %b6: tensor<4xi32>, %a7: tensor<4xi64>, %b7: tensor<4xi64>) -> (tensor<4xf64>, tensor<4xf32>, tensor<4xf16>, tensor<4xbf16>, tensor<4xf8E4M3FN>, tensor<4xf8E5M2>, tensor<4xi32>, tensor<4xi64>) {
  %r0 = nn.sub %a0, %b0 : tensor<4xf64>, tensor<4xf64> -> tensor<4xf64>
  %r1 = nn.sub %a1, %b1 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %r2 = nn.sub %a2, %b2 : tensor<4xf16>, tensor<4xf16> -> tensor<4xf16>
  %r3 = nn.sub %a3, %b3 : tensor<4xbf16>, tensor<4xbf16> -> tensor<4xbf16>
  %r4 = nn.sub %a4, %b4 : tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN> -> tensor<4xf8E4M3FN>
  %r5 = nn.sub %a5, %b5 : tensor<4xf8E5M2>, tensor<4xf8E5M2> -> tensor<4xf8E5M2>
  %r6 = nn.sub %a6, %b6 : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  %r7 = nn.sub %a7, %b7 : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7 : tensor<4xf64>, tensor<4xf32>, tensor<4xf16>, tensor<4xbf16>, tensor<4xf8E4M3FN>, tensor<4xf8E5M2>, tensor<4xi32>, tensor<4xi64>
}

// CHECK-LABEL: func.func @mul_all_types(
// CHECK-SAME: %[[A0:.*]]: tensor<4xf64>, %[[B0:.*]]: tensor<4xf64>, %[[A1:.*]]: tensor<4xf32>, %[[B1:.*]]: tensor<4xf32>, %[[A2:.*]]: tensor<4xf16>, %[[B2:.*]]: tensor<4xf16>, %[[A3:.*]]: tensor<4xbf16>, %[[B3:.*]]: tensor<4xbf16>, %[[A4:.*]]: tensor<4xf8E4M3FN>, %[[B4:.*]]: tensor<4xf8E4M3FN>, %[[A5:.*]]: tensor<4xf8E5M2>, %[[B5:.*]]: tensor<4xf8E5M2>, %[[A6:.*]]: tensor<4xi32>, %[[B6:.*]]: tensor<4xi32>, %[[A7:.*]]: tensor<4xi64>, %[[B7:.*]]: tensor<4xi64>) -> (tensor<4xf64>, tensor<4xf32>, tensor<4xf16>, tensor<4xbf16>, tensor<4xf8E4M3FN>, tensor<4xf8E5M2>, tensor<4xi32>, tensor<4xi64>)
// CHECK-NEXT: %[[R0:.*]] = nn.mul %[[A0]], %[[B0]] : tensor<4xf64>, tensor<4xf64> -> tensor<4xf64>
// CHECK-NEXT: %[[R1:.*]] = nn.mul %[[A1]], %[[B1]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[R2:.*]] = nn.mul %[[A2]], %[[B2]] : tensor<4xf16>, tensor<4xf16> -> tensor<4xf16>
// CHECK-NEXT: %[[R3:.*]] = nn.mul %[[A3]], %[[B3]] : tensor<4xbf16>, tensor<4xbf16> -> tensor<4xbf16>
// CHECK-NEXT: %[[R4:.*]] = nn.mul %[[A4]], %[[B4]] : tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN> -> tensor<4xf8E4M3FN>
// CHECK-NEXT: %[[R5:.*]] = nn.mul %[[A5]], %[[B5]] : tensor<4xf8E5M2>, tensor<4xf8E5M2> -> tensor<4xf8E5M2>
// CHECK-NEXT: %[[R6:.*]] = nn.mul %[[A6]], %[[B6]] : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
// CHECK-NEXT: %[[R7:.*]] = nn.mul %[[A7]], %[[B7]] : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
// CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]], %[[R6]], %[[R7]] : tensor<4xf64>, tensor<4xf32>, tensor<4xf16>, tensor<4xbf16>, tensor<4xf8E4M3FN>, tensor<4xf8E5M2>, tensor<4xi32>, tensor<4xi64>
func.func @mul_all_types(%a0: tensor<4xf64>, %b0: tensor<4xf64>, %a1: tensor<4xf32>, %b1: tensor<4xf32>, %a2: tensor<4xf16>, %b2: tensor<4xf16>, %a3: tensor<4xbf16>, %b3: tensor<4xbf16>, %a4: tensor<4xf8E4M3FN>, %b4: tensor<4xf8E4M3FN>, %a5: tensor<4xf8E5M2>, %b5: tensor<4xf8E5M2>, %a6: tensor<4xi32>, %b6: tensor<4xi32>, %a7: tensor<4xi64>, %b7: tensor<4xi64>) -> (tensor<4xf64>, tensor<4xf32>, tensor<4xf16>, tensor<4xbf16>, tensor<4xf8E4M3FN>, tensor<4xf8E5M2>, tensor<4xi32>, tensor<4xi64>) {
  %r0 = nn.mul %a0, %b0 : tensor<4xf64>, tensor<4xf64> -> tensor<4xf64>
  %r1 = nn.mul %a1, %b1 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %r2 = nn.mul %a2, %b2 : tensor<4xf16>, tensor<4xf16> -> tensor<4xf16>
  %r3 = nn.mul %a3, %b3 : tensor<4xbf16>, tensor<4xbf16> -> tensor<4xbf16>
  %r4 = nn.mul %a4, %b4 : tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN> -> tensor<4xf8E4M3FN>
  %r5 = nn.mul %a5, %b5 : tensor<4xf8E5M2>, tensor<4xf8E5M2> -> tensor<4xf8E5M2>
  %r6 = nn.mul %a6, %b6 : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  %r7 = nn.mul %a7, %b7 : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7 : tensor<4xf64>, tensor<4xf32>, tensor<4xf16>, tensor<4xbf16>, tensor<4xf8E4M3FN>, tensor<4xf8E5M2>, tensor<4xi32>, tensor<4xi64>
}

// CHECK-LABEL: func.func @div_all_types(
// CHECK-SAME: %[[A0:.*]]: tensor<4xf64>, %[[B0:.*]]: tensor<4xf64>, %[[A1:.*]]: tensor<4xf32>, %[[B1:.*]]: tensor<4xf32>, %[[A2:.*]]: tensor<4xf16>, %[[B2:.*]]: tensor<4xf16>, %[[A3:.*]]: tensor<4xbf16>, %[[B3:.*]]: tensor<4xbf16>, %[[A4:.*]]: tensor<4xf8E4M3FN>, %[[B4:.*]]: tensor<4xf8E4M3FN>, %[[A5:.*]]: tensor<4xf8E5M2>, %[[B5:.*]]: tensor<4xf8E5M2>, %[[A6:.*]]: tensor<4xi32>, %[[B6:.*]]: tensor<4xi32>, %[[A7:.*]]: tensor<4xi64>, %[[B7:.*]]: tensor<4xi64>) -> (tensor<4xf64>, tensor<4xf32>, tensor<4xf16>, tensor<4xbf16>, tensor<4xf8E4M3FN>, tensor<4xf8E5M2>, tensor<4xi32>, tensor<4xi64>)
// CHECK-NEXT: %[[R0:.*]] = nn.div %[[A0]], %[[B0]] : tensor<4xf64>, tensor<4xf64> -> tensor<4xf64>
// CHECK-NEXT: %[[R1:.*]] = nn.div %[[A1]], %[[B1]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[R2:.*]] = nn.div %[[A2]], %[[B2]] : tensor<4xf16>, tensor<4xf16> -> tensor<4xf16>
// CHECK-NEXT: %[[R3:.*]] = nn.div %[[A3]], %[[B3]] : tensor<4xbf16>, tensor<4xbf16> -> tensor<4xbf16>
// CHECK-NEXT: %[[R4:.*]] = nn.div %[[A4]], %[[B4]] : tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN> -> tensor<4xf8E4M3FN>
// CHECK-NEXT: %[[R5:.*]] = nn.div %[[A5]], %[[B5]] : tensor<4xf8E5M2>, tensor<4xf8E5M2> -> tensor<4xf8E5M2>
// CHECK-NEXT: %[[R6:.*]] = nn.div %[[A6]], %[[B6]] : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
// CHECK-NEXT: %[[R7:.*]] = nn.div %[[A7]], %[[B7]] : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
// CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]], %[[R6]], %[[R7]] : tensor<4xf64>, tensor<4xf32>, tensor<4xf16>, tensor<4xbf16>, tensor<4xf8E4M3FN>, tensor<4xf8E5M2>, tensor<4xi32>, tensor<4xi64>
func.func @div_all_types(%a0: tensor<4xf64>, %b0: tensor<4xf64>, %a1: tensor<4xf32>, %b1: tensor<4xf32>, %a2: tensor<4xf16>, %b2: tensor<4xf16>, %a3: tensor<4xbf16>, %b3: tensor<4xbf16>, %a4: tensor<4xf8E4M3FN>, %b4: tensor<4xf8E4M3FN>, %a5: tensor<4xf8E5M2>, %b5: tensor<4xf8E5M2>, %a6: tensor<4xi32>, %b6: tensor<4xi32>, %a7: tensor<4xi64>, %b7: tensor<4xi64>) -> (tensor<4xf64>, tensor<4xf32>, tensor<4xf16>, tensor<4xbf16>, tensor<4xf8E4M3FN>, tensor<4xf8E5M2>, tensor<4xi32>, tensor<4xi64>) {
  %r0 = nn.div %a0, %b0 : tensor<4xf64>, tensor<4xf64> -> tensor<4xf64>
  %r1 = nn.div %a1, %b1 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %r2 = nn.div %a2, %b2 : tensor<4xf16>, tensor<4xf16> -> tensor<4xf16>
  %r3 = nn.div %a3, %b3 : tensor<4xbf16>, tensor<4xbf16> -> tensor<4xbf16>
  %r4 = nn.div %a4, %b4 : tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN> -> tensor<4xf8E4M3FN>
  %r5 = nn.div %a5, %b5 : tensor<4xf8E5M2>, tensor<4xf8E5M2> -> tensor<4xf8E5M2>
  %r6 = nn.div %a6, %b6 : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  %r7 = nn.div %a7, %b7 : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7 : tensor<4xf64>, tensor<4xf32>, tensor<4xf16>, tensor<4xbf16>, tensor<4xf8E4M3FN>, tensor<4xf8E5M2>, tensor<4xi32>, tensor<4xi64>
}

// CHECK-LABEL: func.func @broadcasting(
// CHECK-SAME: %[[X:.*]]: tensor<8x16x32xf32>, %[[BIAS:.*]]: tensor<32xf32>, %[[COL:.*]]: tensor<8x1x32xf32>, %[[ROW:.*]]: tensor<16x1xf32>, %[[S:.*]]: tensor<f32>, %[[I:.*]]: tensor<3x1xi64>, %[[J:.*]]: tensor<1x5xi64>) -> (tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<3x5xi64>)
// CHECK-NEXT: %[[A:.*]] = nn.add %[[X]], %[[BIAS]] : tensor<8x16x32xf32>, tensor<32xf32> -> tensor<8x16x32xf32>
// CHECK-NEXT: %[[B:.*]] = nn.sub %[[COL]], %[[X]] : tensor<8x1x32xf32>, tensor<8x16x32xf32> -> tensor<8x16x32xf32>
// CHECK-NEXT: %[[C:.*]] = nn.mul %[[ROW]], %[[COL]] : tensor<16x1xf32>, tensor<8x1x32xf32> -> tensor<8x16x32xf32>
// CHECK-NEXT: %[[D:.*]] = nn.div %[[X]], %[[S]] : tensor<8x16x32xf32>, tensor<f32> -> tensor<8x16x32xf32>
// CHECK-NEXT: %[[E:.*]] = nn.mul %[[I]], %[[J]] : tensor<3x1xi64>, tensor<1x5xi64> -> tensor<3x5xi64>
// CHECK-NEXT: return %[[A]], %[[B]], %[[C]], %[[D]], %[[E]] : tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<3x5xi64>
func.func @broadcasting(%x: tensor<8x16x32xf32>, %bias: tensor<32xf32>, %col: tensor<8x1x32xf32>, %row: tensor<16x1xf32>, %s: tensor<f32>, %i: tensor<3x1xi64>, %j: tensor<1x5xi64>) -> (tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<3x5xi64>) {
  %a = nn.add %x, %bias : tensor<8x16x32xf32>, tensor<32xf32> -> tensor<8x16x32xf32>
  %b = nn.sub %col, %x : tensor<8x1x32xf32>, tensor<8x16x32xf32> -> tensor<8x16x32xf32>
  %c = nn.mul %row, %col : tensor<16x1xf32>, tensor<8x1x32xf32> -> tensor<8x16x32xf32>
  %d = nn.div %x, %s : tensor<8x16x32xf32>, tensor<f32> -> tensor<8x16x32xf32>
  %e = nn.mul %i, %j : tensor<3x1xi64>, tensor<1x5xi64> -> tensor<3x5xi64>
  return %a, %b, %c, %d, %e : tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<3x5xi64>
}

// CHECK-LABEL: func.func @binary_scalars(
// CHECK-SAME: %[[X:.*]]: tensor<f64>, %[[Y:.*]]: tensor<f64>) -> tensor<f64>
// CHECK-NEXT: %[[A:.*]] = nn.add %[[X]], %[[Y]] {tandem.note = "kept"} : tensor<f64>, tensor<f64> -> tensor<f64>
// CHECK-NEXT: return %[[A]] : tensor<f64>
func.func @binary_scalars(%x: tensor<f64>, %y: tensor<f64>) -> tensor<f64> {
  %a = nn.add %x, %y {tandem.note = "kept"} : tensor<f64>, tensor<f64> -> tensor<f64>
  return %a : tensor<f64>
}

// CHECK-LABEL: func.func @trigonometry(
// CHECK-SAME: %[[X:.*]]: tensor<3xf32>, %[[H:.*]]: tensor<2x2xbf16>
// CHECK-NEXT: %[[S:.*]] = nn.sin %[[X]] : tensor<3xf32>
// CHECK-NEXT: %[[C:.*]] = nn.cos %[[X]] : tensor<3xf32>
// CHECK-NEXT: %[[SH:.*]] = nn.sin %[[H]] : tensor<2x2xbf16>
// CHECK-NEXT: %[[CH:.*]] = nn.cos %[[H]] : tensor<2x2xbf16>
// CHECK-NEXT: return %[[S]], %[[C]], %[[SH]], %[[CH]]
func.func @trigonometry(%x: tensor<3xf32>, %h: tensor<2x2xbf16>) -> (tensor<3xf32>, tensor<3xf32>, tensor<2x2xbf16>, tensor<2x2xbf16>) {
  %s = nn.sin %x : tensor<3xf32>
  %c = nn.cos %x : tensor<3xf32>
  %sh = nn.sin %h : tensor<2x2xbf16>
  %ch = nn.cos %h : tensor<2x2xbf16>
  return %s, %c, %sh, %ch : tensor<3xf32>, tensor<3xf32>, tensor<2x2xbf16>, tensor<2x2xbf16>
}

// CHECK-LABEL: func.func @clamps(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32>, %[[LO:.*]]: tensor<f32>, %[[HI:.*]]: tensor<8xf32>, %[[I:.*]]: tensor<3xi64>
// CHECK-NEXT: %[[A:.*]] = nn.maximum %[[X]], %[[LO]] : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
// CHECK-NEXT: %[[B:.*]] = nn.minimum %[[A]], %[[HI]] : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT: %[[C:.*]] = nn.maximum %[[I]], %[[I]] : tensor<3xi64>, tensor<3xi64> -> tensor<3xi64>
// CHECK-NEXT: %[[D:.*]] = nn.minimum %[[I]], %[[C]] : tensor<3xi64>, tensor<3xi64> -> tensor<3xi64>
// CHECK-NEXT: return %[[B]], %[[D]]
func.func @clamps(%x: tensor<4x8xf32>, %lo: tensor<f32>, %hi: tensor<8xf32>, %i: tensor<3xi64>) -> (tensor<4x8xf32>, tensor<3xi64>) {
  %a = nn.maximum %x, %lo : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %b = nn.minimum %a, %hi : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %c = nn.maximum %i, %i : tensor<3xi64>, tensor<3xi64> -> tensor<3xi64>
  %d = nn.minimum %i, %c : tensor<3xi64>, tensor<3xi64> -> tensor<3xi64>
  return %b, %d : tensor<4x8xf32>, tensor<3xi64>
}

// nn.select: a broadcast mask, a rank-0 mask over a whole tensor, integer
// values.
// CHECK-LABEL: func.func @select(
// CHECK-SAME: %[[C:.*]]: tensor<3xf32>, %[[S:.*]]: tensor<f32>, %[[A:.*]]: tensor<2x3xbf16>, %[[B:.*]]: tensor<2x3xbf16>, %[[I:.*]]: tensor<4xi32>, %[[J:.*]]: tensor<4xi32>)
// CHECK-NEXT: %[[R0:.*]] = nn.select %[[C]], %[[A]], %[[B]] : tensor<3xf32>, tensor<2x3xbf16>
// CHECK-NEXT: %[[R1:.*]] = nn.select %[[S]], %[[I]], %[[J]] : tensor<f32>, tensor<4xi32>
// CHECK-NEXT: return %[[R0]], %[[R1]] : tensor<2x3xbf16>, tensor<4xi32>
func.func @select(%c: tensor<3xf32>, %s: tensor<f32>, %a: tensor<2x3xbf16>, %b: tensor<2x3xbf16>, %i: tensor<4xi32>, %j: tensor<4xi32>) -> (tensor<2x3xbf16>, tensor<4xi32>) {
  %r0 = nn.select %c, %a, %b : tensor<3xf32>, tensor<2x3xbf16>
  %r1 = nn.select %s, %i, %j : tensor<f32>, tensor<4xi32>
  return %r0, %r1 : tensor<2x3xbf16>, tensor<4xi32>
}
