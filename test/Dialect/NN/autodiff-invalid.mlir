// RUN: tandem-opt %s --nn-autodiff --split-input-file -verify-diagnostics

// Every nn-autodiff diagnostic.

// expected-error@+1 {{nn-autodiff: no function @forward in the module (set it with function=<name>)}}
module {
  func.func @loss(%x: tensor<4xf32>) -> tensor<f32> {
    %l = nn.reduce_sum %x [0] : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

nn.parameter @w : tensor<4xf32> = zeros
// expected-error@+1 {{nn-autodiff: expected @forward to return exactly one rank-0 float tensor (the loss), found (tensor<4xf32>)}}
func.func @forward() -> tensor<4xf32> {
  %w = nn.param @w : tensor<4xf32>
  return %w : tensor<4xf32>
}

// -----

nn.parameter @w : tensor<4xf32> = zeros
// expected-error@+1 {{nn-autodiff: expected @forward to return exactly one rank-0 float tensor (the loss), found (tensor<f32>, tensor<f32>)}}
func.func @forward() -> (tensor<f32>, tensor<f32>) {
  %w = nn.param @w : tensor<4xf32>
  %l = nn.reduce_sum %w [0] : tensor<4xf32> -> tensor<f32>
  return %l, %l : tensor<f32>, tensor<f32>
}

// -----

// expected-error@+1 {{nn-autodiff: expected @forward to return exactly one rank-0 float tensor (the loss), found (tensor<i32>)}}
func.func @forward(%x: tensor<i32>) -> tensor<i32> {
  return %x : tensor<i32>
}

// -----

nn.parameter @w : tensor<4xf32> = zeros
func.func private @helper(tensor<4xf32>) -> tensor<4xf32>
func.func @forward() -> tensor<f32> {
  %w = nn.param @w : tensor<4xf32>
  // expected-error@+1 {{nn-autodiff: no gradient rule for 'func.call', which is on a differentiable path from a parameter to the loss}}
  %h = func.call @helper(%w) : (tensor<4xf32>) -> tensor<4xf32>
  %l = nn.reduce_sum %h [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

nn.parameter @w : tensor<2x5xf32> = zeros
func.func @forward(%t: tensor<2xi32>, %g: tensor<f32>) -> tensor<f32> {
  %w = nn.param @w : tensor<2x5xf32>
  // expected-error@+1 {{nn-autodiff: no gradient rule for 'nn.cross_entropy_grad'}}
  %d = nn.cross_entropy_grad %w, %t, %g : tensor<2x5xf32>, tensor<2xi32>, tensor<f32> -> tensor<2x5xf32>
  %l = nn.reduce_sum %d [0, 1] : tensor<2x5xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

nn.parameter @table : tensor<8x4xf32> = zeros
nn.parameter @w : tensor<3xf32> = zeros
func.func @forward() -> tensor<f32> {
  %table = nn.param @table : tensor<8x4xf32>
  %w = nn.param @w : tensor<3xf32>
  // expected-error@+1 {{nn-autodiff: non-differentiable use: a float value that depends on parameters is cast to 'tensor<3xi32>' on the way to the loss; the gradient through it is undefined}}
  %ids = nn.cast %w : tensor<3xf32> to tensor<3xi32>
  %x = nn.embedding %table, %ids : tensor<8x4xf32>, tensor<3xi32> -> tensor<3x4xf32>
  %l = nn.reduce_sum %x [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

nn.parameter @w : tensor<4xf32> = zeros
func.func @forward() -> tensor<f32> {
  %w = nn.param @w : tensor<4xf32>
  %l = nn.reduce_sum %w [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// expected-error@+1 {{nn-autodiff: the module already has a symbol @forward_grad; nn-autodiff would create it (remove it or differentiate another function)}}
func.func @forward_grad() {
  return
}

// -----

// expected-error@+1 {{nn-autodiff: @forward is a declaration; expected a body to differentiate}}
func.func private @forward() -> tensor<f32>
