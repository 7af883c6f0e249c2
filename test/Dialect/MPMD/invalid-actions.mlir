// RUN: tandem-opt %s -split-input-file -verify-diagnostics

// Diagnostics of the actions: mpmd.run, mpmd.send, mpmd.recv, mpmd.all_reduce, mpmd.broadcast.

// run: unknown fragment

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 1 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @opt stage 0 chunk 0 kind optimizer () -> tensor<4xf32> {
    %c = nn.constant dense<0.0> : tensor<4xf32>
    mpmd.yield %c : tensor<4xf32>
  }
  mpmd.rank 0 {
    // expected-error@+1 {{'mpmd.run' op @nope does not name an mpmd.fragment of program @p}}
    mpmd.run @nope microbatch 0
  }
}

// -----

// run: stage of the rank

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 1 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @opt stage 0 chunk 0 kind optimizer () -> tensor<4xf32> {
    %c = nn.constant dense<0.0> : tensor<4xf32>
    mpmd.yield %c : tensor<4xf32>
  }
  mpmd.rank 0 {
    // expected-error@+1 {{'mpmd.run' op fragment @f1 is placed on stage 1, but rank 0 runs stage 0}}
    mpmd.run @f1 microbatch 0
  }
}

// -----

// run: a declaration (a fragment of another rank) cannot run

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd () -> tensor<4xf32> attributes {mpmd.remote}
  mpmd.rank 0 {
    // expected-error@+1 {{'mpmd.run' op fragment @f0 is a declaration of a fragment that runs on another rank}}
    mpmd.run @f0 microbatch 0
  }
}

// -----

// run: per-microbatch needs a microbatch

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 1 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @opt stage 0 chunk 0 kind optimizer () -> tensor<4xf32> {
    %c = nn.constant dense<0.0> : tensor<4xf32>
    mpmd.yield %c : tensor<4xf32>
  }
  mpmd.rank 0 {
    // expected-error@+1 {{'mpmd.run' op fragment @f0 of kind fwd runs once per microbatch, expected a microbatch index}}
    mpmd.run @f0
  }
}

// -----

// run: microbatch in range

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 1 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @opt stage 0 chunk 0 kind optimizer () -> tensor<4xf32> {
    %c = nn.constant dense<0.0> : tensor<4xf32>
    mpmd.yield %c : tensor<4xf32>
  }
  mpmd.rank 0 {
    // expected-error@+1 {{'mpmd.run' op expected a microbatch index in [0, 2), found 2}}
    mpmd.run @f0 microbatch 2
  }
}

// -----

// run: once per step takes none

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 1 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @opt stage 0 chunk 0 kind optimizer () -> tensor<4xf32> {
    %c = nn.constant dense<0.0> : tensor<4xf32>
    mpmd.yield %c : tensor<4xf32>
  }
  mpmd.rank 0 {
    // expected-error@+1 {{'mpmd.run' op fragment @opt of kind optimizer runs once per step, expected no microbatch, found 0}}
    mpmd.run @opt microbatch 0
  }
}

// -----

// send: peer other than self

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 1 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @opt stage 0 chunk 0 kind optimizer () -> tensor<4xf32> {
    %c = nn.constant dense<0.0> : tensor<4xf32>
    mpmd.yield %c : tensor<4xf32>
  }
  mpmd.rank 0 {
    // expected-error@+1 {{'mpmd.send' op expected a peer other than this rank, found 0 on rank 0}}
    mpmd.send @f0[0] microbatch 0 to 0 channel 0 : tensor<4xf32> wire f32
  }
}

// -----

// send: peer in the grid

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 1 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @opt stage 0 chunk 0 kind optimizer () -> tensor<4xf32> {
    %c = nn.constant dense<0.0> : tensor<4xf32>
    mpmd.yield %c : tensor<4xf32>
  }
  mpmd.rank 0 {
    // expected-error@+1 {{'mpmd.send' op expected peer rank in [0, 2) (stages 2 x replicas 1), found 2}}
    mpmd.send @f0[0] microbatch 0 to 2 channel 0 : tensor<4xf32> wire f32
  }
}

// -----

// send: channel

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 1 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @opt stage 0 chunk 0 kind optimizer () -> tensor<4xf32> {
    %c = nn.constant dense<0.0> : tensor<4xf32>
    mpmd.yield %c : tensor<4xf32>
  }
  mpmd.rank 0 {
    // expected-error@+1 {{'mpmd.send' op expected a non-negative channel, found -1}}
    mpmd.send @f0[0] microbatch 0 to 1 channel -1 : tensor<4xf32> wire f32
  }
}

// -----

// send: float wire

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 1 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @opt stage 0 chunk 0 kind optimizer () -> tensor<4xf32> {
    %c = nn.constant dense<0.0> : tensor<4xf32>
    mpmd.yield %c : tensor<4xf32>
  }
  mpmd.rank 0 {
    // expected-error@+1 {{'mpmd.send' op expected wire type 'f32' (the value's element type: a narrower edge is a cast in the program, e.g. mpmd-compress-transfers' bf16 policy), found 'i32'}}
    mpmd.send @f0[0] microbatch 0 to 1 channel 0 : tensor<4xf32> wire i32
  }
}

