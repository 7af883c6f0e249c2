// RUN: tandem-opt %s -split-input-file --nn-autodiff --nn-optimizer="optimizer=sgd lr=0.5" --mpmd-partition="stages=3 microbatches=2" | FileCheck %s
// RUN: tandem-opt %s -split-input-file --nn-autodiff --nn-optimizer="optimizer=sgd lr=0.5" --mpmd-partition="stages=3 microbatches=2 split-backward=true" | FileCheck %s --check-prefix=SPLIT
// RUN: tandem-opt %s -split-input-file --nn-autodiff --nn-optimizer="optimizer=sgd lr=0.5" --mpmd-partition="stages=1 microbatches=1" | FileCheck %s --check-prefix=ONE
// RUN: tandem-opt %s -split-input-file --nn-autodiff --nn-optimizer="optimizer=sgd lr=0.5" --mpmd-partition="stages=3 microbatches=2" --mpmd-schedule=schedule=1f1b --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: tandem-opt %s -split-input-file --nn-autodiff --nn-optimizer="optimizer=sgd lr=0.5" --mpmd-partition="stages=3 microbatches=3 split-backward=true" --mpmd-schedule=schedule=zb-h1 --mpmd-lower-transfers --mpmd-verify -o /dev/null

// A tied embedding over three stages. The embedding (stage 0) owns @wte;
// the LM head (stage 2) receives it once per step from stage 0's prologue.
// Each stage sums its own contribution to the gradient over microbatches
// (accumulating transfers into its step fragments), stage 2 sends its sum
// once, and the owner adds the two (the nn.grad_sum add), then averages.

// CHECK-LABEL: mpmd.program @pipeline stages 3 chunks 1 replicas 1 microbatches 2
// CHECK: mpmd.fragment @s0.prologue stage 0 chunk 0 kind step_prologue (%{{.*}}: tensor<6x4xf32> {mpmd.param = @wte}) -> tensor<6x4xf32>
// CHECK: mpmd.fragment @s0.fwd stage 0 chunk 0 kind fwd (%{{.*}}: tensor<6x4xf32> {mpmd.param = @wte}, %{{.*}}: tensor<2x3xi32> {mpmd.input = 0 : i64}) -> tensor<2x3x4xf32>
// CHECK-NEXT: nn.embedding
// CHECK-NEXT: nn.stage_end
// CHECK-NEXT: mpmd.yield
// CHECK: mpmd.fragment @s1.fwd stage 1 chunk 0 kind fwd (%{{.*}}: tensor<2x3x4xf32>, %{{.*}}: tensor<4x4xf32> {mpmd.param = @w}) -> tensor<2x3x4xf32>
// CHECK-NEXT: nn.matmul
// CHECK-NEXT: nn.stage_end
// CHECK-NEXT: mpmd.yield
// The LM head reads @wte through a transfer (no mpmd.param: stage 2 does not own it).
// CHECK: mpmd.fragment @s2.fwd stage 2 chunk 0 kind fwd (%{{.*}}: tensor<2x3x4xf32>, %{{.*}}: tensor<6x4xf32>, %{{.*}}: tensor<2x3xi32> {mpmd.input = 1 : i64}) -> (tensor<2x3x6xf32>, tensor<f32>)
// CHECK: mpmd.fragment @s2.bwd stage 2 chunk 0 kind bwd
// CHECK: nn.cross_entropy_grad
// CHECK: mpmd.fragment @s1.bwd stage 1 chunk 0 kind bwd
// CHECK: mpmd.fragment @s0.bwd stage 0 chunk 0 kind bwd
// CHECK: nn.embedding_grad
// @w: averaged and updated on its stage.
// CHECK: mpmd.fragment @s1.step0 stage 1 chunk 0 kind optimizer (%[[G:.*]]: tensor<4x4xf32>, %[[W:.*]]: tensor<4x4xf32> {mpmd.param = @w}) -> (tensor<4x4xf32> {mpmd.update = @w})
// CHECK-NEXT: %[[M:.*]] = nn.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[MEAN:.*]] = nn.div %[[G]], %[[M]]
// The loss: the mean over microbatches, on the stage that computes it.
// CHECK: mpmd.fragment @s2.step0 stage 2 chunk 0 kind step_epilogue (%[[HEADSUM:.*]]: tensor<6x4xf32>, %[[LOSSES:.*]]: tensor<f32>) -> (tensor<6x4xf32>, tensor<f32> {mpmd.output = 0 : i64})
// CHECK: %[[LOSS:.*]] = nn.div %[[LOSSES]]
// CHECK-NEXT: mpmd.yield %[[HEADSUM]], %[[LOSS]]
// CHECK: mpmd.fragment @s0.step1 stage 0 chunk 0 kind optimizer (%[[E:.*]]: tensor<6x4xf32>, %[[H:.*]]: tensor<6x4xf32>, %{{.*}}: tensor<6x4xf32> {mpmd.param = @wte}) -> (tensor<6x4xf32> {mpmd.update = @wte})
// CHECK-NEXT: %[[SUM:.*]] = nn.add %[[E]], %[[H]] {nn.grad = #nn.grad<W, of = 6>, nn.grad_sum}
// CHECK-NEXT: nn.constant dense<2.000000e+00>
// CHECK-NEXT: nn.div %[[SUM]]
// CHECK: mpmd.transfer @s0.fwd[0] -> @s1.fwd[0] : tensor<2x3x4xf32>
// CHECK: mpmd.transfer @s1.fwd[0] -> @s2.fwd[0] : tensor<2x3x4xf32>
// CHECK: mpmd.transfer @s0.prologue[0] -> @s2.fwd[1] : tensor<6x4xf32>
// CHECK: mpmd.transfer @s2.bwd[0] -> @s1.bwd[0] : tensor<2x3x4xf32>
// CHECK: mpmd.transfer @s0.bwd[0] -> @s0.step0[0] : tensor<6x4xf32>
// CHECK: mpmd.transfer @s1.bwd[1] -> @s1.step0[0] : tensor<4x4xf32>
// CHECK: mpmd.transfer @s2.bwd[1] -> @s2.step0[0] : tensor<6x4xf32>
// CHECK: mpmd.transfer @s2.fwd[1] -> @s2.step0[1] : tensor<f32>
// CHECK: mpmd.transfer @s0.step0[0] -> @s0.step1[0] : tensor<6x4xf32>
// CHECK: mpmd.transfer @s2.step0[0] -> @s0.step1[1] : tensor<6x4xf32>

