// RUN: tandem-opt %s -split-input-file --mpmd-simulate -verify-diagnostics -o /dev/null
//
// Invalid option values are reported before any program is looked at.
// RUN: not tandem-opt %S/Inputs/chain-2x1.mlir --mpmd-schedule --mpmd-simulate="f=1,x" 2>&1 | FileCheck %s --check-prefix=DURATION
// DURATION: error: mpmd-simulate: option f expects non-negative numbers separated by commas, got '1,x'
// RUN: not tandem-opt %S/Inputs/chain-2x1.mlir --mpmd-schedule --mpmd-simulate="w=-1" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: error: mpmd-simulate: option w expects non-negative numbers separated by commas, got '-1'
// RUN: not tandem-opt %S/Inputs/chain-2x1.mlir --mpmd-schedule --mpmd-simulate="latency=-0.5" 2>&1 | FileCheck %s --check-prefix=LATENCY
// LATENCY: error: mpmd-simulate: option latency must be a non-negative number, got -0.5
// RUN: not tandem-opt %S/Inputs/chain-2x1.mlir --mpmd-schedule --mpmd-simulate="transfers=buffered" 2>&1 | FileCheck %s --check-prefix=TRANSFERS
// TRANSFERS: error: mpmd-simulate: option transfers must be 'explicit' or 'implicit', got 'buffered'
// Per-stage lists need one duration per virtual stage (2 here).
// RUN: not tandem-opt %S/Inputs/chain-2x1.mlir --mpmd-schedule --mpmd-simulate="b=1,2,3" 2>&1 | FileCheck %s --check-prefix=COUNT
// COUNT: error: 'mpmd.program' op mpmd-simulate option b has 3 durations; expected 1 or one per virtual stage (2)
// An output file that cannot be written.
// RUN: not tandem-opt %S/Inputs/chain-2x1.mlir --mpmd-schedule --mpmd-simulate="svg=%t.missing/x.svg" 2>&1 | FileCheck %s --check-prefix=SVG
// SVG: error: mpmd-simulate cannot write '{{.*}}x.svg'

// expected-error @below {{'mpmd.program' op has no rank action lists to simulate; run mpmd-schedule first}}
mpmd.program @unscheduled stages 2 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> (tensor<4xf32>) {
    mpmd.yield %x : tensor<4xf32>
  }
}

// -----

// Both ranks receive before they send: under rendezvous semantics neither
// receive is ever matched.
// expected-error @below {{'mpmd.program' op deadlocks in simulation (rendezvous send/recv): ranks 0, 1 can never progress}}
mpmd.program @deadlock stages 2 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> (tensor<4xf32>) {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32>) -> (tensor<4xf32>) {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @b1 stage 1 chunk 0 kind bwd (%y: tensor<4xf32>) -> (tensor<4xf32>) {
    mpmd.yield %y : tensor<4xf32>
  }
  mpmd.fragment @b0 stage 0 chunk 0 kind bwd (%g: tensor<4xf32>) -> (tensor<4xf32>) {
    mpmd.yield %g : tensor<4xf32>
  }
  mpmd.transfer @f0[0] -> @f1[0] : tensor<4xf32>
  mpmd.transfer @f1[0] -> @b1[0] : tensor<4xf32>
  mpmd.transfer @b1[0] -> @b0[0] : tensor<4xf32>
  mpmd.rank 0 {
    mpmd.run @f0 microbatch 0
    // expected-note @below {{rank 0 waits at action 1 (RECV_B1.0@1) for rank 1 to reach SEND_B1.0@0 (it is at RECV_F0.0@0)}}
    mpmd.recv @b1[0] microbatch 0 from 1 channel 1 : tensor<4xf32> wire f32
    mpmd.send @f0[0] microbatch 0 to 1 channel 0 : tensor<4xf32> wire f32
    mpmd.run @b0 microbatch 0
  }
  mpmd.rank 1 {
    // expected-note @below {{rank 1 waits at action 0 (RECV_F0.0@0) for rank 0 to reach SEND_F0.0@1 (it is at RECV_B1.0@1)}}
    mpmd.recv @f0[0] microbatch 0 from 0 channel 0 : tensor<4xf32> wire f32
    mpmd.run @f1 microbatch 0
    mpmd.run @b1 microbatch 0
    mpmd.send @b1[0] microbatch 0 to 0 channel 1 : tensor<4xf32> wire f32
  }
}

// -----

// Stage 0 never runs the backward of microbatch 0.
// expected-error @below {{'mpmd.program' op action lists are not a schedule the simulator can run: rank 0: B0.0 is missing: stage 0 microbatch 0 has no backward}}
mpmd.program @incomplete stages 2 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> (tensor<4xf32>) {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4xf32>) -> (tensor<4xf32>) {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @b1 stage 1 chunk 0 kind bwd (%y: tensor<4xf32>) -> (tensor<4xf32>) {
    mpmd.yield %y : tensor<4xf32>
  }
  mpmd.transfer @f0[0] -> @f1[0] : tensor<4xf32>
  mpmd.transfer @f1[0] -> @b1[0] : tensor<4xf32>
  mpmd.rank 0 {
    mpmd.run @f0 microbatch 0
  }
  mpmd.rank 1 {
    mpmd.run @f1 microbatch 0
    mpmd.run @b1 microbatch 0
  }
}
