// RUN: tandem-opt %s -split-input-file -verify-diagnostics --nn-optimizer

// Diagnostics of nn-optimizer about the module (option errors are in
// optimizer-invalid-options.mlir).

// expected-error@+1 {{nn-optimizer: no function @forward_grad (the gradient function, option 'function')}}
module {
  func.func @forward(%x: tensor<f32>) -> tensor<f32> {
    return %x : tensor<f32>
  }
}

// -----

nn.parameter @w : tensor<4xf32> = zeros
// expected-error@+1 {{nn-optimizer: function @forward_grad has no 'nn.gradients' attribute naming the parameter of each gradient result (run nn-autodiff first)}}
func.func @forward_grad(%x: tensor<f32>) -> (tensor<f32>, tensor<4xf32>) {
  %w = nn.param @w : tensor<4xf32>
  return %x, %w : tensor<f32>, tensor<4xf32>
}

// -----

nn.parameter @w : tensor<4xf32> = zeros
nn.parameter @b : tensor<4xf32> = zeros
// expected-error@+1 {{nn-optimizer: function @forward_grad returns 2 value(s) but 'nn.gradients' names 2 parameter(s); expected the loss followed by one gradient per parameter}}
func.func @forward_grad(%x: tensor<f32>) -> (tensor<f32>, tensor<4xf32>)
    attributes {nn.gradients = [@w, @b]} {
  %w = nn.param @w : tensor<4xf32>
  return %x, %w : tensor<f32>, tensor<4xf32>
}

// -----

nn.parameter @w : tensor<4xf32> = zeros
// expected-error@+1 {{nn-optimizer: 'nn.gradients' entry #0 names @v, which is not an nn.parameter}}
func.func @forward_grad(%x: tensor<f32>) -> (tensor<f32>, tensor<4xf32>)
    attributes {nn.gradients = [@v]} {
  %w = nn.param @w : tensor<4xf32>
  return %x, %w : tensor<f32>, tensor<4xf32>
}

// -----

nn.parameter @w : tensor<4xf32> = zeros
// expected-error@+1 {{nn-optimizer: 'nn.gradients' entry #0 must be a flat symbol reference, found "w"}}
func.func @forward_grad(%x: tensor<f32>) -> (tensor<f32>, tensor<4xf32>)
    attributes {nn.gradients = ["w"]} {
  %w = nn.param @w : tensor<4xf32>
  return %x, %w : tensor<f32>, tensor<4xf32>
}

// -----

nn.parameter @w : tensor<4xf32> = zeros
// expected-error@+1 {{nn-optimizer: result #1 of @forward_grad is the gradient of @w and must have its type 'tensor<4xf32>', found 'tensor<2x2xf32>'}}
func.func @forward_grad(%x: tensor<f32>, %g: tensor<2x2xf32>) -> (tensor<f32>, tensor<2x2xf32>)
    attributes {nn.gradients = [@w]} {
  return %x, %g : tensor<f32>, tensor<2x2xf32>
}

// -----

nn.parameter @w : tensor<4xf32> = zeros
// expected-error@+1 {{nn-optimizer: 'nn.gradients' names @w twice}}
func.func @forward_grad(%x: tensor<f32>, %g: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>, tensor<4xf32>)
    attributes {nn.gradients = [@w, @w]} {
  return %x, %g, %g : tensor<f32>, tensor<4xf32>, tensor<4xf32>
}

// -----

nn.parameter @w : tensor<4xf32> = zeros
nn.parameter @b : tensor<4xf32> = zeros
// expected-error@+1 {{nn-optimizer: 'nn.gradients' must list parameters in module declaration order (the canonical order), but @w follows @b}}
func.func @forward_grad(%x: tensor<f32>, %g: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>, tensor<4xf32>)
    attributes {nn.gradients = [@b, @w]} {
  return %x, %g, %g : tensor<f32>, tensor<4xf32>, tensor<4xf32>
}

// -----

nn.parameter @w : tensor<4xf32> = zeros
// expected-error@+1 {{nn-optimizer: result #0 of @forward_grad must be a rank-0 float loss, found 'tensor<4xf32>'}}
func.func @forward_grad(%g: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    attributes {nn.gradients = [@w]} {
  return %g, %g : tensor<4xf32>, tensor<4xf32>
}

// -----

nn.parameter @w : tensor<4xf32> = zeros
// expected-error@+1 {{nn-optimizer: gradient function @forward_grad must have a body of one block}}
func.func private @forward_grad(tensor<f32>) -> (tensor<f32>, tensor<4xf32>)
    attributes {nn.gradients = [@w]}

// -----

nn.parameter @w : tensor<4xf32> = zeros
func.func @forward_grad(%x: tensor<f32>, %g: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
    attributes {nn.gradients = [@w]} {
  return %x, %g : tensor<f32>, tensor<4xf32>
}
// expected-error@+1 {{nn-optimizer: the module already has a symbol @train_step (the training step to create, option 'result')}}
func.func @train_step() {
  return
}

// -----

nn.parameter @w : tensor<4xf32> = zeros
// expected-error@+1 {{nn-optimizer: the module already declares @opt.step; the prefix 'opt.' is reserved for optimizer state}}
nn.parameter @opt.step : tensor<f32> = zeros
func.func @forward_grad(%x: tensor<f32>, %g: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
    attributes {nn.gradients = [@w]} {
  return %x, %g : tensor<f32>, tensor<4xf32>
}

// -----

nn.parameter @w : tensor<4xf32> = zeros {frozen}
// expected-error@+1 {{nn-optimizer: 'nn.gradients' names @w, a frozen parameter (nothing trains it)}}
func.func @forward_grad(%x: tensor<f32>) -> (tensor<f32>, tensor<4xf32>) attributes {nn.gradients = [@w]} {
  %w = nn.param @w : tensor<4xf32>
  return %x, %w : tensor<f32>, tensor<4xf32>
}
