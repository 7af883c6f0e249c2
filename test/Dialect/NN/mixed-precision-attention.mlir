// nn.attention under nn-mixed-precision: in the policy's low list by
// default (every lowering keeps its softmax in f32), so it takes the bf16
// pieces of a split as they are and gives a bf16 output, its log-sum-exp
// result staying f32 (the type nn.attention_grad reads); with
// f32-ops=nn.attention the pieces are cast up for it and its output cast
// down for the next matmul; the f32 policy changes nothing.
//
// RUN: tandem-opt %s --nn-mixed-precision | FileCheck %s --check-prefix=LOW
// RUN: tandem-opt %s --nn-mixed-precision="f32-ops=nn.attention" | FileCheck %s --check-prefix=F32LIST
// RUN: tandem-opt %s --nn-mixed-precision="policy=f32 low-precision-ops=nn.attention" | FileCheck %s --check-prefix=SAME

nn.parameter @w : tensor<8x24xf32> = normal(0.02)
nn.parameter @p : tensor<8x8xf32> = normal(0.02)

// F32LIST-LABEL: func.func @forward(
// F32LIST: %[[QKV:.*]] = nn.matmul {{.*}} -> tensor<2x4x24xbf16>
// F32LIST: nn.split %[[QKV]]
// F32LIST-COUNT-3: nn.cast {{.*}} : tensor<2x4x8xbf16> to tensor<2x4x8xf32>
// F32LIST-NEXT: %[[Y:.*]], %[[LSE:.*]] = nn.attention {{.*}} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>, tensor<2x2x4xf32>
// F32LIST: nn.cast %[[Y]] : tensor<2x4x8xf32> to tensor<2x4x8xbf16>

// LOW-LABEL: func.func @forward(
// LOW: %[[QKV:.*]] = nn.matmul {{.*}} -> tensor<2x4x24xbf16>
// LOW-NEXT: %[[Q:.*]]:3 = nn.split %[[QKV]] {{.*}} -> tensor<2x4x8xbf16>, tensor<2x4x8xbf16>, tensor<2x4x8xbf16>
// LOW-NEXT: %[[Y:.*]], %[[LSE:.*]] = nn.attention %[[Q]]#0, %[[Q]]#1, %[[Q]]#2 {causal, heads = 2 : i64} : tensor<2x4x8xbf16>, tensor<2x4x8xbf16>, tensor<2x4x8xbf16> -> tensor<2x4x8xbf16>, tensor<2x2x4xf32>
// LOW-NOT: nn.cast %[[Y]]
// LOW: nn.matmul %[[Y]], {{.*}} -> tensor<2x4x8xbf16>

// SAME-LABEL: func.func @forward(
// SAME-NOT: nn.cast
// SAME-NOT: bf16
func.func @forward(%x: tensor<2x4x8xf32>) -> tensor<f32> {
  %w = nn.param @w : tensor<8x24xf32>
  %p = nn.param @p : tensor<8x8xf32>
  %qkv = nn.matmul %x, %w : tensor<2x4x8xf32>, tensor<8x24xf32> -> tensor<2x4x24xf32>
  %q, %k, %v = nn.split %qkv {axis = 2 : i64, sizes = array<i64: 8, 8, 8>} : tensor<2x4x24xf32> -> tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
  %y, %lse = nn.attention %q, %k, %v {causal, heads = 2 : i64} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>, tensor<2x2x4xf32>
  %o = nn.matmul %y, %p : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
  %s = nn.reduce_sum %o [0, 1, 2] : tensor<2x4x8xf32> -> tensor<f32>
  %t = nn.reduce_sum %lse [0, 1, 2] : tensor<2x2x4xf32> -> tensor<f32>
  %l = nn.add %s, %t : tensor<f32>, tensor<f32> -> tensor<f32>
  return %l : tensor<f32>
}
