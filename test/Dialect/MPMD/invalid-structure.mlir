// RUN: tandem-opt %s -split-input-file -verify-diagnostics

// Diagnostics of mpmd.program and mpmd.rank: the grid, what the bodies hold.

// grid sizes are positive

// expected-error@+1 {{'mpmd.program' op expected stages >= 1, found 0}}
mpmd.program @p stages 0 chunks 1 replicas 1 microbatches 1 {
}

// -----

// microbatches too

// expected-error@+1 {{'mpmd.program' op expected microbatches >= 1, found -1}}
mpmd.program @p stages 1 chunks 1 replicas 1 microbatches -1 {
}

// -----

// only fragments, transfers and ranks

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  // expected-error@+1 {{'nn.constant' op is not allowed in an mpmd.program (expected mpmd.fragment, mpmd.transfer or mpmd.rank)}}
  %c = nn.constant dense<0.0> : tensor<4xf32>
}

// -----

// one action list per rank

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.rank 0 {
  }
  // expected-error@+1 {{'mpmd.rank' op duplicate action list for rank 0 (expected one mpmd.rank per rank)}}
  mpmd.rank 0 {
  }
}

// -----

// the program lives in a module

func.func @f() {
  // expected-error@+1 {{'mpmd.program' op expects parent op 'builtin.module'}}
  mpmd.program @p stages 1 chunks 1 replicas 1 microbatches 1 {
  }
  return
}

// -----

// rank within the grid

mpmd.program @p stages 2 chunks 1 replicas 2 microbatches 1 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  // expected-error@+1 {{'mpmd.rank' op expected a rank in [0, 4) (stages 2 x replicas 2), found 4}}
  mpmd.rank 4 {
  }
}

// -----

// rank bodies hold actions only

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.rank 0 {
    // expected-error@+1 {{'nn.constant' op is not an action (expected mpmd.run, mpmd.send, mpmd.recv, mpmd.all_reduce or mpmd.broadcast in an mpmd.rank)}}
    %c = nn.constant dense<0.0> : tensor<4xf32>
  }
}

// -----

// actions live in rank lists

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  // expected-error@+1 {{'mpmd.run' op expects parent op 'mpmd.rank'}}
  mpmd.run @f0 microbatch 0
}
