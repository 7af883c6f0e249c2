// Causal grouped-query attention with its log-sum-exp, and cross attention
// (more keys than queries) with its own.
func.func @forward(%q: tensor<2x6x16xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x8xf32>, %kx: tensor<2x9x16xf32>) -> (tensor<2x6x16xf32>, tensor<2x4x6xf32>, tensor<2x6x16xf32>, tensor<2x2x6xf32>) {
  %y, %lse = nn.attention %q, %k, %v {causal, heads = 4 : i64, kv_heads = 2 : i64} : tensor<2x6x16xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32> -> tensor<2x6x16xf32>, tensor<2x4x6xf32>
  %z, %lsez = nn.attention %q, %kx, %kx {heads = 2 : i64, scale = 0.5 : f64} : tensor<2x6x16xf32>, tensor<2x9x16xf32>, tensor<2x9x16xf32> -> tensor<2x6x16xf32>, tensor<2x2x6xf32>
  return %y, %lse, %z, %lsez : tensor<2x6x16xf32>, tensor<2x4x6xf32>, tensor<2x6x16xf32>, tensor<2x2x6xf32>
}
