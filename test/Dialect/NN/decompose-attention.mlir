// RUN: tandem-opt %s --nn-decompose-attention --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @causal
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8xf32>, %[[K:.*]]: tensor<2x4x8xf32>, %[[V:.*]]: tensor<2x4x8xf32>)
// CHECK: %[[QR:.*]] = nn.reshape %[[Q]] : tensor<2x4x8xf32> to tensor<2x4x2x4xf32>
// CHECK: %[[QT:.*]] = nn.transpose %[[QR]], [0, 2, 1, 3] : tensor<2x4x2x4xf32> -> tensor<2x2x4x4xf32>
// CHECK: %[[KR:.*]] = nn.reshape %[[K]]
// CHECK: %[[KT:.*]] = nn.transpose %[[KR]], [0, 2, 1, 3]
// CHECK: %[[VR:.*]] = nn.reshape %[[V]]
// CHECK: %[[VT:.*]] = nn.transpose %[[VR]], [0, 2, 1, 3]
// CHECK: %[[S:.*]] = nn.matmul %[[QT]], %[[KT]] {transpose_rhs} : tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32> -> tensor<2x2x4x4xf32>
// CHECK: %[[SCALE:.*]] = nn.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[SS:.*]] = nn.mul %[[S]], %[[SCALE]]
// CHECK: %[[MASK:.*]] = nn.constant dense<{{\[}}[0.000000e+00, 0xFF800000, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0xFF800000], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<4x4xf32>
// CHECK: %[[M:.*]] = nn.add %[[SS]], %[[MASK]] : tensor<2x2x4x4xf32>, tensor<4x4xf32> -> tensor<2x2x4x4xf32>
// CHECK: %[[P:.*]] = nn.softmax %[[M]] {axis = 3 : i64}
// CHECK: %[[C:.*]] = nn.matmul %[[P]], %[[VT]] : tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32> -> tensor<2x2x4x4xf32>
// CHECK: %[[CT:.*]] = nn.transpose %[[C]], [0, 2, 1, 3]
// CHECK: %[[R:.*]] = nn.reshape %[[CT]] : tensor<2x4x2x4xf32> to tensor<2x4x8xf32>
// CHECK: return %[[R]]
// CHECK-NOT: nn.attention
func.func @causal(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %0 = nn.attention %q, %k, %v {causal, heads = 2 : i64} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

// A non-causal attention with an explicit scale and a key sequence longer
// than the query's: no mask, the given scale.
// CHECK-LABEL: func.func @cross
// CHECK: nn.matmul {{.*}} {transpose_rhs} : tensor<1x1x3x8xf32>, tensor<1x1x5x8xf32> -> tensor<1x1x3x5xf32>
// CHECK: nn.constant dense<2.500000e-01> : tensor<f32>
// CHECK-NOT: nn.add
// CHECK: nn.softmax
// CHECK: nn.reshape {{.*}} : tensor<1x3x1x8xf32> to tensor<1x3x8xf32>
func.func @cross(%q: tensor<1x3x8xf32>, %k: tensor<1x5x8xf32>, %v: tensor<1x5x8xf32>) -> tensor<1x3x8xf32> {
  %0 = nn.attention %q, %k, %v {heads = 1 : i64, scale = 0.25 : f64} : tensor<1x3x8xf32>, tensor<1x5x8xf32>, tensor<1x5x8xf32> -> tensor<1x3x8xf32>
  return %0 : tensor<1x3x8xf32>
}

// -----

// Narrow operands are widened to f32 once (self-attention reads one value
// three times) and only the output is rounded back: the scores, their mask
// (−∞, which f8E4M3FN could not hold) and the softmax are f32, and the cast
// to an 8-bit float saturates.
// CHECK-LABEL: func.func @no_inf
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x4xf8E4M3FN>)
// CHECK-NEXT: %[[W:.*]] = nn.cast %[[Q]] : tensor<1x2x4xf8E4M3FN> to tensor<1x2x4xf32>
// CHECK-NOT: nn.cast %[[Q]]
// CHECK: nn.matmul {{.*}} : tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32> -> tensor<1x1x2x2xf32>
// CHECK: nn.constant dense<{{\[}}[0.000000e+00, 0xFF800000], [0.000000e+00, 0.000000e+00]]> : tensor<2x2xf32>
// CHECK: nn.softmax {{.*}} : tensor<1x1x2x2xf32>
// CHECK: %[[Y:.*]] = nn.reshape {{.*}} : tensor<1x2x1x4xf32> to tensor<1x2x4xf32>
// CHECK-NEXT: %[[N:.*]] = nn.cast %[[Y]] {saturate = true} : tensor<1x2x4xf32> to tensor<1x2x4xf8E4M3FN>
// CHECK-NEXT: return %[[N]]
func.func @no_inf(%q: tensor<1x2x4xf8E4M3FN>) -> tensor<1x2x4xf8E4M3FN> {
  %0 = nn.attention %q, %q, %q {causal, heads = 1 : i64} : tensor<1x2x4xf8E4M3FN>, tensor<1x2x4xf8E4M3FN>, tensor<1x2x4xf8E4M3FN> -> tensor<1x2x4xf8E4M3FN>
  return %0 : tensor<1x2x4xf8E4M3FN>
}

