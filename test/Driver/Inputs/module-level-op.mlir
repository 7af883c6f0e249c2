// A stage marker written outside the function: refused at its line, never
// dropped silently (test/Driver/errors.test).
module {
  nn.parameter @w : tensor<4x4xf32> = normal(2.000000e-02)
  %c = nn.constant dense<1.000000e+00> : tensor<4x4xf32>
  %m = nn.stage_end %c : tensor<4x4xf32>
  func.func @forward(%x: tensor<2x4xf32>, %y: tensor<2xi32>) -> tensor<f32> {
    %w = nn.param @w : tensor<4x4xf32>
    %h = nn.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    %l = nn.cross_entropy %h, %y : tensor<2x4xf32>, tensor<2xi32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
