// Two RMS-normalized layers and a classifier (norm-grad.test).
module {
  nn.parameter @fc.0.weight : tensor<32x64xf32> = uniform(-0.17677669529663687, 0.17677669529663687)
  nn.parameter @norm.0.weight : tensor<64xf32> = uniform(5.000000e-01, 1.500000e+00)
  nn.parameter @fc.1.weight : tensor<64x64xf32> = uniform(-1.250000e-01, 1.250000e-01)
  nn.parameter @norm.1.weight : tensor<64xf32> = uniform(5.000000e-01, 1.500000e+00)
  nn.parameter @head.weight : tensor<64x10xf32> = uniform(-1.250000e-01, 1.250000e-01)
  func.func @forward(%arg0: tensor<16x32xf32>, %arg1: tensor<16xi32>) -> tensor<f32> {
    %0 = nn.param @fc.0.weight : tensor<32x64xf32>
    %1 = nn.matmul %arg0, %0 : tensor<16x32xf32>, tensor<32x64xf32> -> tensor<16x64xf32>
    %2 = nn.param @norm.0.weight : tensor<64xf32>
    %3 = nn.rms_norm %1, %2 {epsilon = 1.0e-06 : f64} : tensor<16x64xf32>, tensor<64xf32>
    %4 = nn.gelu %3 : tensor<16x64xf32>
    %5 = nn.param @fc.1.weight : tensor<64x64xf32>
    %6 = nn.matmul %4, %5 : tensor<16x64xf32>, tensor<64x64xf32> -> tensor<16x64xf32>
    %7 = nn.param @norm.1.weight : tensor<64xf32>
    %8 = nn.rms_norm %6, %7 {epsilon = 1.0e-06 : f64} : tensor<16x64xf32>, tensor<64xf32>
    %9 = nn.param @head.weight : tensor<64x10xf32>
    %10 = nn.matmul %8, %9 : tensor<16x64xf32>, tensor<64x10xf32> -> tensor<16x10xf32>
    %11 = nn.cross_entropy %10, %arg1 : tensor<16x10xf32>, tensor<16xi32> -> tensor<f32>
    return %11 : tensor<f32>
  }
}
