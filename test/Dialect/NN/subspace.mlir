// RUN: tandem-opt %s --nn-subspace="rank=2 seed=7" | FileCheck %s
// RUN: tandem-opt %s --nn-subspace="rank=2 seed=7" --nn-autodiff --nn-optimizer="function=forward_grad optimizer=adamw" | FileCheck %s --check-prefix=TRAIN
// RUN: tandem-opt %s --nn-subspace="rank=8" | FileCheck %s --check-prefix=FULL
// After CSE the tied head reads the embedding's own nn.param: the same lift.
// RUN: tandem-opt %s --cse --nn-subspace="rank=2 seed=7" | FileCheck %s --check-prefix=CSE

// nn-subspace keeps the residual stream in a k-wide subspace: the learned
// tables and the projections into the stream become k wide (same names and
// initializers), every other read of the stream reads T[ids] + c·Uᵀ, and a
// tied head reads T + E·Uᵀ. U and T are frozen parameters drawn with the
// pass's seed.

// CHECK-LABEL: module
// CHECK: nn.parameter @wte : tensor<16x2xf32> = normal(2.000000e-02){{$}}
// CHECK: nn.parameter @wpe : tensor<4x2xf32> = normal(2.000000e-02){{$}}
// CHECK: nn.parameter @h0.w : tensor<8x2xf32> = normal(2.000000e-02){{$}}
// CHECK: nn.parameter @h0.b : tensor<2xf32> = zeros{{$}}
// CHECK: nn.parameter @h1.w : tensor<8x2xf32> = normal(1.000000e-02){{$}}
// CHECK: nn.parameter @subspace.basis : tensor<8x2xf32> = orthonormal {frozen, seed = 7 : i64}
// CHECK: nn.parameter @subspace.tokens : tensor<16x8xf32> = normal(2.000000e-02) {frozen, seed = 7 : i64}
// CHECK: func.func @forward(%[[IDS:.*]]: tensor<2x4xi32>, %{{.*}}: tensor<2x4xi32>)
// c0 = E[ids] + P, k wide.
// CHECK: %[[E:.*]] = nn.param @wte : tensor<16x2xf32>
// CHECK: %[[TOK:.*]] = nn.embedding %[[E]], %[[IDS]] : tensor<16x2xf32>, tensor<2x4xi32> -> tensor<2x4x2xf32>
// CHECK: %[[P:.*]] = nn.param @wpe : tensor<4x2xf32>
// CHECK: %[[C0:.*]] = nn.add %[[TOK]], %[[P]] : tensor<2x4x2xf32>, tensor<4x2xf32> -> tensor<2x4x2xf32>
// The block reads x = T[ids] + c0·Uᵀ.
// CHECK: %[[T0:.*]] = nn.param @subspace.tokens : tensor<16x8xf32>
// CHECK: %[[G0:.*]] = nn.embedding %[[T0]], %[[IDS]] : tensor<16x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
// CHECK: %[[U0:.*]] = nn.param @subspace.basis : tensor<8x2xf32>
// CHECK: %[[L0:.*]] = nn.matmul %[[C0]], %[[U0]] {transpose_rhs} : tensor<2x4x2xf32>, tensor<8x2xf32> -> tensor<2x4x8xf32>
// CHECK: %[[X0:.*]] = nn.add %[[G0]], %[[L0]] : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
// CHECK: %[[A0:.*]] = nn.tanh %[[X0]] : tensor<2x4x8xf32>
// Its projection writes k wide values into c.
// CHECK: %[[M0:.*]] = nn.matmul %[[A0]], %{{.*}} : tensor<2x4x8xf32>, tensor<8x2xf32> -> tensor<2x4x2xf32>
// CHECK: %[[Y0:.*]] = nn.add %[[M0]], %{{.*}} : tensor<2x4x2xf32>, tensor<2xf32> -> tensor<2x4x2xf32>
// CHECK: %[[C1:.*]] = nn.add %[[C0]], %[[Y0]] : tensor<2x4x2xf32>, tensor<2x4x2xf32> -> tensor<2x4x2xf32>
// The stage edge carries c.
// CHECK: %[[S:.*]] = nn.stage_end %[[C1]] : tensor<2x4x2xf32>
// CHECK: nn.matmul %[[S]], %{{.*}} {transpose_rhs} : tensor<2x4x2xf32>, tensor<8x2xf32> -> tensor<2x4x8xf32>
// CHECK: %[[C2:.*]] = nn.add %{{.*}}, %[[S]] : tensor<2x4x2xf32>, tensor<2x4x2xf32> -> tensor<2x4x2xf32>
// The tied head: T + E·Uᵀ.
// CHECK: %[[EH:.*]] = nn.param @wte : tensor<16x2xf32>
// CHECK: %[[UH:.*]] = nn.param @subspace.basis : tensor<8x2xf32>
// CHECK: %[[LH:.*]] = nn.matmul %[[EH]], %[[UH]] {transpose_rhs} : tensor<16x2xf32>, tensor<8x2xf32> -> tensor<16x8xf32>
// CHECK: %[[TH:.*]] = nn.param @subspace.tokens : tensor<16x8xf32>
// CHECK: %[[W:.*]] = nn.add %[[TH]], %[[LH]] : tensor<16x8xf32>, tensor<16x8xf32> -> tensor<16x8xf32>
// CHECK: nn.matmul %[[C2]], %{{.*}} {transpose_rhs} : tensor<2x4x2xf32>, tensor<8x2xf32> -> tensor<2x4x8xf32>
// CHECK: %[[XL:.*]] = nn.add %{{.*}}, %{{.*}} : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
// CHECK: nn.matmul %[[XL]], %[[W]] {transpose_rhs} : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>

