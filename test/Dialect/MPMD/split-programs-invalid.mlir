// RUN: tandem-opt %s --split-input-file --verify-diagnostics --mpmd-split-programs

nn.parameter @w : tensor<4xf32> = zeros

// expected-error @+1 {{has no mpmd.rank action lists (expected a scheduled program: run mpmd-schedule and mpmd-lower-transfers before mpmd-split-programs)}}
mpmd.program @unscheduled stages 1 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @f stage 0 chunk 0 kind fwd (%w: tensor<4xf32> {mpmd.param = @w}) -> (tensor<4xf32>) {
    mpmd.yield %w : tensor<4xf32>
  }
}

// -----

nn.parameter @w : tensor<4xf32> = zeros

mpmd.program @unlowered stages 2 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%w: tensor<4xf32> {mpmd.param = @w}) -> (tensor<4xf32>) {
    mpmd.yield %w : tensor<4xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32>) -> (tensor<4xf32>) {
    mpmd.yield %x : tensor<4xf32>
  }
  // expected-error @+1 {{crosses from stage 0 to stage 1, but no rank of program @unlowered has an mpmd.send or mpmd.recv (expected explicit communication: run mpmd-lower-transfers before mpmd-split-programs)}}
  mpmd.transfer @f0[0] -> @f1[0] : tensor<4xf32>
  mpmd.rank 0 {
    mpmd.run @f0 microbatch 0
  }
  mpmd.rank 1 {
    mpmd.run @f1 microbatch 0
  }
}

// -----

nn.parameter @w : tensor<4xf32> = zeros

// expected-note @+1 {{@rank0 is defined here}}
module @rank0 {
}

// expected-error @+1 {{cannot split: the module already has a symbol @rank0 (expected the name free for rank 0's module)}}
mpmd.program @clash stages 1 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @f stage 0 chunk 0 kind fwd (%w: tensor<4xf32> {mpmd.param = @w}) -> (tensor<4xf32>) {
    mpmd.yield %w : tensor<4xf32>
  }
  mpmd.rank 0 {
    mpmd.run @f microbatch 0
  }
}
