// RUN: tandem-opt %s | tandem-opt | FileCheck %s
// RUN: tandem-opt %s --mlir-print-op-generic | tandem-opt | FileCheck %s
// Reductions: reduce_sum, reduce_mean and reduce_max over one, several, all
// and no axes, with and without keepdims, over every float element type.

// CHECK-LABEL: func.func @reduce_sum(
// CHECK-SAME: %[[X0:.*]]: tensor<2x3x4xf64>, %[[X1:.*]]: tensor<2x3x4xf32>, %[[X2:.*]]: tensor<2x3x4xf16>, %[[X3:.*]]: tensor<2x3x4xbf16>, %[[X4:.*]]: tensor<2x3x4xf8E4M3FN>, %[[X5:.*]]: tensor<2x3x4xf8E5M2>) -> (tensor<2x1x4xf32>, tensor<2x4xf32>, tensor<1x3x1xf32>, tensor<3xf32>, tensor<f32>, tensor<1x1x1xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x4xf64>, tensor<3xf16>, tensor<bf16>, tensor<1x1x1xf8E4M3FN>, tensor<2x3x4xf8E5M2>)
// CHECK-NEXT: %[[R0:.*]] = nn.reduce_sum %[[X1]] [1] keepdims : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
// CHECK-NEXT: %[[R1:.*]] = nn.reduce_sum %[[X1]] [1] : tensor<2x3x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT: %[[R2:.*]] = nn.reduce_sum %[[X1]] [0, 2] keepdims : tensor<2x3x4xf32> -> tensor<1x3x1xf32>
// CHECK-NEXT: %[[R3:.*]] = nn.reduce_sum %[[X1]] [0, 2] : tensor<2x3x4xf32> -> tensor<3xf32>
// CHECK-NEXT: %[[R4:.*]] = nn.reduce_sum %[[X1]] [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
// CHECK-NEXT: %[[R5:.*]] = nn.reduce_sum %[[X1]] [0, 1, 2] keepdims : tensor<2x3x4xf32> -> tensor<1x1x1xf32>
// CHECK-NEXT: %[[R6:.*]] = nn.reduce_sum %[[X1]] [] : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT: %[[R7:.*]] = nn.reduce_sum %[[X1]] [] keepdims : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT: %[[R8:.*]] = nn.reduce_sum %[[X0]] [1] : tensor<2x3x4xf64> -> tensor<2x4xf64>
// CHECK-NEXT: %[[R9:.*]] = nn.reduce_sum %[[X2]] [0, 2] : tensor<2x3x4xf16> -> tensor<3xf16>
// CHECK-NEXT: %[[R10:.*]] = nn.reduce_sum %[[X3]] [0, 1, 2] : tensor<2x3x4xbf16> -> tensor<bf16>
// CHECK-NEXT: %[[R11:.*]] = nn.reduce_sum %[[X4]] [0, 1, 2] keepdims : tensor<2x3x4xf8E4M3FN> -> tensor<1x1x1xf8E4M3FN>
// CHECK-NEXT: %[[R12:.*]] = nn.reduce_sum %[[X5]] [] : tensor<2x3x4xf8E5M2> -> tensor<2x3x4xf8E5M2>
// CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]], %[[R6]], %[[R7]], %[[R8]], %[[R9]], %[[R10]], %[[R11]], %[[R12]] : tensor<2x1x4xf32>, tensor<2x4xf32>, tensor<1x3x1xf32>, tensor<3xf32>, tensor<f32>, tensor<1x1x1xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x4xf64>, tensor<3xf16>, tensor<bf16>, tensor<1x1x1xf8E4M3FN>, tensor<2x3x4xf8E5M2>
func.func @reduce_sum(%x0: tensor<2x3x4xf64>, %x1: tensor<2x3x4xf32>, %x2: tensor<2x3x4xf16>, %x3: tensor<2x3x4xbf16>, %x4: tensor<2x3x4xf8E4M3FN>, %x5: tensor<2x3x4xf8E5M2>) -> (tensor<2x1x4xf32>, tensor<2x4xf32>, tensor<1x3x1xf32>, tensor<3xf32>, tensor<f32>, tensor<1x1x1xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x4xf64>, tensor<3xf16>, tensor<bf16>, tensor<1x1x1xf8E4M3FN>, tensor<2x3x4xf8E5M2>) {
  %r0 = nn.reduce_sum %x1 [1] keepdims : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  %r1 = nn.reduce_sum %x1 [1] : tensor<2x3x4xf32> -> tensor<2x4xf32>
  %r2 = nn.reduce_sum %x1 [0, 2] keepdims : tensor<2x3x4xf32> -> tensor<1x3x1xf32>
  %r3 = nn.reduce_sum %x1 [0, 2] : tensor<2x3x4xf32> -> tensor<3xf32>
  %r4 = nn.reduce_sum %x1 [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
  %r5 = nn.reduce_sum %x1 [0, 1, 2] keepdims : tensor<2x3x4xf32> -> tensor<1x1x1xf32>
  %r6 = nn.reduce_sum %x1 [] : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %r7 = nn.reduce_sum %x1 [] keepdims : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %r8 = nn.reduce_sum %x0 [1] : tensor<2x3x4xf64> -> tensor<2x4xf64>
  %r9 = nn.reduce_sum %x2 [0, 2] : tensor<2x3x4xf16> -> tensor<3xf16>
  %r10 = nn.reduce_sum %x3 [0, 1, 2] : tensor<2x3x4xbf16> -> tensor<bf16>
  %r11 = nn.reduce_sum %x4 [0, 1, 2] keepdims : tensor<2x3x4xf8E4M3FN> -> tensor<1x1x1xf8E4M3FN>
  %r12 = nn.reduce_sum %x5 [] : tensor<2x3x4xf8E5M2> -> tensor<2x3x4xf8E5M2>
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9, %r10, %r11, %r12 : tensor<2x1x4xf32>, tensor<2x4xf32>, tensor<1x3x1xf32>, tensor<3xf32>, tensor<f32>, tensor<1x1x1xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x4xf64>, tensor<3xf16>, tensor<bf16>, tensor<1x1x1xf8E4M3FN>, tensor<2x3x4xf8E5M2>
}

// CHECK-LABEL: func.func @reduce_mean(
// CHECK-SAME: %[[X0:.*]]: tensor<2x3x4xf64>, %[[X1:.*]]: tensor<2x3x4xf32>, %[[X2:.*]]: tensor<2x3x4xf16>, %[[X3:.*]]: tensor<2x3x4xbf16>, %[[X4:.*]]: tensor<2x3x4xf8E4M3FN>, %[[X5:.*]]: tensor<2x3x4xf8E5M2>) -> (tensor<2x1x4xf32>, tensor<2x4xf32>, tensor<1x3x1xf32>, tensor<3xf32>, tensor<f32>, tensor<1x1x1xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x4xf64>, tensor<3xf16>, tensor<bf16>, tensor<1x1x1xf8E4M3FN>, tensor<2x3x4xf8E5M2>)
// CHECK-NEXT: %[[R0:.*]] = nn.reduce_mean %[[X1]] [1] keepdims : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
// CHECK-NEXT: %[[R1:.*]] = nn.reduce_mean %[[X1]] [1] : tensor<2x3x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT: %[[R2:.*]] = nn.reduce_mean %[[X1]] [0, 2] keepdims : tensor<2x3x4xf32> -> tensor<1x3x1xf32>
// CHECK-NEXT: %[[R3:.*]] = nn.reduce_mean %[[X1]] [0, 2] : tensor<2x3x4xf32> -> tensor<3xf32>
// CHECK-NEXT: %[[R4:.*]] = nn.reduce_mean %[[X1]] [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
// CHECK-NEXT: %[[R5:.*]] = nn.reduce_mean %[[X1]] [0, 1, 2] keepdims : tensor<2x3x4xf32> -> tensor<1x1x1xf32>
// CHECK-NEXT: %[[R6:.*]] = nn.reduce_mean %[[X1]] [] : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT: %[[R7:.*]] = nn.reduce_mean %[[X1]] [] keepdims : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT: %[[R8:.*]] = nn.reduce_mean %[[X0]] [1] : tensor<2x3x4xf64> -> tensor<2x4xf64>
// CHECK-NEXT: %[[R9:.*]] = nn.reduce_mean %[[X2]] [0, 2] : tensor<2x3x4xf16> -> tensor<3xf16>
// CHECK-NEXT: %[[R10:.*]] = nn.reduce_mean %[[X3]] [0, 1, 2] : tensor<2x3x4xbf16> -> tensor<bf16>
// CHECK-NEXT: %[[R11:.*]] = nn.reduce_mean %[[X4]] [0, 1, 2] keepdims : tensor<2x3x4xf8E4M3FN> -> tensor<1x1x1xf8E4M3FN>
// CHECK-NEXT: %[[R12:.*]] = nn.reduce_mean %[[X5]] [] : tensor<2x3x4xf8E5M2> -> tensor<2x3x4xf8E5M2>
// CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]], %[[R6]], %[[R7]], %[[R8]], %[[R9]], %[[R10]], %[[R11]], %[[R12]] : tensor<2x1x4xf32>, tensor<2x4xf32>, tensor<1x3x1xf32>, tensor<3xf32>, tensor<f32>, tensor<1x1x1xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x4xf64>, tensor<3xf16>, tensor<bf16>, tensor<1x1x1xf8E4M3FN>, tensor<2x3x4xf8E5M2>
func.func @reduce_mean(%x0: tensor<2x3x4xf64>, %x1: tensor<2x3x4xf32>, %x2: tensor<2x3x4xf16>, %x3: tensor<2x3x4xbf16>, %x4: tensor<2x3x4xf8E4M3FN>, %x5: tensor<2x3x4xf8E5M2>) -> (tensor<2x1x4xf32>, tensor<2x4xf32>, tensor<1x3x1xf32>, tensor<3xf32>, tensor<f32>, tensor<1x1x1xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x4xf64>, tensor<3xf16>, tensor<bf16>, tensor<1x1x1xf8E4M3FN>, tensor<2x3x4xf8E5M2>) {
  %r0 = nn.reduce_mean %x1 [1] keepdims : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  %r1 = nn.reduce_mean %x1 [1] : tensor<2x3x4xf32> -> tensor<2x4xf32>
  %r2 = nn.reduce_mean %x1 [0, 2] keepdims : tensor<2x3x4xf32> -> tensor<1x3x1xf32>
  %r3 = nn.reduce_mean %x1 [0, 2] : tensor<2x3x4xf32> -> tensor<3xf32>
  %r4 = nn.reduce_mean %x1 [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
  %r5 = nn.reduce_mean %x1 [0, 1, 2] keepdims : tensor<2x3x4xf32> -> tensor<1x1x1xf32>
  %r6 = nn.reduce_mean %x1 [] : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %r7 = nn.reduce_mean %x1 [] keepdims : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %r8 = nn.reduce_mean %x0 [1] : tensor<2x3x4xf64> -> tensor<2x4xf64>
  %r9 = nn.reduce_mean %x2 [0, 2] : tensor<2x3x4xf16> -> tensor<3xf16>
  %r10 = nn.reduce_mean %x3 [0, 1, 2] : tensor<2x3x4xbf16> -> tensor<bf16>
  %r11 = nn.reduce_mean %x4 [0, 1, 2] keepdims : tensor<2x3x4xf8E4M3FN> -> tensor<1x1x1xf8E4M3FN>
  %r12 = nn.reduce_mean %x5 [] : tensor<2x3x4xf8E5M2> -> tensor<2x3x4xf8E5M2>
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9, %r10, %r11, %r12 : tensor<2x1x4xf32>, tensor<2x4xf32>, tensor<1x3x1xf32>, tensor<3xf32>, tensor<f32>, tensor<1x1x1xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x4xf64>, tensor<3xf16>, tensor<bf16>, tensor<1x1x1xf8E4M3FN>, tensor<2x3x4xf8E5M2>
}

// CHECK-LABEL: func.func @reduce_max(
// CHECK-SAME: %[[X0:.*]]: tensor<2x3x4xf64>, %[[X1:.*]]: tensor<2x3x4xf32>, %[[X2:.*]]: tensor<2x3x4xf16>, %[[X3:.*]]: tensor<2x3x4xbf16>, %[[X4:.*]]: tensor<2x3x4xf8E4M3FN>, %[[X5:.*]]: tensor<2x3x4xf8E5M2>) -> (tensor<2x1x4xf32>, tensor<2x4xf32>, tensor<1x3x1xf32>, tensor<3xf32>, tensor<f32>, tensor<1x1x1xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x4xf64>, tensor<3xf16>, tensor<bf16>, tensor<1x1x1xf8E4M3FN>, tensor<2x3x4xf8E5M2>)
// CHECK-NEXT: %[[R0:.*]] = nn.reduce_max %[[X1]] [1] keepdims : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
// CHECK-NEXT: %[[R1:.*]] = nn.reduce_max %[[X1]] [1] : tensor<2x3x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT: %[[R2:.*]] = nn.reduce_max %[[X1]] [0, 2] keepdims : tensor<2x3x4xf32> -> tensor<1x3x1xf32>
// CHECK-NEXT: %[[R3:.*]] = nn.reduce_max %[[X1]] [0, 2] : tensor<2x3x4xf32> -> tensor<3xf32>
// CHECK-NEXT: %[[R4:.*]] = nn.reduce_max %[[X1]] [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
// CHECK-NEXT: %[[R5:.*]] = nn.reduce_max %[[X1]] [0, 1, 2] keepdims : tensor<2x3x4xf32> -> tensor<1x1x1xf32>
// CHECK-NEXT: %[[R6:.*]] = nn.reduce_max %[[X1]] [] : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT: %[[R7:.*]] = nn.reduce_max %[[X1]] [] keepdims : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT: %[[R8:.*]] = nn.reduce_max %[[X0]] [1] : tensor<2x3x4xf64> -> tensor<2x4xf64>
// CHECK-NEXT: %[[R9:.*]] = nn.reduce_max %[[X2]] [0, 2] : tensor<2x3x4xf16> -> tensor<3xf16>
// CHECK-NEXT: %[[R10:.*]] = nn.reduce_max %[[X3]] [0, 1, 2] : tensor<2x3x4xbf16> -> tensor<bf16>
// CHECK-NEXT: %[[R11:.*]] = nn.reduce_max %[[X4]] [0, 1, 2] keepdims : tensor<2x3x4xf8E4M3FN> -> tensor<1x1x1xf8E4M3FN>
// CHECK-NEXT: %[[R12:.*]] = nn.reduce_max %[[X5]] [] : tensor<2x3x4xf8E5M2> -> tensor<2x3x4xf8E5M2>
// CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]], %[[R6]], %[[R7]], %[[R8]], %[[R9]], %[[R10]], %[[R11]], %[[R12]] : tensor<2x1x4xf32>, tensor<2x4xf32>, tensor<1x3x1xf32>, tensor<3xf32>, tensor<f32>, tensor<1x1x1xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x4xf64>, tensor<3xf16>, tensor<bf16>, tensor<1x1x1xf8E4M3FN>, tensor<2x3x4xf8E5M2>
func.func @reduce_max(%x0: tensor<2x3x4xf64>, %x1: tensor<2x3x4xf32>, %x2: tensor<2x3x4xf16>, %x3: tensor<2x3x4xbf16>, %x4: tensor<2x3x4xf8E4M3FN>, %x5: tensor<2x3x4xf8E5M2>) -> (tensor<2x1x4xf32>, tensor<2x4xf32>, tensor<1x3x1xf32>, tensor<3xf32>, tensor<f32>, tensor<1x1x1xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x4xf64>, tensor<3xf16>, tensor<bf16>, tensor<1x1x1xf8E4M3FN>, tensor<2x3x4xf8E5M2>) {
  %r0 = nn.reduce_max %x1 [1] keepdims : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  %r1 = nn.reduce_max %x1 [1] : tensor<2x3x4xf32> -> tensor<2x4xf32>
  %r2 = nn.reduce_max %x1 [0, 2] keepdims : tensor<2x3x4xf32> -> tensor<1x3x1xf32>
  %r3 = nn.reduce_max %x1 [0, 2] : tensor<2x3x4xf32> -> tensor<3xf32>
  %r4 = nn.reduce_max %x1 [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
  %r5 = nn.reduce_max %x1 [0, 1, 2] keepdims : tensor<2x3x4xf32> -> tensor<1x1x1xf32>
  %r6 = nn.reduce_max %x1 [] : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %r7 = nn.reduce_max %x1 [] keepdims : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %r8 = nn.reduce_max %x0 [1] : tensor<2x3x4xf64> -> tensor<2x4xf64>
  %r9 = nn.reduce_max %x2 [0, 2] : tensor<2x3x4xf16> -> tensor<3xf16>
  %r10 = nn.reduce_max %x3 [0, 1, 2] : tensor<2x3x4xbf16> -> tensor<bf16>
  %r11 = nn.reduce_max %x4 [0, 1, 2] keepdims : tensor<2x3x4xf8E4M3FN> -> tensor<1x1x1xf8E4M3FN>
  %r12 = nn.reduce_max %x5 [] : tensor<2x3x4xf8E5M2> -> tensor<2x3x4xf8E5M2>
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9, %r10, %r11, %r12 : tensor<2x1x4xf32>, tensor<2x4xf32>, tensor<1x3x1xf32>, tensor<3xf32>, tensor<f32>, tensor<1x1x1xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x4xf64>, tensor<3xf16>, tensor<bf16>, tensor<1x1x1xf8E4M3FN>, tensor<2x3x4xf8E5M2>
}

// CHECK-LABEL: func.func @reduce_attr_and_rank0(
// CHECK-SAME: %[[X:.*]]: tensor<f32>, %[[Y:.*]]: tensor<5xf32>) -> (tensor<f32>, tensor<1xf32>)
// CHECK-NEXT: %[[A:.*]] = nn.reduce_sum %[[X]] [] {tandem.note = "kept"} : tensor<f32> -> tensor<f32>
// CHECK-NEXT: %[[B:.*]] = nn.reduce_max %[[Y]] [0] keepdims {tandem.note = "kept"} : tensor<5xf32> -> tensor<1xf32>
// CHECK-NEXT: return %[[A]], %[[B]] : tensor<f32>, tensor<1xf32>
func.func @reduce_attr_and_rank0(%x: tensor<f32>, %y: tensor<5xf32>) -> (tensor<f32>, tensor<1xf32>) {
  %a = nn.reduce_sum %x [] {tandem.note = "kept"} : tensor<f32> -> tensor<f32>
  %b = nn.reduce_max %y [0] keepdims {tandem.note = "kept"} : tensor<5xf32> -> tensor<1xf32>
  return %a, %b : tensor<f32>, tensor<1xf32>
}
