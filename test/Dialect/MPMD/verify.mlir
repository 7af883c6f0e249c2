// RUN: tandem-opt %s -split-input-file --mpmd-verify -verify-diagnostics | FileCheck %s
// RUN: tandem-opt %S/example-2stage.mlir --mpmd-verify | FileCheck %S/example-2stage.mlir

// Programs that mpmd-verify accepts; the pass leaves them unchanged. The
// second RUN line checks the hand-written 2-stage 1F1B example.

// A send and a recv posted as one group on both ranks: neither blocks the
// other, although each rank sends first.

// CHECK-LABEL: mpmd.program @exchange
mpmd.program @exchange stages 2 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @a stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @b stage 1 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 1 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @a2 stage 0 chunk 0 kind bwd (%y: tensor<4xf32>) -> tensor<4xf32> {
    mpmd.yield %y : tensor<4xf32>
  }
  mpmd.fragment @b2 stage 1 chunk 0 kind bwd (%y: tensor<4xf32>) -> tensor<4xf32> {
    mpmd.yield %y : tensor<4xf32>
  }
  mpmd.transfer @b[0] -> @a2[0] : tensor<4xf32>
  mpmd.transfer @a[0] -> @b2[0] : tensor<4xf32>
  mpmd.rank 0 {
    mpmd.run @a microbatch 0
    mpmd.send @a[0] microbatch 0 to 1 channel 0 : tensor<4xf32> wire f32
    mpmd.recv @b[0] microbatch 0 from 1 channel 1 : tensor<4xf32> wire f32
    mpmd.run @a2 microbatch 0
  }
  mpmd.rank 1 {
    mpmd.run @b microbatch 0
    mpmd.send @b[0] microbatch 0 to 0 channel 1 : tensor<4xf32> wire f32
    mpmd.recv @a[0] microbatch 0 from 0 channel 0 : tensor<4xf32> wire f32
    mpmd.run @b2 microbatch 0
  }
}

// -----

// Collectives: a broadcast delivers a once-per-step value that every
// microbatch of stage 1 reads; per-microbatch values are summed into the
// optimizer (all microbatches must be held); an all-reduce in which each
// member names its own contribution; a compressed wire type on both ends.

// CHECK-LABEL: mpmd.program @collectives
mpmd.program @collectives stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @pro stage 0 chunk 0 kind step_prologue () -> tensor<4xf32> {
    %c = nn.constant dense<1.0> : tensor<4xf32>
    mpmd.yield %c : tensor<4xf32>
  }
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%h: tensor<4xf32>, %s: tensor<4xf32>) -> tensor<4xf32> {
    mpmd.yield %h : tensor<4xf32>
  }
  mpmd.fragment @n0 stage 0 chunk 0 kind optimizer () -> tensor<f32> {
    %c = nn.constant dense<1.0> : tensor<f32>
    mpmd.yield %c : tensor<f32>
  }
  mpmd.fragment @opt1 stage 1 chunk 0 kind optimizer (%g: tensor<4xf32>) -> tensor<f32> {
    %c = nn.constant dense<1.0> : tensor<f32>
    mpmd.yield %c : tensor<f32>
  }
  mpmd.transfer @f0[0] -> @f1[0] : tensor<4xf32>
  mpmd.transfer @pro[0] -> @f1[1] : tensor<4xf32>
  mpmd.transfer @f1[0] -> @opt1[0] : tensor<4xf32>
  mpmd.rank 0 {
    mpmd.run @pro
    mpmd.broadcast @pro[0] root 0 group [0, 1] : tensor<4xf32>
    mpmd.run @f0 microbatch 0
    mpmd.send @f0[0] microbatch 0 to 1 channel 0 : tensor<4xf32> wire f32
    mpmd.run @f0 microbatch 1
    mpmd.send @f0[0] microbatch 1 to 1 channel 0 : tensor<4xf32> wire f32
    mpmd.run @n0
    mpmd.all_reduce sum @n0[0] group [0, 1] : tensor<f32>
  }
  mpmd.rank 1 {
    mpmd.broadcast @pro[0] root 0 group [0, 1] : tensor<4xf32>
    mpmd.recv @f0[0] microbatch 0 from 0 channel 0 : tensor<4xf32> wire f32
    mpmd.run @f1 microbatch 0
    mpmd.recv @f0[0] microbatch 1 from 0 channel 0 : tensor<4xf32> wire f32
    mpmd.run @f1 microbatch 1
    mpmd.run @opt1
    mpmd.all_reduce sum @opt1[0] group [0, 1] : tensor<f32>
  }
}

// -----

// Three stages: two channels between the same ranks match independently of
// each other, in posting order within each channel.

// CHECK-LABEL: mpmd.program @three
mpmd.program @three stages 3 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> (tensor<4xf32>, tensor<2xf32>) {
    %c = nn.constant dense<1.0> : tensor<2xf32>
    mpmd.yield %x, %c : tensor<4xf32>, tensor<2xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%h: tensor<4xf32>) -> tensor<4xf32> {
    mpmd.yield %h : tensor<4xf32>
  }
  mpmd.fragment @f2 stage 2 chunk 0 kind fwd (%h: tensor<4xf32>, %s: tensor<2xf32>) -> tensor<4xf32> {
    mpmd.yield %h : tensor<4xf32>
  }
  mpmd.transfer @f0[0] -> @f1[0] : tensor<4xf32>
  mpmd.transfer @f1[0] -> @f2[0] : tensor<4xf32>
  mpmd.transfer @f0[1] -> @f2[1] : tensor<2xf32>
  mpmd.rank 0 {
    mpmd.run @f0 microbatch 0
    mpmd.run @f0 microbatch 1
    mpmd.send @f0[1] microbatch 0 to 2 channel 5 : tensor<2xf32> wire f32
    mpmd.send @f0[0] microbatch 0 to 1 channel 0 : tensor<4xf32> wire f32
    mpmd.send @f0[1] microbatch 1 to 2 channel 5 : tensor<2xf32> wire f32
    mpmd.send @f0[0] microbatch 1 to 1 channel 0 : tensor<4xf32> wire f32
  }
  mpmd.rank 1 {
    mpmd.recv @f0[0] microbatch 0 from 0 channel 0 : tensor<4xf32> wire f32
    mpmd.run @f1 microbatch 0
    mpmd.send @f1[0] microbatch 0 to 2 channel 0 : tensor<4xf32> wire f32
    mpmd.recv @f0[0] microbatch 1 from 0 channel 0 : tensor<4xf32> wire f32
    mpmd.run @f1 microbatch 1
    mpmd.send @f1[0] microbatch 1 to 2 channel 0 : tensor<4xf32> wire f32
  }
  mpmd.rank 2 {
    mpmd.recv @f1[0] microbatch 0 from 1 channel 0 : tensor<4xf32> wire f32
    mpmd.recv @f0[1] microbatch 0 from 0 channel 5 : tensor<2xf32> wire f32
    mpmd.run @f2 microbatch 0
    mpmd.recv @f0[1] microbatch 1 from 0 channel 5 : tensor<2xf32> wire f32
    mpmd.recv @f1[0] microbatch 1 from 1 channel 0 : tensor<4xf32> wire f32
    mpmd.run @f2 microbatch 1
  }
}

// -----

// A program without action lists (not scheduled yet) has nothing to check.

// CHECK-LABEL: mpmd.program @unscheduled
mpmd.program @unscheduled stages 2 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @a stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
}
