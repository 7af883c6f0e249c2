// A loss over a softmax along the first dimension: the cuda target lowers
// softmax along the last dimension only (driver.test).
module {
  nn.parameter @w : tensor<4x8xf32> = uniform(-1.0, 1.0)
  func.func @forward(%x: tensor<4x8xf32>) -> tensor<f32> {
    %w = nn.param @w : tensor<4x8xf32>
    %h = nn.mul %x, %w : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
    %s = nn.softmax %h {axis = 0 : i64} : tensor<4x8xf32>
    %l = nn.reduce_sum %s [0, 1] : tensor<4x8xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