// With the backward split, B ops (input gradients) and W ops (weight
// gradients) go to their own fragments; B feeds W on the same stage.
// SPLIT-LABEL: mpmd.program @pipeline
// SPLIT: mpmd.fragment @s2.bwd_input stage 2 chunk 0 kind bwd_input
// SPLIT-NOT: transpose_lhs
// SPLIT: mpmd.fragment @s2.bwd_weight stage 2 chunk 0 kind bwd_weight
// SPLIT: nn.matmul {{.*}}transpose_lhs
// SPLIT: mpmd.fragment @s1.bwd_input stage 1 chunk 0 kind bwd_input
// SPLIT: mpmd.fragment @s1.bwd_weight stage 1 chunk 0 kind bwd_weight
// SPLIT: mpmd.fragment @s0.bwd_input stage 0 chunk 0 kind bwd_input
// SPLIT: mpmd.fragment @s0.bwd_weight stage 0 chunk 0 kind bwd_weight
// SPLIT: nn.embedding_grad
// SPLIT: mpmd.transfer @s2.bwd_input[{{[0-9]+}}] -> @s2.bwd_weight[{{[0-9]+}}]

// One stage, one microbatch: no prologue, no transfer of parameters, no
// averaging; the markers stay in the one forward fragment.
// ONE-LABEL: mpmd.program @pipeline stages 1 chunks 1 replicas 1 microbatches 1
// ONE-NOT: step_prologue
// ONE: mpmd.fragment @s0.fwd stage 0 chunk 0 kind fwd
// ONE: nn.stage_end
// ONE: nn.stage_end
// ONE: mpmd.fragment @s0.bwd stage 0 chunk 0 kind bwd
// ONE-NOT: nn.div
// ONE: mpmd.fragment @s0.step0 stage 0 chunk 0 kind optimizer
// ONE-NOT: nn.div
// ONE: mpmd.transfer
nn.parameter @wte : tensor<6x4xf32> = normal(0.02)
nn.parameter @w : tensor<4x4xf32> = normal(0.1)
func.func @forward(%ids: tensor<2x3xi32>, %t: tensor<2x3xi32>) -> tensor<f32> {
  %wte = nn.param @wte : tensor<6x4xf32>
  %x = nn.embedding %wte, %ids : tensor<6x4xf32>, tensor<2x3xi32> -> tensor<2x3x4xf32>
  %x1 = nn.stage_end %x : tensor<2x3x4xf32>
  %w = nn.param @w : tensor<4x4xf32>
  %h = nn.matmul %x1, %w : tensor<2x3x4xf32>, tensor<4x4xf32> -> tensor<2x3x4xf32>
  %h1 = nn.stage_end %h : tensor<2x3x4xf32>
  %head = nn.param @wte : tensor<6x4xf32>
  %y = nn.matmul %h1, %head {transpose_rhs} : tensor<2x3x4xf32>, tensor<6x4xf32> -> tensor<2x3x6xf32>
  %l = nn.cross_entropy %y, %t : tensor<2x3x6xf32>, tensor<2x3xi32> -> tensor<f32>
  return %l : tensor<f32>
}
