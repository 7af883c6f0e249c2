module {
  func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = nn.gelu %x : tensor<4xf32
    return %0 : tensor<4xf32>
  }
}
