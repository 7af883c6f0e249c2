// The same model with wider embeddings with a 16-token vocabulary, for tandem-eval tests.
module {
  nn.parameter @wte : tensor<16x8xf32> = normal(0.5)
  func.func @forward(%tokens: tensor<2x4xi32>, %targets: tensor<2x4xi32>) -> tensor<f32> {
    %w = nn.param @wte : tensor<16x8xf32>
    %x = nn.embedding %w, %tokens : tensor<16x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
    %l = nn.matmul %x, %w {transpose_rhs} : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>
    %loss = nn.cross_entropy %l, %targets : tensor<2x4x16xf32>, tensor<2x4xi32> -> tensor<f32>
    return %loss : tensor<f32>
  }
  func.func @features(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<f32>) {
    %y = nn.tanh %x : tensor<2x3xf32>
    %s = nn.reduce_sum %y [0, 1] : tensor<2x3xf32> -> tensor<f32>
    return %y, %s : tensor<2x3xf32>, tensor<f32>
  }
}
