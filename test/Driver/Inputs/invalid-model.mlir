// A model whose matmul operands disagree on the contracted dimension: the
// verifier rejects it while tandemc parses it.
module {
  nn.parameter @w : tensor<16x8xf32> = zeros
  func.func @forward(%x: tensor<4x32xf32>, %t: tensor<4xi32>) -> tensor<f32> {
    %w = nn.param @w : tensor<16x8xf32>
    %h = nn.matmul %x, %w : tensor<4x32xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
    %l = nn.cross_entropy %h, %t : tensor<4x8xf32>, tensor<4xi32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
