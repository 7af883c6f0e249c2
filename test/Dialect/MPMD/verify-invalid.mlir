// RUN: tandem-opt %s -split-input-file --mpmd-verify -verify-diagnostics

// Diagnostics of mpmd-verify: pairing, types, deadlocks, inputs before runs,
// collective order. Each program passes the local verifiers.

// A deadlock only under rendezvous semantics: both ranks send first, then run
// a local fragment, then receive. With buffered sends this would complete;
// with rendezvous sends each rank waits in its send for a recv the other has
// not posted, because the run separates each rank's send and recv into two
// groups.

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 1 {
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
  mpmd.fragment @local0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 2 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @local1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 2 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.transfer @b[0] -> @a2[0] : tensor<4xf32>
  mpmd.transfer @a[0] -> @b2[0] : tensor<4xf32>
  mpmd.rank 0 {
    mpmd.run @a microbatch 0
    // expected-error@+1 {{deadlock under rendezvous semantics: ranks 0, 1 can never progress; rank 0 waits at this send of @a[0] microbatch 0 to rank 1 (channel 0) for its matching recv, which rank 1 has not posted}}
    mpmd.send @a[0] microbatch 0 to 1 channel 0 : tensor<4xf32> wire f32
    mpmd.run @local0 microbatch 0
    mpmd.recv @b[0] microbatch 0 from 1 channel 1 : tensor<4xf32> wire f32
    mpmd.run @a2 microbatch 0
  }
  mpmd.rank 1 {
    mpmd.run @b microbatch 0
    // expected-note@+1 {{rank 1 waits at this send of @b[0] microbatch 0 to rank 0 (channel 1) for its matching recv, which rank 0 has not posted}}
    mpmd.send @b[0] microbatch 0 to 0 channel 1 : tensor<4xf32> wire f32
    mpmd.run @local1 microbatch 0
    mpmd.recv @a[0] microbatch 0 from 0 channel 0 : tensor<4xf32> wire f32
    mpmd.run @b2 microbatch 0
  }
}

// -----

// A send and its recv (paired by peer and channel, in order) disagree in
// shape.

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @a stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}, %y: tensor<8xf32> {mpmd.input = 1 : i64}) -> (tensor<4xf32>, tensor<8xf32>) {
    mpmd.yield %x, %y : tensor<4xf32>, tensor<8xf32>
  }
  mpmd.fragment @b stage 1 chunk 0 kind fwd (%y: tensor<8xf32>) -> tensor<8xf32> {
    mpmd.yield %y : tensor<8xf32>
  }
  mpmd.transfer @a[1] -> @b[0] : tensor<8xf32>
  mpmd.rank 0 {
    mpmd.run @a microbatch 0
    // expected-error@+1 {{type mismatch: rank 0 sends @a[0] microbatch 0 : tensor<4xf32> wire f32 to rank 1 on channel 0, but the matching recv on rank 1 expects @a[1] microbatch 0 : tensor<8xf32> wire f32}}
    mpmd.send @a[0] microbatch 0 to 1 channel 0 : tensor<4xf32> wire f32
  }
  mpmd.rank 1 {
    // expected-note@+1 {{the matching recv on rank 1}}
    mpmd.recv @a[1] microbatch 0 from 0 channel 0 : tensor<8xf32> wire f32
    mpmd.run @b microbatch 0
  }
}

// -----

// A send nobody receives.

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @a stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.rank 0 {
    mpmd.run @a microbatch 0
    mpmd.send @a[0] microbatch 0 to 1 channel 0 : tensor<4xf32> wire f32
    mpmd.run @a microbatch 1
    // expected-error@+1 {{unmatched send: rank 0 sends @a[0] microbatch 1 to rank 1 on channel 0, but rank 1 posts no matching recv from rank 0 on channel 0}}
    mpmd.send @a[0] microbatch 1 to 1 channel 0 : tensor<4xf32> wire f32
  }
  mpmd.rank 1 {
    mpmd.recv @a[0] microbatch 0 from 0 channel 0 : tensor<4xf32> wire f32
  }
}

// -----

// Wrong peer: rank 0 sends to rank 2 what rank 1 expects.

