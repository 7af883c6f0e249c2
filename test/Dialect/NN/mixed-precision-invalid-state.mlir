// Dynamic loss scaling declares its state; a module that already has it is
// an error at the existing declaration.
//
// RUN: tandem-opt %s -verify-diagnostics --nn-mixed-precision="policy=fp16 loss-scale=dynamic"

nn.parameter @w : tensor<4xf32> = zeros
// expected-error@+1 {{nn-mixed-precision: the module already declares @opt.good_steps, which dynamic loss scaling declares}}
nn.parameter @opt.good_steps : tensor<f32> = zeros

func.func @forward(%x: tensor<4xf32>) -> tensor<f32> {
  %w = nn.param @w : tensor<4xf32>
  %m = nn.mul %x, %w : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %l = nn.reduce_sum %m [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
