// RUN: tandem-opt %s --nn-autodiff="decompose-attention=false" -verify-diagnostics
// RUN: tandem-opt %s --nn-autodiff="decompose-attention=true" | FileCheck %s --check-prefix=DECOMPOSED

// Fused attention's gradient takes the log-sum-exp as a constant of the
// forward pass: a loss that depends on it is refused with the decomposed
// path named. Decomposed, the log-sum-exp is primitive ops and is
// differentiated like any (reduce_max, exp, reduce_sum, log).
// DECOMPOSED-LABEL: func.func @forward_grad(
// DECOMPOSED-NOT: nn.attention
// DECOMPOSED: nn.reduce_max
// DECOMPOSED: nn.log

nn.parameter @w : tensor<1x4x8xf32> = normal(1.000000e+00)
func.func @forward() -> tensor<f32> {
  %w = nn.param @w : tensor<1x4x8xf32>
  // expected-error@+1 {{nn-autodiff: the loss depends on the log-sum-exp result of 'nn.attention', which fused attention does not differentiate; use decompose-attention=true}}
  %y, %lse = nn.attention %w, %w, %w {causal, heads = 2 : i64} : tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>, tensor<1x2x4xf32>
  %l = nn.reduce_sum %lse [0, 1, 2] : tensor<1x2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
