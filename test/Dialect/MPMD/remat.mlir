// mpmd-remat's decisions per policy on a two-stage program:
//
//   stage 0: z = x @ w0, a = tanh z, s = softmax a, h = s @ w1, g = gelu h
//   stage 1: y = g @ w2, t = tanh y, loss = sum(t * t)
//
// Without remat, @s0.fwd stashes a, s and h for @s0.bwd (192 bytes per
// microbatch) and @s1.fwd stashes t (32 bytes). Each output is also lowered
// and verified, so the rewritten fragments and transfers are consistent.

// RUN: tandem-opt %s --nn-autodiff --mpmd-partition="function=forward_grad stages=2 microbatches=2" --mpmd-schedule --mpmd-remat=policy=full --mpmd-lower-transfers --mpmd-verify 2>%t.full | FileCheck %s --check-prefix=FULL
// RUN: FileCheck %s --check-prefix=FULL-REMARK < %t.full
// RUN: tandem-opt %s --nn-autodiff --mpmd-partition="function=forward_grad stages=2 microbatches=2" --mpmd-schedule --mpmd-remat=policy=selective --mpmd-lower-transfers --mpmd-verify 2>%t.sel | FileCheck %s --check-prefix=SEL
// RUN: FileCheck %s --check-prefix=SEL-REMARK < %t.sel
// RUN: tandem-opt %s --nn-autodiff --mpmd-partition="function=forward_grad stages=2 microbatches=2" --mpmd-schedule --mpmd-remat="policy=budget budget=2000" --mpmd-memory --mpmd-lower-transfers --mpmd-verify 2>%t.budget | FileCheck %s --check-prefix=BUDGET
// RUN: FileCheck %s --check-prefix=BUDGET-REMARK < %t.budget
// RUN: tandem-opt %s --nn-autodiff --mpmd-partition="function=forward_grad stages=2 microbatches=2 split-backward=true" --mpmd-schedule=schedule=zb-h1 --mpmd-remat=policy=full --mpmd-lower-transfers --mpmd-verify 2>/dev/null | FileCheck %s --check-prefix=ZB
// Two chunks on one stage: chunk 1's input comes from chunk 0 on the same
// rank, and its backward binds that transfer again.
// RUN: tandem-opt %s --nn-autodiff --mpmd-partition="function=forward_grad stages=1 chunks=2 microbatches=2" --mpmd-schedule=schedule=interleaved-1f1b --mpmd-remat=policy=full --mpmd-lower-transfers --mpmd-verify 2>/dev/null | FileCheck %s --check-prefix=CHUNKS
// policy=none (the default) changes nothing.
// RUN: tandem-opt %s --nn-autodiff --mpmd-partition="function=forward_grad stages=2 microbatches=2" --mpmd-schedule -o %t.ref
// RUN: tandem-opt %t.ref --mpmd-remat -o %t.none
// RUN: diff %t.ref %t.none

