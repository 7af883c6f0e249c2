// mpmd-lower-transfers: each message is exchanged where both ranks are
// between runs at or after the value arrives in a simulation of the lists
// (F, BI, BW one unit, B two), one global order of messages by that time
// (docs/mpmd.md).

// RUN: tandem-opt %s --mpmd-lower-transfers | FileCheck %s
// RUN: sed 's/microbatches 4/microbatches 2/' %S/Inputs/chain-2x1.mlir | tandem-opt --mpmd-schedule=schedule=1f1b --mpmd-lower-transfers | FileCheck %s --check-prefix=CHAIN

// Three stages, hand-written GPipe-like lists, m = 2. @f0's result goes to
// stage 1 and (a skip edge) stage 2: one message per receiving rank, one
// channel per (producer slot, consumer stage) in transfer order; the stash
// @f2[0] -> @b2[1] stays local; @b0 reads the step input only.

nn.parameter @w : tensor<4xf32> = zeros

mpmd.program @skip stages 3 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> (tensor<4xf32>) {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32>) -> (tensor<4xf32>) {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @f2 stage 2 chunk 0 kind fwd (%x: tensor<4xf32>, %s: tensor<4xf32>) -> (tensor<4xf32>) {
    %y = nn.add %x, %s : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    mpmd.yield %y : tensor<4xf32>
  }
  mpmd.fragment @b2 stage 2 chunk 0 kind bwd (%w: tensor<4xf32> {mpmd.param = @w}, %a: tensor<4xf32>) -> (tensor<4xf32>) {
    mpmd.yield %a : tensor<4xf32>
  }
  mpmd.fragment @b1 stage 1 chunk 0 kind bwd (%g: tensor<4xf32>) -> (tensor<4xf32>) {
    mpmd.yield %g : tensor<4xf32>
  }
  mpmd.fragment @b0 stage 0 chunk 0 kind bwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> (tensor<4xf32>) {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.transfer @f0[0] -> @f1[0] : tensor<4xf32>
  mpmd.transfer @f1[0] -> @f2[0] : tensor<4xf32>
  mpmd.transfer @f0[0] -> @f2[1] : tensor<4xf32>
  mpmd.transfer @f2[0] -> @b2[1] : tensor<4xf32>
  mpmd.transfer @b2[0] -> @b1[0] : tensor<4xf32>
  mpmd.rank 0 {
    mpmd.run @f0 microbatch 0
    mpmd.run @f0 microbatch 1
    mpmd.run @b0 microbatch 0
    mpmd.run @b0 microbatch 1
  }
  mpmd.rank 1 {
    mpmd.run @f1 microbatch 0
    mpmd.run @f1 microbatch 1
    mpmd.run @b1 microbatch 0
    mpmd.run @b1 microbatch 1
  }
  mpmd.rank 2 {
    mpmd.run @f2 microbatch 0
    mpmd.run @f2 microbatch 1
    mpmd.run @b2 microbatch 0
    mpmd.run @b2 microbatch 1
  }
}

// CHECK: mpmd.rank 0 {
// CHECK-NEXT: mpmd.run @f0 microbatch 0
// CHECK-NEXT: mpmd.send @f0[0] microbatch 0 to 1 channel 0 : tensor<4xf32> wire f32
// CHECK-NEXT: mpmd.send @f0[0] microbatch 0 to 2 channel 2 : tensor<4xf32> wire f32
// CHECK-NEXT: mpmd.run @f0 microbatch 1
// CHECK-NEXT: mpmd.send @f0[0] microbatch 1 to 1 channel 0 : tensor<4xf32> wire f32
// CHECK-NEXT: mpmd.send @f0[0] microbatch 1 to 2 channel 2 : tensor<4xf32> wire f32
// CHECK-NEXT: mpmd.run @b0 microbatch 0
// CHECK-NEXT: mpmd.run @b0 microbatch 1
// CHECK-NEXT: }
// CHECK: mpmd.rank 1 {
// CHECK-NEXT: mpmd.recv @f0[0] microbatch 0 from 0 channel 0 : tensor<4xf32> wire f32
// CHECK-NEXT: mpmd.run @f1 microbatch 0
// CHECK-NEXT: mpmd.recv @f0[0] microbatch 1 from 0 channel 0 : tensor<4xf32> wire f32
// CHECK-NEXT: mpmd.send @f1[0] microbatch 0 to 2 channel 1 : tensor<4xf32> wire f32
// CHECK-NEXT: mpmd.run @f1 microbatch 1
// CHECK-NEXT: mpmd.send @f1[0] microbatch 1 to 2 channel 1 : tensor<4xf32> wire f32
// CHECK-NEXT: mpmd.recv @b2[0] microbatch 0 from 2 channel 3 : tensor<4xf32> wire f32
// CHECK-NEXT: mpmd.run @b1 microbatch 0
// CHECK-NEXT: mpmd.recv @b2[0] microbatch 1 from 2 channel 3 : tensor<4xf32> wire f32
// CHECK-NEXT: mpmd.run @b1 microbatch 1
// CHECK-NEXT: }
// CHECK: mpmd.rank 2 {
// CHECK-NEXT: mpmd.recv @f0[0] microbatch 0 from 0 channel 2 : tensor<4xf32> wire f32
// CHECK-NEXT: mpmd.recv @f1[0] microbatch 0 from 1 channel 1 : tensor<4xf32> wire f32
// CHECK-NEXT: mpmd.recv @f0[0] microbatch 1 from 0 channel 2 : tensor<4xf32> wire f32
// CHECK-NEXT: mpmd.run @f2 microbatch 0
// CHECK-NEXT: mpmd.recv @f1[0] microbatch 1 from 1 channel 1 : tensor<4xf32> wire f32
// CHECK-NEXT: mpmd.run @f2 microbatch 1
// CHECK-NEXT: mpmd.run @b2 microbatch 0
// CHECK-NEXT: mpmd.send @b2[0] microbatch 0 to 1 channel 3 : tensor<4xf32> wire f32
// CHECK-NEXT: mpmd.run @b2 microbatch 1
// CHECK-NEXT: mpmd.send @b2[0] microbatch 1 to 1 channel 3 : tensor<4xf32> wire f32
// CHECK-NEXT: }

// The chain program, 1F1B, m = 2: the step prologue's value crosses once
// (channel 2); stage 1's per-microbatch weight gradient @b1[1] feeds stage
// 0's optimizer (channel 3) and is received as soon as it arrives, next to
// the input gradient @b1[0] of the same run, not right before @o0. Rank 1
// posts the receive of @f0[0] microbatch 1 (arriving at time 2) before
// @b1 microbatch 0 (time 2 to 4), so rank 0's send of it never waits for
// that backward; rank 0 then sends it before receiving @b1[0] microbatch 0
// (time 4), the order of their times.
// CHAIN: mpmd.rank 0 {
// CHAIN-NEXT: mpmd.run @pro{{$}}
// CHAIN-NEXT: mpmd.send @pro[0] to 1 channel 2 : tensor<4x4xf32> wire f32
// CHAIN-NEXT: mpmd.run @f0 microbatch 0
// CHAIN-NEXT: mpmd.send @f0[0] microbatch 0 to 1 channel 1 : tensor<4x4xf32> wire f32
// CHAIN-NEXT: mpmd.run @f0 microbatch 1
// CHAIN-NEXT: mpmd.send @f0[0] microbatch 1 to 1 channel 1 : tensor<4x4xf32> wire f32
// CHAIN-NEXT: mpmd.recv @b1[0] microbatch 0 from 1 channel 0 : tensor<4x4xf32> wire f32
// CHAIN-NEXT: mpmd.recv @b1[1] microbatch 0 from 1 channel 3 : tensor<4x4xf32> wire f32
// CHAIN-NEXT: mpmd.run @b0 microbatch 0
// CHAIN-NEXT: mpmd.recv @b1[0] microbatch 1 from 1 channel 0 : tensor<4x4xf32> wire f32
// CHAIN-NEXT: mpmd.recv @b1[1] microbatch 1 from 1 channel 3 : tensor<4x4xf32> wire f32
// CHAIN-NEXT: mpmd.run @b0 microbatch 1
// CHAIN-NEXT: mpmd.run @o0{{$}}
// CHAIN-NEXT: }
// CHAIN: mpmd.rank 1 {
// CHAIN-NEXT: mpmd.recv @pro[0] from 0 channel 2 : tensor<4x4xf32> wire f32
// CHAIN-NEXT: mpmd.recv @f0[0] microbatch 0 from 0 channel 1 : tensor<4x4xf32> wire f32
// CHAIN-NEXT: mpmd.run @f1 microbatch 0
// CHAIN-NEXT: mpmd.recv @f0[0] microbatch 1 from 0 channel 1 : tensor<4x4xf32> wire f32
// CHAIN-NEXT: mpmd.run @b1 microbatch 0
// CHAIN-NEXT: mpmd.send @b1[0] microbatch 0 to 0 channel 0 : tensor<4x4xf32> wire f32
// CHAIN-NEXT: mpmd.send @b1[1] microbatch 0 to 0 channel 3 : tensor<4x4xf32> wire f32
// CHAIN-NEXT: mpmd.run @f1 microbatch 1
// CHAIN-NEXT: mpmd.run @b1 microbatch 1
// CHAIN-NEXT: mpmd.send @b1[0] microbatch 1 to 0 channel 0 : tensor<4x4xf32> wire f32
// CHAIN-NEXT: mpmd.send @b1[1] microbatch 1 to 0 channel 3 : tensor<4x4xf32> wire f32
// CHAIN-NEXT: mpmd.run @o1{{$}}
// CHAIN-NEXT: mpmd.run @epi{{$}}
// CHAIN-NEXT: }
