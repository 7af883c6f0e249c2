// tandemc: --stages 2 --microbatches 2 --schedule zb-h1 --recompute-splits 1
// A split the backward reads whole (q·k·v: recomputed from the stashed QKV) and one it reads in part (kept), around a stage boundary.
nn.parameter @w : tensor<8x24xf32> = normal(0.1)
nn.parameter @p : tensor<6x6xf32> = normal(0.1)
func.func @forward(%x: tensor<2x4x8xf32>, %u: tensor<2x6xf32>) -> tensor<f32> {
  %w = nn.param @w : tensor<8x24xf32>
  %qkv = nn.matmul %x, %w : tensor<2x4x8xf32>, tensor<8x24xf32> -> tensor<2x4x24xf32>
  %q, %k, %v = nn.split %qkv {axis = 2 : i64, sizes = array<i64: 8, 8, 8>} : tensor<2x4x24xf32> -> tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
  %qk = nn.mul %q, %k : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %y = nn.mul %qk, %v : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %yy = nn.mul %y, %y : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %l1 = nn.reduce_sum %yy [0, 1, 2] : tensor<2x4x8xf32> -> tensor<f32>
  %p = nn.param @p : tensor<6x6xf32>
  %uw = nn.matmul %u, %p : tensor<2x6xf32>, tensor<6x6xf32> -> tensor<2x6xf32>
  %a, %b = nn.split %uw {axis = 1 : i64, sizes = array<i64: 2, 4>} : tensor<2x6xf32> -> tensor<2x2xf32>, tensor<2x4xf32>
  %aa = nn.mul %a, %a : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  %l2 = nn.reduce_sum %aa [0, 1] : tensor<2x2xf32> -> tensor<f32>
  %l3 = nn.reduce_sum %b [0, 1] : tensor<2x4xf32> -> tensor<f32>
  %l12s = nn.stage_end %l1 : tensor<f32>
  %l12 = nn.add %l12s, %l2 : tensor<f32>, tensor<f32> -> tensor<f32>
  %l = nn.add %l12, %l3 : tensor<f32>, tensor<f32> -> tensor<f32>
  return %l : tensor<f32>
}