// Nothing trains the frozen parameters: no gradient, no optimizer state.
// TRAIN-LABEL: module
// TRAIN-NOT: @opt.m.subspace
// TRAIN: func.func @forward_grad
// TRAIN-SAME: nn.gradients = [@wte, @wpe, @h0.w, @h0.b, @h1.w]
// TRAIN-NOT: @opt.m.subspace

// CSE-LABEL: func.func @forward
// CSE: %[[E:.*]] = nn.param @wte : tensor<16x2xf32>
// CSE-NEXT: %[[U:.*]] = nn.param @subspace.basis : tensor<8x2xf32>
// CSE-NEXT: %[[L:.*]] = nn.matmul %[[E]], %[[U]] {transpose_rhs} : tensor<16x2xf32>, tensor<8x2xf32> -> tensor<16x8xf32>
// CSE-NEXT: %[[T:.*]] = nn.param @subspace.tokens : tensor<16x8xf32>
// CSE-NEXT: %[[W:.*]] = nn.add %[[T]], %[[L]] : tensor<16x8xf32>, tensor<16x8xf32> -> tensor<16x8xf32>
// CSE-NEXT: nn.embedding %[[E]], %{{.*}} : tensor<16x2xf32>, tensor<2x4xi32> -> tensor<2x4x2xf32>
// CSE: nn.matmul %{{.*}}, %[[W]] {transpose_rhs} : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>

// k = d is allowed (a rotated stream, nothing saved).
// FULL: nn.parameter @subspace.basis : tensor<8x8xf32> = orthonormal {frozen, seed = 0 : i64}
module {
  nn.parameter @wte : tensor<16x8xf32> = normal(0.02)
  nn.parameter @wpe : tensor<4x8xf32> = normal(0.02)
  nn.parameter @h0.w : tensor<8x8xf32> = normal(0.02)
  nn.parameter @h0.b : tensor<8xf32> = zeros
  nn.parameter @h1.w : tensor<8x8xf32> = normal(0.01)
  func.func @forward(%ids: tensor<2x4xi32>, %targets: tensor<2x4xi32>) -> tensor<f32> {
    %e = nn.param @wte : tensor<16x8xf32>
    %tok = nn.embedding %e, %ids : tensor<16x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
    %p = nn.param @wpe : tensor<4x8xf32>
    %x0 = nn.add %tok, %p : tensor<2x4x8xf32>, tensor<4x8xf32> -> tensor<2x4x8xf32>
    %a0 = nn.tanh %x0 : tensor<2x4x8xf32>
    %w0 = nn.param @h0.w : tensor<8x8xf32>
    %m0 = nn.matmul %a0, %w0 : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
    %b0 = nn.param @h0.b : tensor<8xf32>
    %y0 = nn.add %m0, %b0 : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
    %x1 = nn.add %x0, %y0 : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
    %s = nn.stage_end %x1 : tensor<2x4x8xf32>
    %a1 = nn.tanh %s : tensor<2x4x8xf32>
    %w1 = nn.param @h1.w : tensor<8x8xf32>
    %m1 = nn.matmul %a1, %w1 : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
    %x2 = nn.add %m1, %s : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
    %h = nn.param @wte : tensor<16x8xf32>
    %l = nn.matmul %x2, %h {transpose_rhs} : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>
    %loss = nn.cross_entropy %l, %targets : tensor<2x4x16xf32>, tensor<2x4xi32> -> tensor<f32>
    return %loss : tensor<f32>
  }
}
