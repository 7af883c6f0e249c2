// RUN: tandem-opt %s | tandem-opt | FileCheck %s
// RUN: tandem-opt %s --mlir-print-op-generic | tandem-opt | FileCheck %s
// Every mpmd op in its custom form: a program over 2 stages x 2 replicas,
// fragments of every kind, transfers, and action lists with every action.

nn.parameter @w0 : tensor<8x16xf32> = normal(0.02)
nn.parameter @w1 : tensor<16x4xf32> = normal(0.02)

// CHECK-LABEL: mpmd.program @step stages 2 chunks 2 replicas 2 microbatches 4 {
mpmd.program @step stages 2 chunks 2 replicas 2 microbatches 4 {
  // CHECK-NEXT: mpmd.fragment @s0.fwd stage 0 chunk 0 kind fwd (%[[X:.*]]: tensor<4x8xf32> {mpmd.input = 0 : i64}, %[[W:.*]]: tensor<8x16xf32> {mpmd.param = @w0}) -> tensor<4x16xf32> {
  // CHECK-NEXT: %[[H:.*]] = nn.matmul %[[X]], %[[W]] : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  // CHECK-NEXT: mpmd.yield %[[H]] : tensor<4x16xf32>
  // CHECK-NEXT: }
  mpmd.fragment @s0.fwd stage 0 chunk 0 kind fwd (%x: tensor<4x8xf32> {mpmd.input = 0 : i64}, %w: tensor<8x16xf32> {mpmd.param = @w0}) -> tensor<4x16xf32> {
    %h = nn.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
    mpmd.yield %h : tensor<4x16xf32>
  }
  // CHECK-NEXT: mpmd.fragment @s1.fwd stage 1 chunk 1 kind fwd (%{{.*}}: tensor<4x16xf32>, %{{.*}}: tensor<16x4xf32> {mpmd.param = @w1}) -> (tensor<4x4xf32>, tensor<f32>) attributes {tandem.note = "last"} {
  mpmd.fragment @s1.fwd stage 1 chunk 1 kind fwd (%h: tensor<4x16xf32>, %w: tensor<16x4xf32> {mpmd.param = @w1}) -> (tensor<4x4xf32>, tensor<f32>) attributes {tandem.note = "last"} {
    %y = nn.matmul %h, %w : tensor<4x16xf32>, tensor<16x4xf32> -> tensor<4x4xf32>
    %l = nn.reduce_sum %y [0, 1] : tensor<4x4xf32> -> tensor<f32>
    mpmd.yield %y, %l : tensor<4x4xf32>, tensor<f32>
  }
  // CHECK: mpmd.fragment @s1.bwd stage 1 chunk 1 kind bwd (%{{.*}}: tensor<4x4xf32>) -> tensor<4x4xf32> {
  mpmd.fragment @s1.bwd stage 1 chunk 1 kind bwd (%g: tensor<4x4xf32>) -> tensor<4x4xf32> {
    mpmd.yield %g : tensor<4x4xf32>
  }
  // CHECK: mpmd.fragment @s1.bwd_b stage 1 chunk 1 kind bwd_input (%{{.*}}: tensor<4x4xf32>) -> tensor<4x4xf32> {
  mpmd.fragment @s1.bwd_b stage 1 chunk 1 kind bwd_input (%g: tensor<4x4xf32>) -> tensor<4x4xf32> {
    mpmd.yield %g : tensor<4x4xf32>
  }
  // CHECK: mpmd.fragment @s1.bwd_w stage 1 chunk 1 kind bwd_weight (%{{.*}}: tensor<4x4xf32>) -> tensor<4x4xf32> {
  mpmd.fragment @s1.bwd_w stage 1 chunk 1 kind bwd_weight (%g: tensor<4x4xf32>) -> tensor<4x4xf32> {
    mpmd.yield %g : tensor<4x4xf32>
  }
  // CHECK: mpmd.fragment @s1.opt stage 1 chunk 1 kind optimizer (%{{.*}}: tensor<4x4xf32>) {
  // CHECK-NEXT: mpmd.yield{{$}}
  mpmd.fragment @s1.opt stage 1 chunk 1 kind optimizer (%g: tensor<4x4xf32>) {
    mpmd.yield
  }
  // CHECK: mpmd.fragment @s0.prologue stage 0 chunk 0 kind step_prologue () -> tensor<f32> {
  mpmd.fragment @s0.prologue stage 0 chunk 0 kind step_prologue () -> tensor<f32> {
    %c = nn.constant dense<1.0> : tensor<f32>
    mpmd.yield %c : tensor<f32>
  }
  // CHECK: mpmd.fragment @s0.epilogue stage 0 chunk 0 kind step_epilogue (%{{.*}}: tensor<f32>) -> tensor<f32> {
  mpmd.fragment @s0.epilogue stage 0 chunk 0 kind step_epilogue (%s: tensor<f32>) -> tensor<f32> {
    mpmd.yield %s : tensor<f32>
  }

  // CHECK: mpmd.transfer @s0.fwd[0] -> @s1.fwd[0] : tensor<4x16xf32>
  // CHECK-NEXT: mpmd.transfer @s1.fwd[0] -> @s1.bwd[0] : tensor<4x4xf32>
  // CHECK-NEXT: mpmd.transfer @s1.bwd[0] -> @s1.bwd_b[0] : tensor<4x4xf32>
  // CHECK-NEXT: mpmd.transfer @s1.bwd_b[0] -> @s1.bwd_w[0] : tensor<4x4xf32>
  // CHECK-NEXT: mpmd.transfer @s1.bwd_w[0] -> @s1.opt[0] : tensor<4x4xf32>
  // CHECK-NEXT: mpmd.transfer @s1.fwd[1] -> @s0.epilogue[0] {tandem.note = "loss"} : tensor<f32>
  mpmd.transfer @s0.fwd[0] -> @s1.fwd[0] : tensor<4x16xf32>
  mpmd.transfer @s1.fwd[0] -> @s1.bwd[0] : tensor<4x4xf32>
  mpmd.transfer @s1.bwd[0] -> @s1.bwd_b[0] : tensor<4x4xf32>
  mpmd.transfer @s1.bwd_b[0] -> @s1.bwd_w[0] : tensor<4x4xf32>
  mpmd.transfer @s1.bwd_w[0] -> @s1.opt[0] : tensor<4x4xf32>
  mpmd.transfer @s1.fwd[1] -> @s0.epilogue[0] {tandem.note = "loss"} : tensor<f32>

  // CHECK: mpmd.rank 0 {
  // CHECK-NEXT: mpmd.run @s0.prologue{{$}}
  // CHECK-NEXT: mpmd.run @s0.fwd microbatch 0{{$}}
  // CHECK-NEXT: mpmd.send @s0.fwd[0] microbatch 0 to 1 channel 0 : tensor<4x16xf32> wire f32
  // CHECK-NEXT: mpmd.broadcast @s0.prologue[0] root 0 group [0, 1, 2, 3] : tensor<f32>
  // CHECK-NEXT: mpmd.all_reduce sum @s0.epilogue[0] group [0, 1] : tensor<f32>
  // CHECK-NEXT: mpmd.all_reduce max @s0.fwd[0] microbatch 3 group [2, 0] : tensor<4x16xf32>
  // CHECK-NEXT: }
  mpmd.rank 0 {
    mpmd.run @s0.prologue
    mpmd.run @s0.fwd microbatch 0
    mpmd.send @s0.fwd[0] microbatch 0 to 1 channel 0 : tensor<4x16xf32> wire f32
    mpmd.broadcast @s0.prologue[0] root 0 group [0, 1, 2, 3] : tensor<f32>
    mpmd.all_reduce sum @s0.epilogue[0] group [0, 1] : tensor<f32>
    mpmd.all_reduce max @s0.fwd[0] microbatch 3 group [2, 0] : tensor<4x16xf32>
  }
  // CHECK: mpmd.rank 1 attributes {tandem.note = "stage 1"} {
  // CHECK-NEXT: mpmd.recv @s0.fwd[0] microbatch 0 from 0 channel 0 : tensor<4x16xf32> wire f32
  // CHECK-NEXT: mpmd.run @s1.fwd microbatch 0 {tandem.note = "F0"}
  // CHECK-NEXT: mpmd.run @s1.bwd_b microbatch 0
  // CHECK-NEXT: mpmd.run @s1.bwd_w microbatch 0
  // CHECK-NEXT: mpmd.run @s1.opt{{$}}
  // CHECK-NEXT: mpmd.send @s1.fwd[1] microbatch 2 to 3 channel 7 : tensor<f32> wire f32
  // CHECK-NEXT: mpmd.recv @s0.fwd[0] microbatch 1 from 2 channel 1 : tensor<4x16xf32> wire f32
  // CHECK-NEXT: }
  mpmd.rank 1 attributes {tandem.note = "stage 1"} {
    mpmd.recv @s0.fwd[0] microbatch 0 from 0 channel 0 : tensor<4x16xf32> wire f32
    mpmd.run @s1.fwd microbatch 0 {tandem.note = "F0"}
    mpmd.run @s1.bwd_b microbatch 0
    mpmd.run @s1.bwd_w microbatch 0
    mpmd.run @s1.opt
    mpmd.send @s1.fwd[1] microbatch 2 to 3 channel 7 : tensor<f32> wire f32
    mpmd.recv @s0.fwd[0] microbatch 1 from 2 channel 1 : tensor<4x16xf32> wire f32
  }
  // Replica 1's stage 0.
  // CHECK: mpmd.rank 2 {
  // CHECK-NEXT: mpmd.send @s0.fwd[0] microbatch 1 to 1 channel 1 : tensor<4x16xf32> wire f32
  // CHECK-NEXT: }
  mpmd.rank 2 {
    mpmd.send @s0.fwd[0] microbatch 1 to 1 channel 1 : tensor<4x16xf32> wire f32
  }
}

