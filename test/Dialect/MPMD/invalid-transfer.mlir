// RUN: tandem-opt %s -split-input-file -verify-diagnostics

// Diagnostics of mpmd.transfer: endpoints, indices, types, one binding per argument.

// unknown source

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @g1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32>) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  // expected-error@+1 {{'mpmd.transfer' op @nope does not name an mpmd.fragment of program @p}}
  mpmd.transfer @nope[0] -> @g1[0] : tensor<4xf32>
  mpmd.transfer @f0[0] -> @g1[0] : tensor<4xf32>
}

// -----

// unknown destination

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @g1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32>) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  // expected-error@+1 {{'mpmd.transfer' op @nope does not name an mpmd.fragment of program @p}}
  mpmd.transfer @f0[0] -> @nope[0] : tensor<4xf32>
  mpmd.transfer @f0[0] -> @g1[0] : tensor<4xf32>
}

// -----

// result index in range

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @g1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32>) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  // expected-error@+1 {{'mpmd.transfer' op expected a result index in [0, 1) of fragment @f0, found 1}}
  mpmd.transfer @f0[1] -> @g1[0] : tensor<4xf32>
  mpmd.transfer @f0[0] -> @g1[0] : tensor<4xf32>
}

// -----

// argument index in range

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @g1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32>) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  // expected-error@+1 {{'mpmd.transfer' op expected an argument index in [0, 1) of fragment @g1, found 3}}
  mpmd.transfer @f0[0] -> @g1[3] : tensor<4xf32>
  mpmd.transfer @f0[0] -> @g1[0] : tensor<4xf32>
}

// -----

// non-negative indices

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @g1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32>) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  // expected-error@+1 {{'mpmd.transfer' op expected a non-negative result index, found -1}}
  mpmd.transfer @f0[-1] -> @g1[0] : tensor<4xf32>
  mpmd.transfer @f0[0] -> @g1[0] : tensor<4xf32>
}

// -----

// source type

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @g1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32>) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  // expected-error@+1 {{'mpmd.transfer' op type 'tensor<8xf32>' does not match result 0 of fragment @f0, 'tensor<4xf32>'}}
  mpmd.transfer @f0[0] -> @g1[0] : tensor<8xf32>
  mpmd.transfer @f0[0] -> @g1[0] : tensor<4xf32>
}

// -----

// no self edges

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @g1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32>) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  // expected-error@+1 {{'mpmd.transfer' op expected different source and destination fragments, found @g1 twice}}
  mpmd.transfer @g1[0] -> @g1[0] : tensor<4xf32>
  mpmd.transfer @f0[0] -> @g1[0] : tensor<4xf32>
}

// -----

// destination type

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @g1 stage 1 chunk 0 kind fwd (%x: tensor<8xf32>) -> tensor<8xf32> {
    mpmd.yield %x : tensor<8xf32>
  }
  // expected-error@+1 {{'mpmd.transfer' op type 'tensor<4xf32>' does not match argument 0 of fragment @g1, 'tensor<8xf32>'}}
  mpmd.transfer @f0[0] -> @g1[0] : tensor<4xf32>
}

// -----

// static type

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @g1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32>) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  // expected-error@+1 {{'mpmd.transfer' op attribute 'type' failed to satisfy constraint: type attribute of statically shaped tensor of any type values}}
  mpmd.transfer @f0[0] -> @g1[0] : tensor<?xf32>
}

// -----

// one incoming transfer per argument

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @h0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @g1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32>) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.transfer @f0[0] -> @g1[0] : tensor<4xf32>
  // expected-error@+1 {{'mpmd.transfer' op argument 0 of fragment @g1 already has an incoming transfer (expected one binding per argument)}}
  mpmd.transfer @h0[0] -> @g1[0] : tensor<4xf32>
}