mpmd.program @p stages 3 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @a stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @b stage 1 chunk 0 kind fwd (%h: tensor<4xf32>) -> tensor<4xf32> {
    mpmd.yield %h : tensor<4xf32>
  }
  mpmd.transfer @a[0] -> @b[0] : tensor<4xf32>
  mpmd.rank 0 {
    mpmd.run @a microbatch 0
    // expected-error@+2 {{unmatched send: rank 0 sends @a[0] microbatch 0 to rank 2 on channel 0, but rank 2 posts no matching recv from rank 0 on channel 0}}
    // expected-note@+1 {{rank 0 sends @a[0] microbatch 0 to rank 2 on channel 0 here}}
    mpmd.send @a[0] microbatch 0 to 2 channel 0 : tensor<4xf32> wire f32
  }
  mpmd.rank 1 {
    // expected-error@+2 {{unmatched recv: rank 1 receives @a[0] microbatch 0 from rank 0 on channel 0, but rank 0 posts no matching send to rank 1 on channel 0}}
    // expected-note@+1 {{rank 1 receives @a[0] microbatch 0 from rank 0 on channel 0 here}}
    mpmd.recv @a[0] microbatch 0 from 0 channel 0 : tensor<4xf32> wire f32
    mpmd.run @b microbatch 0
  }
}

// -----

// A run before its input arrives: rank 1 runs @b before receiving its input.

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @a stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @b stage 1 chunk 0 kind fwd (%h: tensor<4xf32>) -> tensor<4xf32> {
    mpmd.yield %h : tensor<4xf32>
  }
  mpmd.transfer @a[0] -> @b[0] : tensor<4xf32>
  mpmd.rank 0 {
    mpmd.run @a microbatch 0
    mpmd.send @a[0] microbatch 0 to 1 channel 0 : tensor<4xf32> wire f32
  }
  mpmd.rank 1 {
    // expected-error@+1 {{run of @b microbatch 0 needs, as argument 0, @a[0] microbatch 0, which rank 1 does not hold at this point}}
    mpmd.run @b microbatch 0
    // expected-note@+1 {{rank 1 obtains @a[0] microbatch 0 only here, later}}
    mpmd.recv @a[0] microbatch 0 from 0 channel 0 : tensor<4xf32> wire f32
  }
}

// -----

// A run whose input is produced on another rank but never sent.

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @a stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @b stage 1 chunk 0 kind fwd (%h: tensor<4xf32>) -> tensor<4xf32> {
    mpmd.yield %h : tensor<4xf32>
  }
  mpmd.transfer @a[0] -> @b[0] : tensor<4xf32>
  mpmd.rank 0 {
    // expected-note@+1 {{produced here, on rank 0, and never received by rank 1}}
    mpmd.run @a microbatch 0
  }
  mpmd.rank 1 {
    // expected-error@+1 {{run of @b microbatch 0 needs, as argument 0, @a[0] microbatch 0, which rank 1 does not hold at this point}}
    mpmd.run @b microbatch 0
  }
}

// -----

// Gradient accumulation needs every microbatch's value: the optimizer runs
// before microbatch 1's backward.

mpmd.program @p stages 1 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @g stage 0 chunk 0 kind bwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @opt stage 0 chunk 0 kind optimizer (%g: tensor<4xf32>) -> tensor<4xf32> {
    mpmd.yield %g : tensor<4xf32>
  }
  mpmd.transfer @g[0] -> @opt[0] : tensor<4xf32>
  mpmd.rank 0 {
    mpmd.run @g microbatch 0
    // expected-error@+1 {{run of @opt needs, as argument 0, @g[0] microbatch 1, which rank 0 does not hold at this point}}
    mpmd.run @opt
    // expected-note@+1 {{rank 0 obtains @g[0] microbatch 1 only here, later}}
    mpmd.run @g microbatch 1
  }
}

// -----

// A send of a slot the sender never produced: its recv pairs, but nothing
// was there to send.

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @a stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.rank 0 {
    mpmd.run @a microbatch 0
    // expected-error@+2 {{send of @a[0] microbatch 1, which rank 0 does not hold at this point}}
    // expected-note@+1 {{no rank runs the producer @a for that microbatch}}
    mpmd.send @a[0] microbatch 1 to 1 channel 0 : tensor<4xf32> wire f32
  }
  mpmd.rank 1 {
    mpmd.recv @a[0] microbatch 1 from 0 channel 0 : tensor<4xf32> wire f32
  }
}

// -----

// Collectives entered in different orders.

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @n0 stage 0 chunk 0 kind optimizer () -> tensor<f32> {
    %c = nn.constant dense<1.0> : tensor<f32>
    mpmd.yield %c : tensor<f32>
  }
  mpmd.fragment @n1 stage 1 chunk 0 kind optimizer () -> tensor<f32> {
    %c = nn.constant dense<1.0> : tensor<f32>
    mpmd.yield %c : tensor<f32>
  }
  mpmd.rank 0 {
    mpmd.run @n0
    // expected-note@+1 {{rank 0's collective #0 over ranks {0, 1}}}
    mpmd.all_reduce sum @n0[0] group [0, 1] : tensor<f32>
    mpmd.broadcast @n0[0] root 0 group [0, 1] : tensor<f32>
  }
  mpmd.rank 1 {
    mpmd.run @n1
    // expected-error@+1 {{collective mismatch: rank 1 enters this mpmd.broadcast as its collective #0 over ranks {0, 1}, but rank 0's collective #0 differs in its kind}}
    mpmd.broadcast @n0[0] root 0 group [0, 1] : tensor<f32>
    mpmd.all_reduce sum @n1[0] group [0, 1] : tensor<f32>
  }
}

