// mpmd-simulate: the scheduled, lowered chain programs of Inputs/ through
// the TandemSchedule simulator; remarks on the program give the step time,
// the mean bubble and per rank busy / idle / bubble / peak in-flight.
//
// 1F1B, 4 stages, m = 8, F = 1, B = b + w = 3: bubble (p-1)/(m+p-1) = 3/11
// on every rank, rank r holds p - r microbatches.
// RUN: sed 's/microbatches 4/microbatches 8/' %S/Inputs/chain-4x1.mlir | tandem-opt --mpmd-schedule=schedule=1f1b --mpmd-lower-transfers --mpmd-simulate="f=1 b=2" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=1F1B
// 1F1B: remark: simulated step time 44 (4 ranks, 1 chunks per rank, 8 microbatches), mean bubble 0.272727
// 1F1B: remark: rank 0: busy 32, idle 12, bubble 0.272727, peak in-flight microbatches 4
// 1F1B: remark: rank 1: busy 32, idle 12, bubble 0.272727, peak in-flight microbatches 3
// 1F1B: remark: rank 2: busy 32, idle 12, bubble 0.272727, peak in-flight microbatches 2
// 1F1B: remark: rank 3: busy 32, idle 12, bubble 0.272727, peak in-flight microbatches 1
//
// The same without the sends and receives (communication implicit): the
// same step, since 1F1B's placement never makes a sender wait.
// RUN: sed 's/microbatches 4/microbatches 8/' %S/Inputs/chain-4x1.mlir | tandem-opt --mpmd-schedule=schedule=1f1b --mpmd-simulate="f=1 b=2" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=1F1B
//
// GPipe: the same bubble; every rank holds all 8 microbatches.
// RUN: sed 's/microbatches 4/microbatches 8/' %S/Inputs/chain-4x1.mlir | tandem-opt --mpmd-schedule=schedule=gpipe --mpmd-lower-transfers --mpmd-simulate="f=1 b=2" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=GPIPE
// GPIPE: remark: simulated step time 44 (4 ranks, 1 chunks per rank, 8 microbatches), mean bubble 0.272727
// GPIPE-COUNT-4: bubble 0.272727, peak in-flight microbatches 8
//
// ZB-H1 with F = BI = BW = 1 and implicit communication: (p-1)/(3m+p-1) =
// 1/9, p microbatches in flight on every rank.
// RUN: sed 's/microbatches 4/microbatches 8/' %S/Inputs/chain-4x1-split.mlir | tandem-opt --mpmd-schedule=schedule=zb-h1 --mpmd-lower-transfers --mpmd-simulate="f=1 b=1 w=1 transfers=implicit" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZB
// ZB: remark: simulated step time 27 (4 ranks, 1 chunks per rank, 8 microbatches), mean bubble 0.111111
// ZB-COUNT-4: bubble 0.111111, peak in-flight microbatches 4
//
// ZB-H1 with the explicit rendezvous sends and receives that
// mpmd-lower-transfers places: each message is exchanged when its value
// arrives in the pass's own simulation (F = BI = BW = 1), where both ranks
// are between runs, so no send waits for a rank busy with runs that do not
// need the value and the step is the schedule's own, 1/9 on every rank
// (receives right before their consumers gave 1F1B's 3/11).
// RUN: sed 's/microbatches 4/microbatches 8/' %S/Inputs/chain-4x1-split.mlir | tandem-opt --mpmd-schedule=schedule=zb-h1 --mpmd-lower-transfers --mpmd-simulate -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZB
//
// Interleaved 1F1B, 4 stages, 2 chunks, m = 8, F = BI = BW = 1, with the
// explicit sends and receives: (p-1)/(v*m+p-1) = 3/19 on every rank, the
// same as with implicit communication (receives right before their
// consumers gave 0.55).
// RUN: sed 's/microbatches 4/microbatches 8/' %S/Inputs/chain-4x2.mlir | tandem-opt --mpmd-schedule=schedule=interleaved-1f1b --mpmd-lower-transfers --mpmd-simulate -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=INTER
// RUN: sed 's/microbatches 4/microbatches 8/' %S/Inputs/chain-4x2.mlir | tandem-opt --mpmd-schedule=schedule=interleaved-1f1b --mpmd-simulate=transfers=implicit -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=INTER
// INTER: remark: simulated step time 57 (4 ranks, 2 chunks per rank, 8 microbatches), mean bubble 0.157895
// INTER-COUNT-4: bubble 0.157895, peak in-flight microbatches
//
// Interleaved 1F1B on 2 stages, 2 chunks, m = 8: implicitly 1/17, but with
// rendezvous sends and receives some message always finds both ranks busy
// (one rank in a backward of two units when the value arrives, the other
// in a run that ends after the consumer must start), so one of them waits:
// 0.157895 (receives right before their consumers gave 0.31).
// RUN: sed 's/microbatches 4/microbatches 8/' %S/Inputs/chain-2x2.mlir | tandem-opt --mpmd-schedule=schedule=interleaved-1f1b --mpmd-lower-transfers --mpmd-simulate -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=INTER2
// INTER2: remark: simulated step time 57 (2 ranks, 2 chunks per rank, 8 microbatches), mean bubble 0.157895
// INTER2-COUNT-2: bubble 0.157895, peak in-flight microbatches
//
// Per-stage durations (one per virtual stage) and links: a slow last stage
// sets the pace, transfers add latency + bytes / bandwidth = 0.5.
// RUN: tandem-opt %S/Inputs/chain-2x1.mlir --mpmd-schedule=schedule=1f1b --mpmd-lower-transfers --mpmd-simulate="f=1,2 b=1,2 w=0 latency=0.25 bandwidth=4 bytes=1" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=STAGES
// STAGES: remark: simulated step time 22 (2 ranks, 1 chunks per rank, 4 microbatches)
// STAGES: remark: rank 0: busy 8, idle 14
// STAGES: remark: rank 1: busy 16, idle 6
//
// The pictures: an SVG timeline and a Chrome trace.
// RUN: tandem-opt %S/Inputs/chain-4x1.mlir --mpmd-schedule=schedule=1f1b --mpmd-lower-transfers --mpmd-simulate="svg=%t.svg trace=%t.json" -o /dev/null
// RUN: FileCheck %s --input-file=%t.svg --check-prefix=SVG
// SVG: <svg
// RUN: FileCheck %s --input-file=%t.json --check-prefix=TRACE
// TRACE: "traceEvents"
//
// The IR is unchanged.
// RUN: tandem-opt %S/Inputs/chain-2x1.mlir --mpmd-schedule --mpmd-lower-transfers > %t.before
// RUN: tandem-opt %t.before --mpmd-simulate -mlir-print-op-on-diagnostic=false 2>/dev/null > %t.after
// RUN: diff %t.before %t.after
//
// The hand-written program below, with its remarks checked in place.
// RUN: tandem-opt %s --mpmd-simulate="f=1 b=2" -verify-diagnostics -o /dev/null