// full: the forward yields only its stage output; each backward recomputes
// everything from the stage inputs, bound as the forward binds them.
// FULL: mpmd.fragment @s0.fwd {{.*}} -> tensor<2x8xf32> {
// FULL: mpmd.yield %{{.*}} : tensor<2x8xf32>
// FULL: mpmd.fragment @s1.fwd {{.*}} -> tensor<f32> {
// FULL: mpmd.fragment @s1.bwd stage 1 chunk 0 kind bwd (%[[W2:.*]]: tensor<8x4xf32> {mpmd.param = @w2}, %[[G:.*]]: tensor<2x8xf32>)
// FULL-NEXT: %[[Y:.*]] = nn.matmul %[[G]], %[[W2]] {mpmd.remat, nn.id = 9 : i64}
// FULL-NEXT: nn.tanh %[[Y]] {mpmd.remat, nn.id = 10 : i64}
// FULL-NOT: mpmd.remat
// FULL: mpmd.fragment @s0.bwd stage 0 chunk 0 kind bwd (%{{.*}}: tensor<2x8xf32>, %[[W1:.*]]: tensor<8x8xf32> {mpmd.param = @w1}, %[[X:.*]]: tensor<2x4xf32> {mpmd.input = 0 : i64}, %[[W0:.*]]: tensor<4x8xf32> {mpmd.param = @w0})
// FULL-NEXT: %[[Z:.*]] = nn.matmul %[[X]], %[[W0]] {mpmd.remat, nn.id = 1 : i64}
// FULL-NEXT: %[[A:.*]] = nn.tanh %[[Z]] {mpmd.remat, nn.id = 2 : i64}
// FULL-NEXT: %[[S:.*]] = nn.softmax %[[A]] {axis = 1 : i64, mpmd.remat, nn.id = 3 : i64}
// FULL-NEXT: nn.matmul %[[S]], %[[W1]] {mpmd.remat, nn.id = 5 : i64}
// FULL-NOT: mpmd.remat
// The stage output reaches @s1.bwd as its input (no second message: the
// slot is sent once per rank); no stash transfer is left.
// FULL: mpmd.transfer @s0.fwd[0] -> @s1.fwd[0]
// FULL-NEXT: mpmd.transfer @s0.fwd[0] -> @s1.bwd[1]
// FULL-NOT: mpmd.transfer @s0.fwd[{{[1-9]}}]
// FULL-NOT: mpmd.transfer @s1.fwd[0] -> @s1.bwd
// FULL: mpmd.rank 1
// FULL: mpmd.recv @s0.fwd[0] microbatch 0
// FULL-NOT: mpmd.recv @s0.fwd[0] microbatch 0
// FULL: mpmd.run @s1.step0

// FULL-REMARK: remark: mpmd-remat policy=full: stash 0 bytes per microbatch (was 192) besides the stage inputs; recompute 576 FLOPs per microbatch; @s0.bwd keeps [] recomputes 4 ops
// FULL-REMARK: remark: mpmd-remat policy=full: stash 0 bytes per microbatch (was 32) besides the stage inputs; recompute 160 FLOPs per microbatch; @s1.bwd keeps [] recomputes 2 ops

// selective: the matmuls and the softmax are kept, each tanh recomputed
// from the kept matmul output before it.
// SEL: mpmd.fragment @s0.fwd
// SEL: mpmd.yield %[[S:.*]], %[[H:.*]], %[[OUT:.*]], %[[Z:.*]] : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
// SEL: mpmd.fragment @s1.bwd
// SEL-NEXT: nn.tanh %{{.*}} {mpmd.remat, nn.id = 10 : i64}
// SEL-NOT: mpmd.remat
// SEL: mpmd.fragment @s0.bwd stage 0 chunk 0 kind bwd (%{{.*}}: tensor<2x8xf32>, %{{.*}}: tensor<2x8xf32>, %{{.*}}: tensor<8x8xf32> {mpmd.param = @w1}, %{{.*}}: tensor<2x8xf32>, %{{.*}}: tensor<2x4xf32> {mpmd.input = 0 : i64}, %[[ZARG:.*]]: tensor<2x8xf32>)
// SEL-NEXT: nn.tanh %[[ZARG]] {mpmd.remat, nn.id = 2 : i64}
// SEL-NOT: mpmd.remat
// SEL: mpmd.transfer @s0.fwd[3] -> @s0.bwd[5]
// SEL-REMARK: stash 192 bytes per microbatch (was 192) besides the stage inputs; recompute 64 FLOPs per microbatch; @s0.bwd keeps [nn.matmul, nn.softmax, nn.matmul] recomputes 1 ops
// SEL-REMARK: stash 32 bytes per microbatch (was 32) besides the stage inputs; recompute 32 FLOPs per microbatch; @s1.bwd keeps [nn.matmul] recomputes 1 ops

// budget=2000: recomputing everything peaks at 1804 bytes on rank 0 and
// keeping everything at 2048 (mpmd-memory). Keeping a and h (128 bytes a
// microbatch, 2 in flight) and recomputing s = softmax(a) (128 FLOPs) is
// the cheapest choice that fits: 1984 bytes. Stage 1 fits as it is.
// BUDGET: mpmd.fragment @s0.bwd stage 0 chunk 0 kind bwd
// BUDGET-NEXT: nn.softmax %{{.*}} {axis = 1 : i64, mpmd.remat, nn.id = 3 : i64}
// BUDGET-NOT: mpmd.remat
// BUDGET-REMARK: remark: mpmd-remat policy=budget: stash 128 bytes per microbatch (was 192) besides the stage inputs; recompute 128 FLOPs per microbatch; @s0.bwd keeps [nn.tanh, nn.matmul] recomputes 1 ops; predicted peak of stage 0: 1984 bytes (budget 2000)
// BUDGET-REMARK: remark: mpmd-remat policy=budget: stash 32 bytes per microbatch (was 32) besides the stage inputs; recompute 0 FLOPs per microbatch; @s1.bwd keeps [nn.tanh] recomputes 0 ops; predicted peak of stage 1: 648 bytes (budget 2000)
// BUDGET-REMARK: remark: rank 0: peak 1984 bytes
// BUDGET-REMARK: remark: rank 1: peak 648 bytes