// A program with nothing scheduled yet, and an empty one.
// CHECK-LABEL: mpmd.program @empty stages 1 chunks 1 replicas 1 microbatches 1 {
// CHECK-NEXT: }
mpmd.program @empty stages 1 chunks 1 replicas 1 microbatches 1 {
}

// A rank's part after mpmd-split-programs: @f0 runs on another rank, so it
// is a declaration (no body, `mpmd.remote`) that the transfer and the recv
// name.
// CHECK-LABEL: mpmd.program @split stages 2 chunks 1 replicas 1 microbatches 1 {
// CHECK-NEXT: mpmd.fragment @f0 stage 0 chunk 0 kind fwd () -> (tensor<4x4xf32> {tandem.note = "h"}, tensor<f32>) attributes {mpmd.remote}{{$}}
// CHECK-NEXT: mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%{{.*}}: tensor<4x4xf32>) -> tensor<4x4xf32> {
// CHECK-NEXT: mpmd.yield
// CHECK-NEXT: }
// CHECK-NEXT: mpmd.transfer @f0[0] -> @f1[0] : tensor<4x4xf32>
// CHECK-NEXT: mpmd.rank 1 {
// CHECK-NEXT: mpmd.recv @f0[0] microbatch 0 from 0 channel 0 : tensor<4x4xf32> wire f32
// CHECK-NEXT: mpmd.run @f1 microbatch 0
mpmd.program @split stages 2 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd () -> (tensor<4x4xf32> {tandem.note = "h"}, tensor<f32>) attributes {mpmd.remote}
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
    mpmd.yield %x : tensor<4x4xf32>
  }
  mpmd.transfer @f0[0] -> @f1[0] : tensor<4x4xf32>
  mpmd.rank 1 {
    mpmd.recv @f0[0] microbatch 0 from 0 channel 0 : tensor<4x4xf32> wire f32
    mpmd.run @f1 microbatch 0
  }
}
