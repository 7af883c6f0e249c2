// RUN: tandem-opt %s -split-input-file --mpmd-verify | FileCheck %s --check-prefix=TAGS
// RUN: tandem-opt %s -split-input-file --mpmd-verify=fifo-pairs=true -verify-diagnostics

// mpmd-verify{fifo-pairs=true}: a transport without tags (NCCL) pairs the
// k-th message rank a sends to rank b with the k-th receive b posts from a,
// whatever the channels. Programs that pair by channel (MPI's tags) but
// not in one order per rank pair are refused naming both ends; the same
// programs pass plain mpmd-verify (first RUN line).

// Two activations of one microbatch in one group: rank 0 sends channel 0
// then channel 1, rank 1 receives channel 1 then channel 0.

// TAGS-LABEL: mpmd.program @swapped
mpmd.program @swapped stages 2 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @a stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> (tensor<4xf32>, tensor<2xf32>) {
    %y = nn.constant dense<1.0> : tensor<2xf32>
    mpmd.yield %x, %y : tensor<4xf32>, tensor<2xf32>
  }
  mpmd.fragment @b stage 1 chunk 0 kind fwd (%x: tensor<4xf32>, %y: tensor<2xf32>) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.transfer @a[0] -> @b[0] : tensor<4xf32>
  mpmd.transfer @a[1] -> @b[1] : tensor<2xf32>
  mpmd.rank 0 {
    mpmd.run @a microbatch 0
    // expected-error@+1 {{messages out of order for a transport without tags (fifo-pairs, NCCL): rank 0's send #0 to rank 1 is @a[0] microbatch 0 on channel 0, but rank 1's receive #0 from rank 0 is @a[1] microbatch 0 on channel 1}}
    mpmd.send @a[0] microbatch 0 to 1 channel 0 : tensor<4xf32> wire f32
    mpmd.send @a[1] microbatch 0 to 1 channel 1 : tensor<2xf32> wire f32
  }
  mpmd.rank 1 {
    // expected-note@+1 {{rank 1's receive #0 from rank 0 is here}}
    mpmd.recv @a[1] microbatch 0 from 0 channel 1 : tensor<2xf32> wire f32
    mpmd.recv @a[0] microbatch 0 from 0 channel 0 : tensor<4xf32> wire f32
    mpmd.run @b microbatch 0
  }
}

// -----

// Across groups and microbatches: rank 0 sends microbatch 0 then 1 on
// channel 0 and a second result on channel 1 between them; rank 1 takes
// both microbatches of channel 0 first. Only the later positions differ,
// and each pair reports its first difference only.

// TAGS-LABEL: mpmd.program @later
mpmd.program @later stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @a stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> (tensor<4xf32>, tensor<2xf32>) {
    %y = nn.constant dense<1.0> : tensor<2xf32>
    mpmd.yield %x, %y : tensor<4xf32>, tensor<2xf32>
  }
  mpmd.fragment @b stage 1 chunk 0 kind fwd (%x: tensor<4xf32>, %y: tensor<2xf32>) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.transfer @a[0] -> @b[0] : tensor<4xf32>
  mpmd.transfer @a[1] -> @b[1] : tensor<2xf32>
  mpmd.rank 0 {
    mpmd.run @a microbatch 0
    mpmd.run @a microbatch 1
    mpmd.send @a[0] microbatch 0 to 1 channel 0 : tensor<4xf32> wire f32
    // expected-error@+1 {{rank 0's send #1 to rank 1 is @a[1] microbatch 0 on channel 1, but rank 1's receive #1 from rank 0 is @a[0] microbatch 1 on channel 0}}
    mpmd.send @a[1] microbatch 0 to 1 channel 1 : tensor<2xf32> wire f32
    mpmd.send @a[0] microbatch 1 to 1 channel 0 : tensor<4xf32> wire f32
    mpmd.send @a[1] microbatch 1 to 1 channel 1 : tensor<2xf32> wire f32
  }
  mpmd.rank 1 {
    mpmd.recv @a[0] microbatch 0 from 0 channel 0 : tensor<4xf32> wire f32
    // expected-note@+1 {{rank 1's receive #1 from rank 0 is here}}
    mpmd.recv @a[0] microbatch 1 from 0 channel 0 : tensor<4xf32> wire f32
    mpmd.recv @a[1] microbatch 0 from 0 channel 1 : tensor<2xf32> wire f32
    mpmd.recv @a[1] microbatch 1 from 0 channel 1 : tensor<2xf32> wire f32
    mpmd.run @b microbatch 0
    mpmd.run @b microbatch 1
  }
}

// -----

// One order per pair, each direction on its own: rank 0 and rank 1 send
// to each other on several channels in one group, each pair in the same
// order at both ends. Accepted.

mpmd.program @agreed stages 2 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @a stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> (tensor<4xf32>, tensor<2xf32>) {
    %y = nn.constant dense<1.0> : tensor<2xf32>
    mpmd.yield %x, %y : tensor<4xf32>, tensor<2xf32>
  }
  mpmd.fragment @b stage 1 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 1 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @a2 stage 0 chunk 0 kind bwd (%x: tensor<4xf32>) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @b2 stage 1 chunk 0 kind bwd (%x: tensor<4xf32>, %y: tensor<2xf32>) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.transfer @a[0] -> @b2[0] : tensor<4xf32>
  mpmd.transfer @a[1] -> @b2[1] : tensor<2xf32>
  mpmd.transfer @b[0] -> @a2[0] : tensor<4xf32>
  mpmd.rank 0 {
    mpmd.run @a microbatch 0
    mpmd.send @a[1] microbatch 0 to 1 channel 1 : tensor<2xf32> wire f32
    mpmd.recv @b[0] microbatch 0 from 1 channel 2 : tensor<4xf32> wire f32
    mpmd.send @a[0] microbatch 0 to 1 channel 0 : tensor<4xf32> wire f32
    mpmd.run @a2 microbatch 0
  }
  mpmd.rank 1 {
    mpmd.run @b microbatch 0
    mpmd.recv @a[1] microbatch 0 from 0 channel 1 : tensor<2xf32> wire f32
    mpmd.send @b[0] microbatch 0 to 0 channel 2 : tensor<4xf32> wire f32
    mpmd.recv @a[0] microbatch 0 from 0 channel 0 : tensor<4xf32> wire f32
    mpmd.run @b2 microbatch 0
  }
}
