// RUN: tandem-opt %s -verify-diagnostics --mpmd-partition="function=f microbatches=2 split-backward=true"

// Splitting the backward pass needs W ops never to feed B ops (nn-autodiff
// guarantees it; a hand-written function may not).
func.func @f(%x: tensor<2x4xf32>) -> tensor<f32> {
  %a = nn.relu %x {nn.id = 1 : i64} : tensor<2x4xf32>
  // expected-note@+1 {{the W op}}
  %w = nn.neg %a {nn.grad = #nn.grad<W, of = 1>} : tensor<2x4xf32>
  // expected-error@+1 {{mpmd-partition: this input-gradient (B) op uses a weight-gradient (W) op's result, so the backward pass cannot be split}}
  %b = nn.neg %w {nn.grad = #nn.grad<B, of = 1>} : tensor<2x4xf32>
  %l = nn.reduce_sum %b [0, 1] {nn.grad = #nn.grad<B, of = 1>} : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