// -----

// Grouped-query attention (4 query heads, 2 key and value heads of 2): each
// key and value head is broadcast over its group of 2 query heads before
// the heads split, so query heads 0 and 1 read key head 0.
// CHECK-LABEL: func.func @grouped
// CHECK-SAME: (%[[Q:.*]]: tensor<1x3x8xf32>, %[[K:.*]]: tensor<1x3x4xf32>, %[[V:.*]]: tensor<1x3x4xf32>)
// CHECK: %[[KG:.*]] = nn.reshape %[[K]] : tensor<1x3x4xf32> to tensor<1x3x2x1x2xf32>
// CHECK: %[[KB:.*]] = nn.broadcast_to %[[KG]] : tensor<1x3x2x1x2xf32> to tensor<1x3x2x2x2xf32>
// CHECK: %[[KF:.*]] = nn.reshape %[[KB]] : tensor<1x3x2x2x2xf32> to tensor<1x3x8xf32>
// CHECK: nn.reshape %[[KF]] : tensor<1x3x8xf32> to tensor<1x3x4x2xf32>
// CHECK: nn.reshape %[[V]] : tensor<1x3x4xf32> to tensor<1x3x2x1x2xf32>
// CHECK: nn.broadcast_to
// CHECK: nn.matmul {{.*}} {transpose_rhs} : tensor<1x4x3x2xf32>, tensor<1x4x3x2xf32> -> tensor<1x4x3x3xf32>
// CHECK: nn.reshape {{.*}} : tensor<1x3x4x2xf32> to tensor<1x3x8xf32>
// CHECK-NOT: nn.attention
func.func @grouped(%q: tensor<1x3x8xf32>, %k: tensor<1x3x4xf32>, %v: tensor<1x3x4xf32>) -> tensor<1x3x8xf32> {
  %0 = nn.attention %q, %k, %v {causal, heads = 4 : i64, kv_heads = 2 : i64} : tensor<1x3x8xf32>, tensor<1x3x4xf32>, tensor<1x3x4xf32> -> tensor<1x3x8xf32>
  return %0 : tensor<1x3x8xf32>
}

// -----

// A log-sum-exp result: each row's max + log Σ exp(score − max) over the
// masked f32 scores (the hidden scores are −∞ and add 0); the bf16 output
// is the f32 one rounded once.
// CHECK-LABEL: func.func @lse
// CHECK: %[[S:.*]] = nn.mul %{{.*}}, %{{.*}} : tensor<1x2x3x3xf32>, tensor<f32>
// CHECK: %[[M:.*]] = nn.add %[[S]], %{{.*}} : tensor<1x2x3x3xf32>, tensor<3x3xf32>
// CHECK: nn.softmax %[[M]] {axis = 3 : i64}
// CHECK: %[[Y:.*]] = nn.reshape %{{.*}} : tensor<1x3x2x4xf32> to tensor<1x3x8xf32>
// CHECK-NEXT: %[[R:.*]] = nn.cast %[[Y]] : tensor<1x3x8xf32> to tensor<1x3x8xbf16>
// CHECK-NEXT: %[[MAX:.*]] = nn.reduce_max %[[M]] [3] keepdims : tensor<1x2x3x3xf32> -> tensor<1x2x3x1xf32>
// CHECK: %[[D:.*]] = nn.sub %[[M]], %[[MAX]]
// CHECK: %[[E:.*]] = nn.exp %[[D]]
// CHECK: %[[SUM:.*]] = nn.reduce_sum %[[E]] [3] : tensor<1x2x3x3xf32> -> tensor<1x2x3xf32>
// CHECK: %[[MR:.*]] = nn.reshape %[[MAX]] : tensor<1x2x3x1xf32> to tensor<1x2x3xf32>
// CHECK: %[[LOG:.*]] = nn.log %[[SUM]]
// CHECK: %[[LSE:.*]] = nn.add %[[MR]], %[[LOG]]
// CHECK: return %[[R]], %[[LSE]]
func.func @lse(%q: tensor<1x3x8xbf16>) -> (tensor<1x3x8xbf16>, tensor<1x2x3xf32>) {
  %y, %lse = nn.attention %q, %q, %q {causal, heads = 2 : i64} : tensor<1x3x8xbf16>, tensor<1x3x8xbf16>, tensor<1x3x8xbf16> -> tensor<1x3x8xbf16>, tensor<1x2x3xf32>
  return %y, %lse : tensor<1x3x8xbf16>, tensor<1x2x3xf32>
}
