// A malformed nn.loss_scale (written by hand or by a broken pass) is an error
// of nn-autodiff, which reads it for its seed, and of nn-optimizer.
//
// RUN: tandem-opt %s -split-input-file -verify-diagnostics --nn-autodiff

nn.parameter @w : tensor<4xf32> = zeros

// expected-error@+1 {{nn-autodiff: malformed 'nn.loss_scale' {scale = 0.000000e+00 : f64}: expected {scale = <positive f32-finite float>} or, for dynamic scaling, also factor = @<parameter>, good_steps = @<parameter>, growth_interval = <positive integer>}}
func.func @forward(%x: tensor<4xf32>) -> tensor<f32> attributes {nn.loss_scale = {scale = 0.0 : f64}} {
  %w = nn.param @w : tensor<4xf32>
  %m = nn.mul %x, %w : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %l = nn.reduce_sum %m [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

nn.parameter @w : tensor<4xf32> = zeros
nn.parameter @opt.loss_scale : tensor<f32> = ones

// expected-error@+1 {{nn-autodiff: malformed 'nn.loss_scale'}}
func.func @forward(%x: tensor<4xf32>) -> tensor<f32> attributes {nn.loss_scale = {scale = 8.0 : f64, factor = @opt.loss_scale}} {
  %w = nn.param @w : tensor<4xf32>
  %m = nn.mul %x, %w : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %l = nn.reduce_sum %m [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

nn.parameter @w : tensor<4xf32> = zeros

// expected-error@+1 {{nn-autodiff: 'nn.loss_scale' key 'factor' must name a rank-0 f32 nn.parameter, found @w}}
func.func @forward(%x: tensor<4xf32>) -> tensor<f32> attributes {nn.loss_scale = {scale = 8.0 : f64, factor = @w, good_steps = @w, growth_interval = 2 : i64}} {
  %w = nn.param @w : tensor<4xf32>
  %m = nn.mul %x, %w : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %l = nn.reduce_sum %m [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
