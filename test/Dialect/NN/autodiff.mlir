// RUN: tandem-opt %s --nn-autodiff --split-input-file | FileCheck %s
// RUN: tandem-opt %s --nn-autodiff --split-input-file | tandem-opt --split-input-file --verify-roundtrip > /dev/null
// RUN: tandem-opt %S/../../../examples/tiny-gpt.mlir --nn-autodiff | tandem-opt --canonicalize --cse | FileCheck %s --check-prefix=GPT
// RUN: tandem-opt %S/../../../examples/tiny-gpt.mlir --nn-autodiff | tandem-opt --canonicalize --cse | tandem-opt --verify-roundtrip | awk '/func.func @forward_grad/ { f = 1 } f && /= nn[.]/ && !/nn[.](id|grad) = / && !/= nn[.]constant /' | FileCheck %s --check-prefix=UNTAGGED --allow-empty

// Broadcasting: the seed is summed back to the bias's shape; the bias's
// gradient is weight work (W), the cotangent of the activation is B.
// CHECK-LABEL: func.func @forward_grad(
// CHECK-SAME: %[[X:.*]]: tensor<2x3xf32>) -> (tensor<f32>, tensor<3xf32>) attributes {nn.gradients = [@b]}
// CHECK: %[[B:.*]] = nn.param @b {nn.id = 0 : i64}
// CHECK: nn.add %[[X]], %[[B]] {nn.id = 1 : i64}
// CHECK: %[[LOSS:.*]] = nn.reduce_sum %{{.*}} [0, 1] {nn.id = 2 : i64}
// CHECK: %[[SEED:.*]] = nn.constant dense<1.000000e+00> : tensor<f32> {nn.grad = #nn.grad<B, of = 2>}
// CHECK: %[[R:.*]] = nn.reshape %[[SEED]] {nn.grad = #nn.grad<B, of = 2>} : tensor<f32> to tensor<1x1xf32>
// CHECK: %[[D:.*]] = nn.broadcast_to %[[R]] {nn.grad = #nn.grad<B, of = 2>} : tensor<1x1xf32> to tensor<2x3xf32>
// CHECK: %[[DB:.*]] = nn.reduce_sum %[[D]] [0] {nn.grad = #nn.grad<W, of = 1>} : tensor<2x3xf32> -> tensor<3xf32>
// CHECK: return %[[LOSS]], %[[DB]] : tensor<f32>, tensor<3xf32>
nn.parameter @b : tensor<3xf32> = zeros
func.func @forward(%x: tensor<2x3xf32>) -> tensor<f32> {
  %b = nn.param @b : tensor<3xf32>
  %y = nn.add %x, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %l = nn.reduce_sum %y [0, 1] : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A 2-D weight shared by a batched activation: its gradient folds the batch
// into the rows of one product. The activation's own cotangent is not
// needed (it is an argument), so it is not computed.
// CHECK-LABEL: func.func @forward_grad(
// CHECK-SAME: %[[X:.*]]: tensor<3x4x8xf32>)
// CHECK: %[[W:.*]] = nn.param @w {nn.id = 0 : i64}
// CHECK: %[[SCALE:.*]] = nn.constant dense<0.0416666679> : tensor<f32> {nn.grad = #nn.grad<B, of = 2>}
// CHECK: %[[DY:.*]] = nn.broadcast_to %{{.*}} {nn.grad = #nn.grad<B, of = 2>} : tensor<1x1x1xf32> to tensor<3x4x2xf32>
// CHECK-NOT: transpose_rhs
// CHECK: %[[XR:.*]] = nn.reshape %[[X]] {nn.grad = #nn.grad<W, of = 1>} : tensor<3x4x8xf32> to tensor<12x8xf32>
// CHECK: %[[DR:.*]] = nn.reshape %[[DY]] {nn.grad = #nn.grad<W, of = 1>} : tensor<3x4x2xf32> to tensor<12x2xf32>
// CHECK: %[[DW:.*]] = nn.matmul %[[XR]], %[[DR]] {nn.grad = #nn.grad<W, of = 1>, transpose_lhs} : tensor<12x8xf32>, tensor<12x2xf32> -> tensor<8x2xf32>
// CHECK: return %{{.*}}, %[[DW]]
nn.parameter @w : tensor<8x2xf32> = zeros
func.func @forward(%x: tensor<3x4x8xf32>) -> tensor<f32> {
  %w = nn.param @w : tensor<8x2xf32>
  %y = nn.matmul %x, %w : tensor<3x4x8xf32>, tensor<8x2xf32> -> tensor<3x4x2xf32>
  %l = nn.reduce_mean %y [0, 1, 2] : tensor<3x4x2xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// softmax and the fused cross-entropy gradient; the hidden layer's
// cotangent (B) goes through the second weight, and both weights' gradients
// are W.
// CHECK-LABEL: func.func @forward_grad(
// CHECK-SAME: %[[X:.*]]: tensor<2x4xf32>, %[[T:.*]]: tensor<2xi32>) -> (tensor<f32>, tensor<4x4xf32>, tensor<4x5xf32>) attributes {nn.gradients = [@w1, @w2]}
// CHECK: %[[W2:.*]] = nn.param @w2 {nn.id = 2 : i64}
// CHECK: %[[Y:.*]] = nn.matmul %{{.*}}, %[[W2]] {nn.id = 3 : i64}
// CHECK: %[[P:.*]] = nn.softmax %[[Y]] {axis = 1 : i64, nn.id = 4 : i64}
// CHECK: %[[LOSS:.*]] = nn.cross_entropy %[[P]], %[[T]] {nn.id = 5 : i64}
// CHECK: %[[SEED:.*]] = nn.constant dense<1.000000e+00> : tensor<f32> {nn.grad = #nn.grad<B, of = 5>}
// CHECK: %[[DP:.*]] = nn.cross_entropy_grad %[[P]], %[[T]], %[[SEED]] {nn.grad = #nn.grad<B, of = 5>}
// CHECK: %[[M:.*]] = nn.mul %[[DP]], %[[P]] {nn.grad = #nn.grad<B, of = 4>}
// CHECK: %[[S:.*]] = nn.reduce_sum %[[M]] [1] keepdims {nn.grad = #nn.grad<B, of = 4>}
// CHECK: %[[SUB:.*]] = nn.sub %[[DP]], %[[S]] {nn.grad = #nn.grad<B, of = 4>}
// CHECK: %[[DY:.*]] = nn.mul %[[P]], %[[SUB]] {nn.grad = #nn.grad<B, of = 4>}
// CHECK: %[[DH:.*]] = nn.matmul %[[DY]], %[[W2]] {nn.grad = #nn.grad<B, of = 3>, transpose_rhs}
// CHECK: %[[DW2:.*]] = nn.matmul %{{.*}}, %[[DY]] {nn.grad = #nn.grad<W, of = 3>, transpose_lhs}
// CHECK: %[[DW1:.*]] = nn.matmul %[[X]], %[[DH]] {nn.grad = #nn.grad<W, of = 1>, transpose_lhs}
// CHECK: return %[[LOSS]], %[[DW1]], %[[DW2]]
nn.parameter @w1 : tensor<4x4xf32> = zeros
nn.parameter @w2 : tensor<4x5xf32> = zeros
func.func @forward(%x: tensor<2x4xf32>, %t: tensor<2xi32>) -> tensor<f32> {
  %w1 = nn.param @w1 : tensor<4x4xf32>
  %h = nn.matmul %x, %w1 : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %w2 = nn.param @w2 : tensor<4x5xf32>
  %y = nn.matmul %h, %w2 : tensor<2x4xf32>, tensor<4x5xf32> -> tensor<2x5xf32>
  %p = nn.softmax %y {axis = 1 : i64} : tensor<2x5xf32>
  %l = nn.cross_entropy %p, %t : tensor<2x5xf32>, tensor<2xi32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// layer_norm recomputes the normalized input; weight and bias gradients
// sum over the leading axes. With the input an argument, everything after
// the seed is weight work.
// CHECK-LABEL: func.func @forward_grad(
// CHECK-SAME: %[[X:.*]]: tensor<2x4xf32>) -> (tensor<f32>, tensor<4xf32>, tensor<4xf32>) attributes {nn.gradients = [@g, @b]}
// CHECK: nn.layer_norm %[[X]], %{{.*}}, %{{.*}} {epsilon = 1.000000e-05 : f64, nn.id = 2 : i64}
// CHECK: %[[DY:.*]] = nn.broadcast_to %{{.*}} {nn.grad = #nn.grad<B, of = 3>} : tensor<1x1xf32> to tensor<2x4xf32>
// CHECK: %[[MEAN:.*]] = nn.reduce_mean %[[X]] [1] keepdims {nn.grad = #nn.grad<W, of = 2>}
// CHECK: %[[C:.*]] = nn.sub %[[X]], %[[MEAN]] {nn.grad = #nn.grad<W, of = 2>}
// CHECK: %[[EPS:.*]] = nn.constant dense<9.99999974E-6> : tensor<f32> {nn.grad = #nn.grad<W, of = 2>}
// CHECK: %[[R:.*]] = nn.rsqrt %{{.*}} {nn.grad = #nn.grad<W, of = 2>}
// CHECK: %[[XHAT:.*]] = nn.mul %[[C]], %[[R]] {nn.grad = #nn.grad<W, of = 2>}
// CHECK: %[[GX:.*]] = nn.mul %[[DY]], %[[XHAT]] {nn.grad = #nn.grad<W, of = 2>}
// CHECK: %[[DG:.*]] = nn.reduce_sum %[[GX]] [0] {nn.grad = #nn.grad<W, of = 2>} : tensor<2x4xf32> -> tensor<4xf32>
// CHECK: %[[DB:.*]] = nn.reduce_sum %[[DY]] [0] {nn.grad = #nn.grad<W, of = 2>} : tensor<2x4xf32> -> tensor<4xf32>
// CHECK: return %{{.*}}, %[[DG]], %[[DB]]
nn.parameter @g : tensor<4xf32> = ones
nn.parameter @b : tensor<4xf32> = zeros
func.func @forward(%x: tensor<2x4xf32>) -> tensor<f32> {
  %g = nn.param @g : tensor<4xf32>
  %b = nn.param @b : tensor<4xf32>
  %y = nn.layer_norm %x, %g, %b {epsilon = 1.0e-05 : f64} : tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>
  %l = nn.reduce_sum %y [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A tied embedding across a stage boundary: the embedding's gradient is a
// scatter-add, the backward crosses the boundary with its own stage_end
// (B), and the two reads of @wte sum into one gradient in program order
// (the embedding's contribution first).
// CHECK-LABEL: func.func @forward_grad(
// CHECK-SAME: %[[IDS:.*]]: tensor<2x3xi32>, %[[T:.*]]: tensor<2x3xi32>) -> (tensor<f32>, tensor<6x4xf32>) attributes {nn.gradients = [@wte]}
// CHECK: %[[E:.*]] = nn.embedding %{{.*}}, %[[IDS]] {nn.id = 1 : i64}
// CHECK: %[[H:.*]] = nn.stage_end %[[E]] {nn.id = 2 : i64}
// CHECK: %[[HEAD:.*]] = nn.param @wte {nn.id = 3 : i64}
// CHECK: %[[Y:.*]] = nn.matmul %[[H]], %[[HEAD]] {nn.id = 4 : i64, transpose_rhs}
// CHECK: %[[DY:.*]] = nn.cross_entropy_grad %[[Y]], %[[T]], %{{.*}} {nn.grad = #nn.grad<B, of = 5>}
// CHECK: %[[DH:.*]] = nn.matmul %[[DY]], %[[HEAD]] {nn.grad = #nn.grad<B, of = 4>}
// CHECK: %[[DHEAD:.*]] = nn.matmul %{{.*}}, %{{.*}} {nn.grad = #nn.grad<W, of = 4>, transpose_lhs} : tensor<6x6xf32>, tensor<6x4xf32> -> tensor<6x4xf32>
// CHECK: %[[DE:.*]] = nn.stage_end %[[DH]] {nn.grad = #nn.grad<B, of = 2>} : tensor<2x3x4xf32>
// CHECK: %[[DTABLE:.*]] = nn.embedding_grad %[[DE]], %[[IDS]] {nn.grad = #nn.grad<W, of = 1>} : tensor<2x3x4xf32>, tensor<2x3xi32> -> tensor<6x4xf32>
// CHECK: %[[DW:.*]] = nn.add %[[DTABLE]], %[[DHEAD]] {nn.grad = #nn.grad<W, of = 3>, nn.grad_sum}
// CHECK: return %{{.*}}, %[[DW]] : tensor<f32>, tensor<6x4xf32>
nn.parameter @wte : tensor<6x4xf32> = normal(0.02)
func.func @forward(%ids: tensor<2x3xi32>, %t: tensor<2x3xi32>) -> tensor<f32> {
  %wte = nn.param @wte : tensor<6x4xf32>
  %x = nn.embedding %wte, %ids : tensor<6x4xf32>, tensor<2x3xi32> -> tensor<2x3x4xf32>
  %h = nn.stage_end %x : tensor<2x3x4xf32>
  %head = nn.param @wte : tensor<6x4xf32>
  %y = nn.matmul %h, %head {transpose_rhs} : tensor<2x3x4xf32>, tensor<6x4xf32> -> tensor<2x3x6xf32>
  %l = nn.cross_entropy %y, %t : tensor<2x3x6xf32>, tensor<2x3xi32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// An unused parameter read still gets a (zero) gradient; a parameter the
// function never reads gets none.
// CHECK-LABEL: func.func @forward_grad(
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32>, tensor<2xf32>) attributes {nn.gradients = [@a, @unused]}
// CHECK: %[[Z:.*]] = nn.constant dense<0.000000e+00> : tensor<2xf32> {nn.grad = #nn.grad<W, of = 1>}
// CHECK: return %{{.*}}, %{{.*}}, %[[Z]]
nn.parameter @a : tensor<4xf32> = zeros
nn.parameter @unread : tensor<3xf32> = zeros
nn.parameter @unused : tensor<2xf32> = zeros
func.func @forward() -> tensor<f32> {
  %a = nn.param @a : tensor<4xf32>
  %u = nn.param @unused : tensor<2xf32>
  %l = nn.reduce_sum %a [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// GPT-LABEL: func.func @forward_grad(
// GPT-SAME: attributes {nn.gradients = [@wte, @wpe, @h.0.ln_1.weight,
// GPT: nn.cross_entropy_grad {{.*}}nn.grad = #nn.grad<B
// GPT: nn.stage_end {{.*}}nn.grad = #nn.grad<B
// GPT: nn.embedding_grad {{.*}}nn.grad = #nn.grad<W

// After canonicalize and cse, every op of @forward_grad that is neither a
// forward op (nn.id) nor a constant still carries its tag: the filter above
// leaves nothing.
// UNTAGGED-NOT: {{.}}

// -----

// nn.stop_gradient passes no cotangent: @x, read only through one, gets
// zeros (tanh's derivative is never built), and @u in u - stop_gradient(u)
// gets the direct path's alone (the sub's lhs). nn.one_hot of integer ids
// is a constant to the parameters: its result only scales the cotangent.
// CHECK-LABEL: func.func @forward_grad(
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32>, tensor<4xf32>) attributes {nn.gradients = [@x, @u]}
// CHECK: %[[S:.*]] = nn.stop_gradient %{{.*}} {nn.id = 3 : i64} : tensor<4xf32>
// CHECK: nn.stop_gradient %{{.*}} {nn.id = 4 : i64} : tensor<4xf32>
// CHECK: %[[H:.*]] = nn.one_hot %{{.*}} {classes = 4 : i64, nn.id = 7 : i64} : tensor<4xi32> -> tensor<4x4xf32>
// CHECK: %[[LOSS:.*]] = nn.reduce_sum %{{.*}} [0, 1] {nn.id = 9 : i64}
// CHECK-NOT: nn.tanh
// CHECK: %[[DM:.*]] = nn.mul %{{.*}}, %[[H]] {nn.grad = #nn.grad<W, of = 8>}
// CHECK: %[[DMS:.*]] = nn.reduce_sum %[[DM]] [0] {nn.grad = #nn.grad<W, of = 8>}
// CHECK-NEXT: %[[DU:.*]] = nn.mul %[[DMS]], %[[S]] {nn.grad = #nn.grad<W, of = 6>}
// CHECK-NEXT: %[[DX:.*]] = nn.constant dense<0.000000e+00> : tensor<4xf32> {nn.grad = #nn.grad<W, of = 0>}
// CHECK-NEXT: return %[[LOSS]], %[[DX]], %[[DU]]
nn.parameter @x : tensor<4xf32> = zeros
nn.parameter @u : tensor<4xf32> = zeros
func.func @forward(%ids: tensor<4xi32>) -> tensor<f32> {
  %x = nn.param @x : tensor<4xf32>
  %u = nn.param @u : tensor<4xf32>
  %t = nn.tanh %x : tensor<4xf32>
  %s = nn.stop_gradient %t : tensor<4xf32>
  %su = nn.stop_gradient %u : tensor<4xf32>
  %d = nn.sub %u, %su : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %m = nn.mul %s, %d : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %h = nn.one_hot %ids {classes = 4 : i64} : tensor<4xi32> -> tensor<4x4xf32>
  %hm = nn.mul %h, %m : tensor<4x4xf32>, tensor<4xf32> -> tensor<4x4xf32>
  %l = nn.reduce_sum %hm [0, 1] : tensor<4x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