// 2 stages, 2 microbatches, 1F1B with rendezvous sends and receives; the
// once-per-step optimizer takes no time. F = 1, B = 3: (m + p - 1) * 4 = 12.
// expected-remark @below {{simulated step time 12 (2 ranks, 1 chunks per rank, 2 microbatches), mean bubble 0.333333}}
// expected-remark @below {{rank 0: busy 8, idle 4, bubble 0.333333, peak in-flight microbatches 2}}
// expected-remark @below {{rank 1: busy 8, idle 4, bubble 0.333333, peak in-flight microbatches 1}}
mpmd.program @two stages 2 chunks 1 replicas 1 microbatches 2 {
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
  mpmd.fragment @o0 stage 0 chunk 0 kind optimizer (%g: tensor<4xf32>) -> (tensor<4xf32>) {
    mpmd.yield %g : tensor<4xf32>
  }
  mpmd.transfer @f0[0] -> @f1[0] : tensor<4xf32>
  mpmd.transfer @f1[0] -> @b1[0] : tensor<4xf32>
  mpmd.transfer @b1[0] -> @b0[0] : tensor<4xf32>
  mpmd.transfer @b0[0] -> @o0[0] : tensor<4xf32>
  mpmd.rank 0 {
    mpmd.run @f0 microbatch 0
    mpmd.send @f0[0] microbatch 0 to 1 channel 0 : tensor<4xf32> wire f32
    mpmd.run @f0 microbatch 1
    mpmd.recv @b1[0] microbatch 0 from 1 channel 1 : tensor<4xf32> wire f32
    mpmd.send @f0[0] microbatch 1 to 1 channel 0 : tensor<4xf32> wire f32
    mpmd.run @b0 microbatch 0
    mpmd.recv @b1[0] microbatch 1 from 1 channel 1 : tensor<4xf32> wire f32
    mpmd.run @b0 microbatch 1
    mpmd.run @o0
  }
  mpmd.rank 1 {
    mpmd.recv @f0[0] microbatch 0 from 0 channel 0 : tensor<4xf32> wire f32
    mpmd.run @f1 microbatch 0
    mpmd.run @b1 microbatch 0
    mpmd.send @b1[0] microbatch 0 to 0 channel 1 : tensor<4xf32> wire f32
    mpmd.recv @f0[0] microbatch 1 from 0 channel 0 : tensor<4xf32> wire f32
    mpmd.run @f1 microbatch 1
    mpmd.run @b1 microbatch 1
    mpmd.send @b1[0] microbatch 1 to 0 channel 1 : tensor<4xf32> wire f32
  }
}
