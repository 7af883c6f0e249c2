// Every mpmd-remat diagnostic. The program is the two-stage function of
// remat.mlir, partitioned and scheduled unless a case needs otherwise.

// RUN: not tandem-opt %s --mpmd-remat=policy=bogus 2>&1 | FileCheck %s --check-prefix=POLICY
// POLICY: error: unknown remat policy 'bogus': expected none, full, selective, budget or annotated

// RUN: not tandem-opt %s --mpmd-remat=policy=budget 2>&1 | FileCheck %s --check-prefix=NOBUDGET
// NOBUDGET: error: policy=budget needs budget=<bytes>, the peak bytes each rank may hold

// RUN: not tandem-opt %s --mpmd-remat="policy=full budget=100" 2>&1 | FileCheck %s --check-prefix=STRAY
// STRAY: error: budget=100 is only read by policy=budget (policy is 'full')

// The budget's search chooses splits itself.
// RUN: not tandem-opt %s --mpmd-remat="policy=budget budget=100 recompute-splits=true" 2>&1 | FileCheck %s --check-prefix=SPLITS
// SPLITS: error: recompute-splits is not read by policy=budget (its search chooses every op)

// No program at all.
// RUN: not tandem-opt %s --mpmd-remat=policy=full 2>&1 | FileCheck %s --check-prefix=NOPROGRAM
// NOPROGRAM: error: mpmd-remat found no mpmd.program: run mpmd-partition and mpmd-schedule first

// Partitioned, not scheduled.
// RUN: not tandem-opt %s --nn-autodiff --mpmd-partition="function=forward_grad stages=2 microbatches=2" --mpmd-remat=policy=selective 2>&1 | FileCheck %s --check-prefix=UNSCHEDULED
// UNSCHEDULED: error: 'mpmd.program' op is not scheduled: mpmd-remat runs after mpmd-schedule

// Already lowered.
// RUN: not tandem-opt %s --nn-autodiff --mpmd-partition="function=forward_grad stages=2 microbatches=2" --mpmd-schedule --mpmd-lower-transfers --mpmd-remat=policy=full 2>&1 | FileCheck %s --check-prefix=LOWERED
// LOWERED: error: 'mpmd.send' op is already lowered: mpmd-remat runs before mpmd-lower-transfers

// A budget below what recomputing everything reaches states the minimum.
// RUN: not tandem-opt %s --nn-autodiff --mpmd-partition="function=forward_grad stages=2 microbatches=2" --mpmd-schedule --mpmd-remat="policy=budget budget=100" 2>&1 | FileCheck %s --check-prefix=TOOSMALL
// TOOSMALL: error: 'mpmd.program' op budget=100 bytes per rank is below what recomputing everything reaches: the minimum achievable peak is [[MIN:[0-9]+]] bytes (stage {{[01]}})

// policy=none accepts anything: it changes nothing.
// RUN: tandem-opt %s --mpmd-remat=policy=none | FileCheck %s --check-prefix=NONE
// NONE: func.func @forward

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
