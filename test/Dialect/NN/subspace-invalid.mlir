// RUN: tandem-opt %s -split-input-file -verify-diagnostics --nn-subspace="rank=2"
// RUN: awk '/^\/\/ -----/ { exit } { print }' %s | not tandem-opt --nn-subspace="rank=0" 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: awk '/^\/\/ -----/ { exit } { print }' %s | not tandem-opt --nn-subspace="rank=2 seed=-1" 2>&1 | FileCheck %s --check-prefix=SEED
// RUN: awk '/^\/\/ -----/ { exit } { print }' %s | not tandem-opt --nn-subspace="rank=2 function=model" 2>&1 | FileCheck %s --check-prefix=FUNC
// RUN: awk '/^\/\/ -----/ { exit } { print }' %s | not tandem-opt --nn-subspace="rank=9" 2>&1 | FileCheck %s --check-prefix=WIDE

// Everything nn-subspace refuses, at the op at fault.
// ZERO: error: nn-subspace: rank must be at least 1, found 0
// SEED: error: nn-subspace: seed must be non-negative, found -1
// FUNC: error: nn-subspace: no function @model
// WIDE: error: nn-subspace: rank 9 does not fit the model width 8 (expected 1 to 8)

// The model the cases below break; rewritten without a word at rank 2, and
// refused at rank 9, wider than the model.
module {
  nn.parameter @wte : tensor<16x8xf32> = normal(0.02)
  nn.parameter @h0.w : tensor<8x8xf32> = normal(0.02)
  nn.parameter @h0.b : tensor<8xf32> = zeros
  func.func @forward(%ids: tensor<2x4xi32>, %targets: tensor<2x4xi32>) -> tensor<f32> {
    %e = nn.param @wte : tensor<16x8xf32>
    %x0 = nn.embedding %e, %ids : tensor<16x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
    %a0 = nn.tanh %x0 : tensor<2x4x8xf32>
    %w0 = nn.param @h0.w : tensor<8x8xf32>
    %m0 = nn.matmul %a0, %w0 : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
    %b0 = nn.param @h0.b : tensor<8xf32>
    %y0 = nn.add %m0, %b0 : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
    %x1 = nn.add %x0, %y0 : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
    %h = nn.param @wte : tensor<16x8xf32>
    %l = nn.matmul %x1, %h {transpose_rhs} : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>
    %loss = nn.cross_entropy %l, %targets : tensor<2x4x16xf32>, tensor<2x4xi32> -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// -----

// No token embedding: the table is no parameter.
module {
  nn.parameter @wte : tensor<16x8xf32> = normal(0.02)
  nn.parameter @h0.w : tensor<8x8xf32> = normal(0.02)
  nn.parameter @h0.b : tensor<8xf32> = zeros
  // expected-error@+1 {{nn-subspace: @forward has no single token embedding (nn.embedding of a trained parameter table by a function argument): not a residual transformer the rewrite knows}}
  func.func @forward(%ids: tensor<2x4xi32>, %targets: tensor<2x4xi32>) -> tensor<f32> {
    %e0 = nn.param @wte : tensor<16x8xf32>
    %e = nn.tanh %e0 : tensor<16x8xf32>
    %x0 = nn.embedding %e, %ids : tensor<16x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
    %a0 = nn.tanh %x0 : tensor<2x4x8xf32>
    %w0 = nn.param @h0.w : tensor<8x8xf32>
    %m0 = nn.matmul %a0, %w0 : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
    %b0 = nn.param @h0.b : tensor<8xf32>
    %y0 = nn.add %m0, %b0 : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
    %x1 = nn.add %x0, %y0 : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
    %h = nn.param @wte : tensor<16x8xf32>
    %l = nn.matmul %x1, %h {transpose_rhs} : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>
    %loss = nn.cross_entropy %l, %targets : tensor<2x4x16xf32>, tensor<2x4xi32> -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// -----

// A projection weight read elsewhere.
module {
  nn.parameter @wte : tensor<16x8xf32> = normal(0.02)
  nn.parameter @h0.w : tensor<8x8xf32> = normal(0.02)
  nn.parameter @h0.b : tensor<8xf32> = zeros
  func.func @forward(%ids: tensor<2x4xi32>, %targets: tensor<2x4xi32>) -> tensor<f32> {
    %e = nn.param @wte : tensor<16x8xf32>
    %x0 = nn.embedding %e, %ids : tensor<16x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
    %a0 = nn.tanh %x0 : tensor<2x4x8xf32>
    // expected-error@+1 {{nn-subspace: the projection weight @h0.w is read elsewhere too, so it cannot become 2 wide}}
    %w0 = nn.param @h0.w : tensor<8x8xf32>
    %m0 = nn.matmul %a0, %w0 : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
    %b0 = nn.param @h0.b : tensor<8xf32>
    %y0 = nn.add %m0, %b0 : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
    %x1 = nn.add %x0, %y0 : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
    %h = nn.param @wte : tensor<16x8xf32>
    %again = nn.param @h0.w : tensor<8x8xf32>
    %l = nn.matmul %x1, %h {transpose_rhs} : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>
    %loss = nn.cross_entropy %l, %targets : tensor<2x4x16xf32>, tensor<2x4xi32> -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// -----

// A residual addition of something that is no projection.
module {
  nn.parameter @wte : tensor<16x8xf32> = normal(0.02)
  nn.parameter @h0.w : tensor<8x8xf32> = normal(0.02)
  nn.parameter @h0.b : tensor<8xf32> = zeros
  func.func @forward(%ids: tensor<2x4xi32>, %targets: tensor<2x4xi32>) -> tensor<f32> {
    %e = nn.param @wte : tensor<16x8xf32>
    %x0 = nn.embedding %e, %ids : tensor<16x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
    %a0 = nn.tanh %x0 : tensor<2x4x8xf32>
    %w0 = nn.param @h0.w : tensor<8x8xf32>
    %m0 = nn.matmul %a0, %w0 : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
    // expected-error@+1 {{nn-subspace: this addition to the residual stream adds something that is no projection the rewrite recognises (nn.matmul of a parameter weight, optionally plus a parameter bias)}}
    %x1 = nn.add %x0, %a0 : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
    %h = nn.param @wte : tensor<16x8xf32>
    %l = nn.matmul %x1, %h {transpose_rhs} : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>
    %loss = nn.cross_entropy %l, %targets : tensor<2x4x16xf32>, tensor<2x4xi32> -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// -----

// A transposed projection.
module {
  nn.parameter @wte : tensor<16x8xf32> = normal(0.02)
  nn.parameter @h0.w : tensor<8x8xf32> = normal(0.02)
  nn.parameter @h0.b : tensor<8xf32> = zeros
  func.func @forward(%ids: tensor<2x4xi32>, %targets: tensor<2x4xi32>) -> tensor<f32> {
    %e = nn.param @wte : tensor<16x8xf32>
    %x0 = nn.embedding %e, %ids : tensor<16x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
    %a0 = nn.tanh %x0 : tensor<2x4x8xf32>
    %w0 = nn.param @h0.w : tensor<8x8xf32>
    // expected-error@+1 {{nn-subspace: this projection into the residual stream is not `h · weight` with a rank-2 parameter weight (in x out, untransposed), the form the rewrite narrows}}
    %m0 = nn.matmul %a0, %w0 {transpose_rhs} : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
    %b0 = nn.param @h0.b : tensor<8xf32>
    %y0 = nn.add %m0, %b0 : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
    %x1 = nn.add %x0, %y0 : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
    %h = nn.param @wte : tensor<16x8xf32>
    %l = nn.matmul %x1, %h {transpose_rhs} : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>
    %loss = nn.cross_entropy %l, %targets : tensor<2x4x16xf32>, tensor<2x4xi32> -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// -----

// A stream that forks: two stage markers.
module {
  nn.parameter @wte : tensor<16x8xf32> = normal(0.02)
  nn.parameter @h0.w : tensor<8x8xf32> = normal(0.02)
  nn.parameter @h0.b : tensor<8xf32> = zeros
  func.func @forward(%ids: tensor<2x4xi32>, %targets: tensor<2x4xi32>) -> tensor<f32> {
    %e = nn.param @wte : tensor<16x8xf32>
    %x0 = nn.embedding %e, %ids : tensor<16x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
    %a0 = nn.tanh %x0 : tensor<2x4x8xf32>
    %w0 = nn.param @h0.w : tensor<8x8xf32>
    %m0 = nn.matmul %a0, %w0 : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
    %b0 = nn.param @h0.b : tensor<8xf32>
    %y0 = nn.add %m0, %b0 : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
    %x1 = nn.add %x0, %y0 : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
    // expected-note@+1 {{the other op}}
    %s1 = nn.stage_end %x1 : tensor<2x4x8xf32>
    // expected-error@+1 {{nn-subspace: the residual stream forks: it goes on here and at another op}}
    %s2 = nn.stage_end %x1 : tensor<2x4x8xf32>
    %h = nn.param @wte : tensor<16x8xf32>
    %l = nn.matmul %s2, %h {transpose_rhs} : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>
    %loss = nn.cross_entropy %l, %targets : tensor<2x4x16xf32>, tensor<2x4xi32> -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// -----

// Run twice.
module {
  nn.parameter @wte : tensor<16x8xf32> = normal(0.02)
  nn.parameter @h0.w : tensor<8x8xf32> = normal(0.02)
  nn.parameter @h0.b : tensor<8xf32> = zeros
  // expected-error@+1 {{nn-subspace: @subspace.basis already exists: was the pass run twice?}}
  nn.parameter @subspace.basis : tensor<8x2xf32> = orthonormal {frozen}
  func.func @forward(%ids: tensor<2x4xi32>, %targets: tensor<2x4xi32>) -> tensor<f32> {
    %e = nn.param @wte : tensor<16x8xf32>
    %x0 = nn.embedding %e, %ids : tensor<16x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
    %a0 = nn.tanh %x0 : tensor<2x4x8xf32>
    %w0 = nn.param @h0.w : tensor<8x8xf32>
    %m0 = nn.matmul %a0, %w0 : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
    %b0 = nn.param @h0.b : tensor<8xf32>
    %y0 = nn.add %m0, %b0 : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
    %x1 = nn.add %x0, %y0 : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
    %h = nn.param @wte : tensor<16x8xf32>
    %l = nn.matmul %x1, %h {transpose_rhs} : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>
    %loss = nn.cross_entropy %l, %targets : tensor<2x4x16xf32>, tensor<2x4xi32> -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// -----

// Only the residual transformer's own form: the embedding's result goes nowhere else.
module {
  nn.parameter @wte : tensor<16x8xf32> = normal(0.02)
  nn.parameter @h0.w : tensor<8x8xf32> = normal(0.02)
  nn.parameter @h0.b : tensor<8xf32> = zeros
  func.func @forward(%ids: tensor<2x4xi32>, %targets: tensor<2x4xi32>) -> tensor<f32> {
    %e = nn.param @wte : tensor<16x8xf32>
    // expected-error@+1 {{nn-subspace: no residual addition follows the token embedding: not a residual transformer}}
    %x0 = nn.embedding %e, %ids : tensor<16x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
    %a0 = nn.tanh %x0 : tensor<2x4x8xf32>
    %w0 = nn.param @h0.w : tensor<8x8xf32>
    %m0 = nn.matmul %a0, %w0 : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
    %b0 = nn.param @h0.b : tensor<8xf32>
    %y0 = nn.add %m0, %b0 : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
    %x1 = nn.mul %x0, %y0 : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
    %h = nn.param @wte : tensor<16x8xf32>
    %l = nn.matmul %x1, %h {transpose_rhs} : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>
    %loss = nn.cross_entropy %l, %targets : tensor<2x4x16xf32>, tensor<2x4xi32> -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// -----

// A projection weight whose one read has two uses (after CSE, say).
module {
  nn.parameter @wte : tensor<16x8xf32> = normal(0.02)
  nn.parameter @h0.w : tensor<8x8xf32> = normal(0.02)
  nn.parameter @h0.b : tensor<8xf32> = zeros
  func.func @forward(%ids: tensor<2x4xi32>, %targets: tensor<2x4xi32>) -> tensor<f32> {
    %e = nn.param @wte : tensor<16x8xf32>
    %x0 = nn.embedding %e, %ids : tensor<16x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
    %a0 = nn.tanh %x0 : tensor<2x4x8xf32>
    // expected-error@+1 {{nn-subspace: the projection weight @h0.w is read elsewhere too, so it cannot become 2 wide}}
    %w0 = nn.param @h0.w : tensor<8x8xf32>
    %m0 = nn.matmul %a0, %w0 : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
    %b0 = nn.param @h0.b : tensor<8xf32>
    %y0 = nn.add %m0, %b0 : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
    %x1 = nn.add %x0, %y0 : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
    %h = nn.param @wte : tensor<16x8xf32>
    %twice = nn.matmul %a0, %w0 : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
    %l = nn.matmul %x1, %h {transpose_rhs} : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>
    %loss = nn.cross_entropy %l, %targets : tensor<2x4x16xf32>, tensor<2x4xi32> -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// -----

// An addition that broadcasts the stream to another type.
module {
  nn.parameter @wte : tensor<16x8xf32> = normal(0.02)
  nn.parameter @h0.w : tensor<8x8xf32> = normal(0.02)
  func.func @forward(%ids: tensor<2x4xi32>, %targets: tensor<2x4xi32>, %big: tensor<3x2x4x8xf32>) -> tensor<f32> {
    %e = nn.param @wte : tensor<16x8xf32>
    %x0 = nn.embedding %e, %ids : tensor<16x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
    %a0 = nn.tanh %x0 : tensor<2x4x8xf32>
    %w0 = nn.param @h0.w : tensor<8x8xf32>
    %m0 = nn.matmul %a0, %w0 : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
    %x1 = nn.add %x0, %m0 : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
    // expected-error@+1 {{nn-subspace: this addition to the residual stream changes its type from 'tensor<2x4x8xf32>' to 'tensor<3x2x4x8xf32>'; the rewrite needs the stream to keep its type}}
    %b = nn.add %x1, %big : tensor<2x4x8xf32>, tensor<3x2x4x8xf32> -> tensor<3x2x4x8xf32>
    %h = nn.param @wte : tensor<16x8xf32>
    %l = nn.matmul %x1, %h {transpose_rhs} : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>
    %loss = nn.cross_entropy %l, %targets : tensor<2x4x16xf32>, tensor<2x4xi32> -> tensor<f32>
    return %loss : tensor<f32>
  }
}
