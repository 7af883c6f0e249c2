// RUN: tandem-opt %s --split-input-file --verify-diagnostics --mpmd-lower-transfers

nn.parameter @w : tensor<4xf32> = zeros

// expected-error @+1 {{has no rank action lists; run mpmd-schedule first}}
mpmd.program @unscheduled stages 1 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @f stage 0 chunk 0 kind fwd (%w: tensor<4xf32> {mpmd.param = @w}) -> (tensor<4xf32>) {
    mpmd.yield %w : tensor<4xf32>
  }
}

// -----

nn.parameter @w : tensor<4xf32> = zeros

// expected-error @+1 {{has no action list for rank 1; mpmd-lower-transfers needs one per rank}}
mpmd.program @missing_rank stages 2 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @f stage 0 chunk 0 kind fwd (%w: tensor<4xf32> {mpmd.param = @w}) -> (tensor<4xf32>) {
    mpmd.yield %w : tensor<4xf32>
  }
  mpmd.rank 0 {
    mpmd.run @f microbatch 0
  }
}

// -----

nn.parameter @w : tensor<4xf32> = zeros

mpmd.program @lowered stages 2 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%w: tensor<4xf32> {mpmd.param = @w}) -> (tensor<4xf32>) {
    mpmd.yield %w : tensor<4xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32>) -> (tensor<4xf32>) {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.transfer @f0[0] -> @f1[0] : tensor<4xf32>
  mpmd.rank 0 {
    mpmd.run @f0 microbatch 0
    // expected-error @+1 {{is explicit communication; mpmd-lower-transfers expects action lists with runs only (already lowered?)}}
    mpmd.send @f0[0] microbatch 0 to 1 channel 0 : tensor<4xf32> wire f32
  }
  mpmd.rank 1 {
    mpmd.recv @f0[0] microbatch 0 from 0 channel 0 : tensor<4xf32> wire f32
    mpmd.run @f1 microbatch 0
  }
}

// -----

nn.parameter @w : tensor<4xf32> = zeros

mpmd.program @twice stages 1 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @f stage 0 chunk 0 kind fwd (%w: tensor<4xf32> {mpmd.param = @w}) -> (tensor<4xf32>) {
    mpmd.yield %w : tensor<4xf32>
  }
  mpmd.rank 0 {
    mpmd.run @f microbatch 0
    // expected-error @+1 {{runs @f for the same microbatch twice on rank 0}}
    mpmd.run @f microbatch 0
  }
}

// -----

nn.parameter @w : tensor<4xf32> = zeros

mpmd.program @never_produced stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%w: tensor<4xf32> {mpmd.param = @w}) -> (tensor<4xf32>) {
    mpmd.yield %w : tensor<4xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32>) -> (tensor<4xf32>) {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.transfer @f0[0] -> @f1[0] : tensor<4xf32>
  mpmd.rank 0 {
    mpmd.run @f0 microbatch 0
  }
  mpmd.rank 1 {
    mpmd.run @f1 microbatch 0
    // expected-error @+1 {{reads @f0[0] microbatch 1, but rank 0 never runs @f0 for that microbatch}}
    mpmd.run @f1 microbatch 1
  }
}

// -----

nn.parameter @w : tensor<4xf32> = zeros

// Each rank first waits for the other's second fragment.
mpmd.program @cycle stages 2 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @a0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32>) -> (tensor<4xf32>) {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @a1 stage 0 chunk 0 kind bwd (%w: tensor<4xf32> {mpmd.param = @w}) -> (tensor<4xf32>) {
    mpmd.yield %w : tensor<4xf32>
  }
  mpmd.fragment @b0 stage 1 chunk 0 kind fwd (%x: tensor<4xf32>) -> (tensor<4xf32>) {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @b1 stage 1 chunk 0 kind bwd (%w: tensor<4xf32> {mpmd.param = @w}) -> (tensor<4xf32>) {
    mpmd.yield %w : tensor<4xf32>
  }
  mpmd.transfer @b1[0] -> @a0[0] : tensor<4xf32>
  mpmd.transfer @a1[0] -> @b0[0] : tensor<4xf32>
  mpmd.rank 0 {
    // expected-error @+1 {{waits for an input that is never produced: the action lists of ranks wait on each other in a cycle (rank 0)}}
    mpmd.run @a0 microbatch 0
    mpmd.run @a1 microbatch 0
  }
  mpmd.rank 1 {
    mpmd.run @b0 microbatch 0
    mpmd.run @b1 microbatch 0
  }
}
