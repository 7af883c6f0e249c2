// RUN: tandem-opt %s -split-input-file -verify-diagnostics
// nn.recompute (mpmd-remat's annotated policy) is a unit attribute on an nn
// op that computes.

func.func @not_unit(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'nn.tanh' op expects 'nn.recompute' to be a unit attribute, found true}}
  %y = nn.tanh %x {nn.recompute = true} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

nn.parameter @w : tensor<4xf32> = zeros
func.func @param() -> tensor<4xf32> {
  // expected-error@+1 {{'nn.param' op cannot be marked 'nn.recompute': only nn ops that compute have results to recompute}}
  %w = nn.param @w {nn.recompute} : tensor<4xf32>
  return %w : tensor<4xf32>
}

// -----

func.func @constant() -> tensor<2xf32> {
  // expected-error@+1 {{'nn.constant' op cannot be marked 'nn.recompute': only nn ops that compute have results to recompute}}
  %c = nn.constant dense<1.0> : tensor<2xf32> {nn.recompute}
  return %c : tensor<2xf32>
}

// -----

// expected-error@+1 {{'func.func' op cannot be marked 'nn.recompute': only nn ops that compute have results to recompute}}
func.func @function(%x: tensor<4xf32>) -> tensor<4xf32> attributes {nn.recompute} {
  return %x : tensor<4xf32>
}
