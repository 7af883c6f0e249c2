// Attention with one head of 512: the cuda target's attention kernels hold
// a head's row in registers, 256 elements at most (driver.test).
module {
  nn.parameter @w : tensor<512x512xf32> = uniform(-0.05, 0.05)
  func.func @forward(%x: tensor<1x4x512xf32>) -> tensor<f32> {
    %w = nn.param @w : tensor<512x512xf32>
    %h = nn.matmul %x, %w : tensor<1x4x512xf32>, tensor<512x512xf32> -> tensor<1x4x512xf32>
    %a = nn.attention %h, %h, %h {causal, heads = 1 : i64} : tensor<1x4x512xf32>, tensor<1x4x512xf32>, tensor<1x4x512xf32> -> tensor<1x4x512xf32>
    %l = nn.reduce_sum %a [0, 1, 2] : tensor<1x4x512xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