// -----

// An all-reduce whose members list the group in different orders (the
// reduction order would differ between ranks).

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @n0 stage 0 chunk 0 kind optimizer () -> tensor<f32> {
    %c = nn.constant dense<1.0> : tensor<f32>
    mpmd.yield %c : tensor<f32>
  }
  mpmd.fragment @n1 stage 1 chunk 0 kind optimizer () -> tensor<f32> {
    %c = nn.constant dense<1.0> : tensor<f32>
    mpmd.yield %c : tensor<f32>
  }
  mpmd.rank 0 {
    mpmd.run @n0
    // expected-note@+1 {{rank 0's collective #0 over ranks {0, 1}}}
    mpmd.all_reduce sum @n0[0] group [0, 1] : tensor<f32>
  }
  mpmd.rank 1 {
    mpmd.run @n1
    // expected-error@+1 {{collective mismatch: rank 1 enters this mpmd.all_reduce as its collective #0 over ranks {0, 1}, but rank 0's collective #0 differs in its group order}}
    mpmd.all_reduce sum @n1[0] group [1, 0] : tensor<f32>
  }
}

// -----

// A collective one member never enters.

mpmd.program @p stages 3 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @n0 stage 0 chunk 0 kind optimizer () -> tensor<f32> {
    %c = nn.constant dense<1.0> : tensor<f32>
    mpmd.yield %c : tensor<f32>
  }
  mpmd.fragment @n1 stage 1 chunk 0 kind optimizer () -> tensor<f32> {
    %c = nn.constant dense<1.0> : tensor<f32>
    mpmd.yield %c : tensor<f32>
  }
  mpmd.rank 0 {
    mpmd.run @n0
    // expected-error@+1 {{unmatched collective: rank 0 enters this mpmd.all_reduce as its collective #0 over ranks {0, 1, 2}, but rank 2 enters only 0 collectives over these ranks}}
    mpmd.all_reduce max @n0[0] group [0, 1, 2] : tensor<f32>
  }
  mpmd.rank 1 {
    mpmd.run @n1
    mpmd.all_reduce max @n1[0] group [0, 1, 2] : tensor<f32>
  }
}

// -----

// Collectives over different groups entered in crossing orders: each pair
// agrees on its own sequence, but the ranks wait on each other in a cycle.

mpmd.program @p stages 3 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @n0 stage 0 chunk 0 kind optimizer () -> tensor<f32> {
    %c = nn.constant dense<1.0> : tensor<f32>
    mpmd.yield %c : tensor<f32>
  }
  mpmd.fragment @n1 stage 1 chunk 0 kind optimizer () -> tensor<f32> {
    %c = nn.constant dense<1.0> : tensor<f32>
    mpmd.yield %c : tensor<f32>
  }
  mpmd.fragment @n2 stage 2 chunk 0 kind optimizer () -> tensor<f32> {
    %c = nn.constant dense<1.0> : tensor<f32>
    mpmd.yield %c : tensor<f32>
  }
  mpmd.rank 0 {
    mpmd.run @n0
    // expected-error@+1 {{deadlock under rendezvous semantics: ranks 0, 1, 2 can never progress; rank 0 waits at this mpmd.all_reduce for rank 1 to reach the same collective}}
    mpmd.all_reduce sum @n0[0] group [0, 1] : tensor<f32>
    mpmd.all_reduce sum @n0[0] group [0, 2] : tensor<f32>
  }
  mpmd.rank 1 {
    mpmd.run @n1
    // expected-note@+1 {{rank 1 waits at this mpmd.all_reduce for rank 2 to reach the same collective}}
    mpmd.all_reduce sum @n1[0] group [1, 2] : tensor<f32>
    mpmd.all_reduce sum @n1[0] group [0, 1] : tensor<f32>
  }
  mpmd.rank 2 {
    mpmd.run @n2
    // expected-note@+1 {{rank 2 waits at this mpmd.all_reduce for rank 0 to reach the same collective}}
    mpmd.all_reduce sum @n2[0] group [0, 2] : tensor<f32>
    mpmd.all_reduce sum @n2[0] group [1, 2] : tensor<f32>
  }
}