// -----

// send: slot result index

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 1 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @opt stage 0 chunk 0 kind optimizer () -> tensor<4xf32> {
    %c = nn.constant dense<0.0> : tensor<4xf32>
    mpmd.yield %c : tensor<4xf32>
  }
  mpmd.rank 0 {
    // expected-error@+1 {{'mpmd.send' op expected a result index in [0, 1) of fragment @f0, found 1}}
    mpmd.send @f0[1] microbatch 0 to 1 channel 0 : tensor<4xf32> wire f32
  }
}

// -----

// send: slot type

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 1 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @opt stage 0 chunk 0 kind optimizer () -> tensor<4xf32> {
    %c = nn.constant dense<0.0> : tensor<4xf32>
    mpmd.yield %c : tensor<4xf32>
  }
  mpmd.rank 0 {
    // expected-error@+1 {{'mpmd.send' op type 'tensor<2x2xf32>' does not match result 0 of fragment @f0, 'tensor<4xf32>'}}
    mpmd.send @f0[0] microbatch 0 to 1 channel 0 : tensor<2x2xf32> wire f32
  }
}

// -----

// send: static type

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 1 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @opt stage 0 chunk 0 kind optimizer () -> tensor<4xf32> {
    %c = nn.constant dense<0.0> : tensor<4xf32>
    mpmd.yield %c : tensor<4xf32>
  }
  mpmd.rank 0 {
    // expected-error@+1 {{'mpmd.send' op attribute 'type' failed to satisfy constraint: type attribute of statically shaped tensor of any type values}}
    mpmd.send @f0[0] microbatch 0 to 1 channel 0 : tensor<?xf32> wire f32
  }
}

// -----

// send: slot microbatch

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 1 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @opt stage 0 chunk 0 kind optimizer () -> tensor<4xf32> {
    %c = nn.constant dense<0.0> : tensor<4xf32>
    mpmd.yield %c : tensor<4xf32>
  }
  mpmd.rank 0 {
    // expected-error@+1 {{'mpmd.send' op expected a microbatch index in [0, 2), found 5}}
    mpmd.send @f0[0] microbatch 5 to 1 channel 0 : tensor<4xf32> wire f32
  }
}

// -----

// recv: peer other than self

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 1 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @opt stage 0 chunk 0 kind optimizer () -> tensor<4xf32> {
    %c = nn.constant dense<0.0> : tensor<4xf32>
    mpmd.yield %c : tensor<4xf32>
  }
  mpmd.rank 1 {
    // expected-error@+1 {{'mpmd.recv' op expected a peer other than this rank, found 1 on rank 1}}
    mpmd.recv @f0[0] microbatch 0 from 1 channel 0 : tensor<4xf32> wire f32
  }
}

// -----

// recv: negative result index

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 1 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @opt stage 0 chunk 0 kind optimizer () -> tensor<4xf32> {
    %c = nn.constant dense<0.0> : tensor<4xf32>
    mpmd.yield %c : tensor<4xf32>
  }
  mpmd.rank 1 {
    // expected-error@+1 {{'mpmd.recv' op expected a non-negative result index, found -1}}
    mpmd.recv @f0[-1] microbatch 0 from 0 channel 0 : tensor<4xf32> wire f32
  }
}

// -----

// recv: once-per-step slot has no microbatch

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 1 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @opt stage 0 chunk 0 kind optimizer () -> tensor<4xf32> {
    %c = nn.constant dense<0.0> : tensor<4xf32>
    mpmd.yield %c : tensor<4xf32>
  }
  mpmd.rank 1 {
    // expected-error@+1 {{'mpmd.recv' op fragment @opt of kind optimizer runs once per step, expected no microbatch, found 1}}
    mpmd.recv @opt[0] microbatch 1 from 0 channel 0 : tensor<4xf32> wire f32
  }
}

// -----

// a value travels as it is: no integer conversion, no float cast

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @i0 stage 0 chunk 0 kind fwd (%x: tensor<4xi32> {mpmd.input = 0 : i64}) -> tensor<4xi32> {
    mpmd.yield %x : tensor<4xi32>
  }
  mpmd.rank 1 {
    // expected-error@+1 {{'mpmd.recv' op expected wire type 'i32' (the value's element type: a narrower edge is a cast in the program, e.g. mpmd-compress-transfers' bf16 policy), found 'f32'}}
    mpmd.recv @i0[0] microbatch 0 from 0 channel 0 : tensor<4xi32> wire f32
  }
}

// -----

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.rank 0 {
    // expected-error@+1 {{'mpmd.send' op expected wire type 'f32' (the value's element type: a narrower edge is a cast in the program, e.g. mpmd-compress-transfers' bf16 policy), found 'bf16'}}
    mpmd.send @f0[0] microbatch 0 to 1 channel 0 : tensor<4xf32> wire bf16
  }
}

// -----

