// Every mpmd-schedule diagnostic. Program-level cases are the split inputs
// below (verify-diagnostics); schedule and table cases use Inputs/.

// RUN: tandem-opt %s --split-input-file --verify-diagnostics --mpmd-schedule=schedule=1f1b

// RUN: not tandem-opt %S/Inputs/chain-2x1.mlir --mpmd-schedule=schedule=pipedream 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: 'mpmd.program' op unknown schedule 'pipedream': expected gpipe, 1f1b, interleaved-1f1b, zb-h1 or a schedule table file (cannot read it:

// RUN: sed 's/microbatches 4/microbatches 3/' %S/Inputs/chain-2x2.mlir | not tandem-opt --mpmd-schedule=schedule=interleaved-1f1b 2>&1 | FileCheck %s --check-prefix=DIVIS
// DIVIS: error: 'mpmd.program' op cannot use schedule 'interleaved-1f1b' for stages 2 chunks 2 microbatches 3: interleaved-1f1b: the microbatch count (3) must be a multiple of the rank count (2)

// RUN: not tandem-opt %S/Inputs/chain-2x2.mlir --mpmd-schedule=schedule=1f1b 2>&1 | FileCheck %s --check-prefix=CHUNKS
// CHUNKS: error: 'mpmd.program' op cannot use schedule '1f1b' for stages 2 chunks 2 microbatches 4: 1f1b: runs one chunk per rank

// RUN: not tandem-opt %S/Inputs/chain-2x1.mlir --mpmd-schedule=schedule=zb-h1 2>&1 | FileCheck %s --check-prefix=ZBH1
// ZBH1: error: 'mpmd.program' op schedule 'zb-h1' needs a bwd_input fragment on stage 0 chunk 0 (its backward is split into BI and BW), found none

// RUN: sed 's/microbatches 4/microbatches 2/' %S/Inputs/chain-2x1.mlir | not tandem-opt --mpmd-schedule=schedule=%S/Inputs/bad-token.sched 2>&1 | FileCheck %s --check-prefix=PARSE
// PARSE: error: 'mpmd.program' op cannot read schedule table: {{.*}}bad-token.sched:3:14: error: unknown action 'Q1.0'

// RUN: not tandem-opt %S/Inputs/chain-4x1.mlir --mpmd-schedule=schedule=%S/Inputs/user-2x1.sched 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: error: 'mpmd.program' op schedule table '{{.*}}user-2x1.sched' has ranks=2 chunks=1 microbatches=2, expected the program's ranks=4 chunks=1 microbatches=4

// RUN: sed 's/microbatches 4/microbatches 2/' %S/Inputs/chain-2x1.mlir | not tandem-opt --mpmd-schedule=schedule=%S/Inputs/explicit-transfers.sched 2>&1 | FileCheck %s --check-prefix=EXPLICIT
// EXPLICIT: error: 'mpmd.program' op schedule table '{{.*}}explicit-transfers.sched' has SEND/RECV actions; mpmd-schedule orders computation only (mpmd-lower-transfers places the communication)

// RUN: sed 's/microbatches 4/microbatches 2/' %S/Inputs/chain-2x1.mlir | not tandem-opt --mpmd-schedule=schedule=%S/Inputs/wrong-order.sched 2>&1 | FileCheck %s --check-prefix=ORDER
// ORDER: error: 'mpmd.program' op invalid schedule '{{.*}}wrong-order.sched': rank 0: action 2 (B0.1): accumulates stage 0's weight gradient out of microbatch order

nn.parameter @w : tensor<4xf32> = zeros

// expected-error @+1 {{already has rank action lists; mpmd-schedule fills a program without them}}
mpmd.program @scheduled stages 1 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @f stage 0 chunk 0 kind fwd (%w: tensor<4xf32> {mpmd.param = @w}) -> (tensor<4xf32>) {
    mpmd.yield %w : tensor<4xf32>
  }
  mpmd.fragment @b stage 0 chunk 0 kind bwd (%w: tensor<4xf32> {mpmd.param = @w}) -> (tensor<4xf32>) {
    mpmd.yield %w : tensor<4xf32>
  }
  mpmd.rank 0 {
    mpmd.run @f microbatch 0
    mpmd.run @b microbatch 0
  }
}

// -----

nn.parameter @w : tensor<4xf32> = zeros

// expected-error @+1 {{schedule '1f1b' needs a fwd fragment on stage 1 chunk 0, found none}}
mpmd.program @no_fwd stages 2 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%w: tensor<4xf32> {mpmd.param = @w}) -> (tensor<4xf32>) {
    mpmd.yield %w : tensor<4xf32>
  }
  mpmd.fragment @b0 stage 0 chunk 0 kind bwd (%w: tensor<4xf32> {mpmd.param = @w}) -> (tensor<4xf32>) {
    mpmd.yield %w : tensor<4xf32>
  }
  mpmd.fragment @b1 stage 1 chunk 0 kind bwd (%w: tensor<4xf32> {mpmd.param = @w}) -> (tensor<4xf32>) {
    mpmd.yield %w : tensor<4xf32>
  }
}

// -----

nn.parameter @w : tensor<4xf32> = zeros

// expected-error @+1 {{schedule '1f1b' needs a bwd fragment on stage 0 chunk 0 (or bwd_input and bwd_weight fragments), found none}}
mpmd.program @no_bwd stages 1 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f stage 0 chunk 0 kind fwd (%w: tensor<4xf32> {mpmd.param = @w}) -> (tensor<4xf32>) {
    mpmd.yield %w : tensor<4xf32>
  }
  // Only half of a split backward.
  mpmd.fragment @bi stage 0 chunk 0 kind bwd_input (%w: tensor<4xf32> {mpmd.param = @w}) -> (tensor<4xf32>) {
    mpmd.yield %w : tensor<4xf32>
  }
}

// -----

nn.parameter @w : tensor<4xf32> = zeros

mpmd.program @twice stages 1 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @f stage 0 chunk 0 kind fwd (%w: tensor<4xf32> {mpmd.param = @w}) -> (tensor<4xf32>) {
    mpmd.yield %w : tensor<4xf32>
  }
  // expected-error @+1 {{is a second fwd fragment on stage 0 chunk 0 (first: @f); mpmd-schedule needs one per (stage, chunk, kind)}}
  mpmd.fragment @g stage 0 chunk 0 kind fwd (%w: tensor<4xf32> {mpmd.param = @w}) -> (tensor<4xf32>) {
    mpmd.yield %w : tensor<4xf32>
  }
}