// zb-h1: bwd_input and bwd_weight each recompute what they read; W's
// inputs are the stage's own inputs, alive when W runs.
// ZB: mpmd.fragment @s1.bwd_input
// ZB-NEXT: nn.matmul {{.*}}mpmd.remat
// ZB-NEXT: nn.tanh {{.*}}mpmd.remat
// ZB: mpmd.fragment @s1.bwd_weight
// ZB-NOT: mpmd.remat
// ZB: mpmd.fragment @s0.bwd_input
// ZB-NEXT: nn.matmul {{.*}}mpmd.remat
// ZB-NEXT: nn.tanh {{.*}}mpmd.remat
// ZB-NEXT: nn.softmax {{.*}}mpmd.remat
// ZB-NEXT: nn.matmul {{.*}}mpmd.remat
// ZB: mpmd.fragment @s0.bwd_weight stage 0 chunk 0 kind bwd_weight (%{{.*}}: tensor<2x8xf32>, %[[X:.*]]: tensor<2x4xf32> {mpmd.input = 0 : i64}, %{{.*}}: tensor<2x8xf32>, %[[W0:.*]]: tensor<4x8xf32> {mpmd.param = @w0})
// ZB-NEXT: nn.matmul %[[X]], %[[W0]] {mpmd.remat
// ZB-NEXT: nn.tanh {{.*}}mpmd.remat
// ZB-NEXT: nn.softmax {{.*}}mpmd.remat
// ZB-NOT: mpmd.remat
// ZB-NOT: mpmd.transfer @s0.fwd[{{[1-9]}}]

// CHUNKS: mpmd.fragment @s0.c1.bwd stage 0 chunk 1 kind bwd (%{{.*}}: tensor<8x4xf32> {mpmd.param = @w2}, %[[IN:.*]]: tensor<2x8xf32>)
// CHUNKS-NEXT: nn.matmul %[[IN]], {{.*}}mpmd.remat
// CHUNKS: mpmd.transfer @s0.c0.fwd[0] -> @s0.c1.fwd[0]
// CHUNKS-NEXT: mpmd.transfer @s0.c0.fwd[0] -> @s0.c1.bwd[1]

nn.parameter @w0 : tensor<4x8xf32> = normal(0.1)
nn.parameter @w1 : tensor<8x8xf32> = normal(0.1)
nn.parameter @w2 : tensor<8x4xf32> = normal(0.1)
func.func @forward(%x: tensor<2x4xf32>) -> tensor<f32> {
  %w0 = nn.param @w0 : tensor<4x8xf32>
  %z = nn.matmul %x, %w0 : tensor<2x4xf32>, tensor<4x8xf32> -> tensor<2x8xf32>
  %a = nn.tanh %z : tensor<2x8xf32>
  %s = nn.softmax %a {axis = 1 : i64} : tensor<2x8xf32>
  %w1 = nn.param @w1 : tensor<8x8xf32>
  %h = nn.matmul %s, %w1 : tensor<2x8xf32>, tensor<8x8xf32> -> tensor<2x8xf32>
  %g = nn.gelu %h : tensor<2x8xf32>
  %e = nn.stage_end %g : tensor<2x8xf32>
  %w2 = nn.param @w2 : tensor<8x4xf32>
  %y = nn.matmul %e, %w2 : tensor<2x8xf32>, tensor<8x4xf32> -> tensor<2x4xf32>
  %t = nn.tanh %y : tensor<2x4xf32>
  %yy = nn.mul %t, %t : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %l = nn.reduce_sum %yy [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