// all_reduce: two members at least

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 1 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @opt stage 0 chunk 0 kind optimizer () -> tensor<4xf32> {
    %c = nn.constant dense<0.0> : tensor<4xf32>
    mpmd.yield %c : tensor<4xf32>
  }
  mpmd.rank 0 {
    // expected-error@+1 {{'mpmd.all_reduce' op expected a group of at least 2 ranks, found 1}}
    mpmd.all_reduce sum @f0[0] microbatch 0 group [0] : tensor<4xf32>
  }
}

// -----

// all_reduce: distinct members

mpmd.program @p stages 2 chunks 1 replicas 2 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 1 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @opt stage 0 chunk 0 kind optimizer () -> tensor<4xf32> {
    %c = nn.constant dense<0.0> : tensor<4xf32>
    mpmd.yield %c : tensor<4xf32>
  }
  mpmd.rank 0 {
    // expected-error@+1 {{'mpmd.all_reduce' op expected distinct group members, found rank 0 twice}}
    mpmd.all_reduce sum @f0[0] microbatch 0 group [0, 1, 0] : tensor<4xf32>
  }
}

// -----

// all_reduce: members in the grid

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 1 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @opt stage 0 chunk 0 kind optimizer () -> tensor<4xf32> {
    %c = nn.constant dense<0.0> : tensor<4xf32>
    mpmd.yield %c : tensor<4xf32>
  }
  mpmd.rank 0 {
    // expected-error@+1 {{'mpmd.all_reduce' op expected group member in [0, 2) (stages 2 x replicas 1), found 7}}
    mpmd.all_reduce sum @f0[0] microbatch 0 group [0, 7] : tensor<4xf32>
  }
}

// -----

// all_reduce: includes this rank

mpmd.program @p stages 2 chunks 1 replicas 2 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 1 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @opt stage 0 chunk 0 kind optimizer () -> tensor<4xf32> {
    %c = nn.constant dense<0.0> : tensor<4xf32>
    mpmd.yield %c : tensor<4xf32>
  }
  mpmd.rank 0 {
    // expected-error@+1 {{'mpmd.all_reduce' op expected the group to include this rank (0), found [1, 2]}}
    mpmd.all_reduce sum @f0[0] microbatch 0 group [1, 2] : tensor<4xf32>
  }
}

// -----

// all_reduce: unknown reduction

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 1 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @opt stage 0 chunk 0 kind optimizer () -> tensor<4xf32> {
    %c = nn.constant dense<0.0> : tensor<4xf32>
    mpmd.yield %c : tensor<4xf32>
  }
  mpmd.rank 0 {
    // expected-error@+2 {{expected one of [sum, max] for reduction of an all-reduce, got: prod}}
    // expected-error@+1 {{custom op 'mpmd.all_reduce' invalid value for property reduction, expected reduction of an all-reduce}}
    mpmd.all_reduce prod @f0[0] microbatch 0 group [0, 1] : tensor<4xf32>
  }
}

// -----

// all_reduce: slot type

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 1 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @opt stage 0 chunk 0 kind optimizer () -> tensor<4xf32> {
    %c = nn.constant dense<0.0> : tensor<4xf32>
    mpmd.yield %c : tensor<4xf32>
  }
  mpmd.rank 0 {
    // expected-error@+1 {{'mpmd.all_reduce' op type 'tensor<f32>' does not match result 0 of fragment @f0, 'tensor<4xf32>'}}
    mpmd.all_reduce sum @f0[0] microbatch 0 group [0, 1] : tensor<f32>
  }
}

// -----

// broadcast: root in the group

mpmd.program @p stages 2 chunks 1 replicas 2 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 1 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @opt stage 0 chunk 0 kind optimizer () -> tensor<4xf32> {
    %c = nn.constant dense<0.0> : tensor<4xf32>
    mpmd.yield %c : tensor<4xf32>
  }
  mpmd.rank 0 {
    // expected-error@+1 {{'mpmd.broadcast' op expected the root to be a group member, found root 3 and group [0, 1]}}
    mpmd.broadcast @opt[0] root 3 group [0, 1] : tensor<4xf32>
  }
}

// -----

// broadcast: group checks

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 1 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @opt stage 0 chunk 0 kind optimizer () -> tensor<4xf32> {
    %c = nn.constant dense<0.0> : tensor<4xf32>
    mpmd.yield %c : tensor<4xf32>
  }
  mpmd.rank 0 {
    // expected-error@+1 {{'mpmd.broadcast' op expected a group of at least 2 ranks, found 0}}
    mpmd.broadcast @opt[0] root 0 group [] : tensor<4xf32>
  }
}

// -----

// broadcast: slot microbatch

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 1 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @opt stage 0 chunk 0 kind optimizer () -> tensor<4xf32> {
    %c = nn.constant dense<0.0> : tensor<4xf32>
    mpmd.yield %c : tensor<4xf32>
  }
  mpmd.rank 1 {
    // expected-error@+1 {{'mpmd.broadcast' op fragment @f0 of kind fwd runs once per microbatch, expected a microbatch index}}
    mpmd.broadcast @f0[0] root 0 group [0, 1] : tensor<4xf32>
  }
}
