// A parameter no machine can hold: refused when the model is read.
nn.parameter @w : tensor<99999999999x99999999999xf32> = zeros
func.func @forward(%x: tensor<4xf32>) -> tensor<f32> {
  %s = nn.reduce_sum %x [0] : tensor<4xf32> -> tensor<f32>
  return %s : tensor<f32>
}
