module {
  nn.parameter @w : tensor<4xf32> = zeros
  func.func @forward() -> tensor<5xf32> {
    %0 = nn.param @w : tensor<5xf32>
    return %0 : tensor<5xf32>
  }
}
