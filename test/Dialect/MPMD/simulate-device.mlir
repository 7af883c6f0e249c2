// mpmd-simulate with device=: fragment durations from the cost model
// (docs/cost-model.md), links from the device, the report in seconds with
// stash bytes per rank and bytes per link.
//
// The hand-written program below on Inputs/toy-device.json (1e9 FLOP/s at
// f32, 1e9 bytes/s of memory, 1 us per op launch, links of 1e9 bytes/s and
// 1 us latency); remarks checked in place.
// RUN: tandem-opt %s --mpmd-simulate="device=%S/Inputs/toy-device.json" -verify-diagnostics -o /dev/null
//
// Implicit transfers: an input arrives one transfer after its producer.
// RUN: tandem-opt %s --mpmd-simulate="device=%S/Inputs/toy-device.json transfers=implicit" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=IMPLICIT
// IMPLICIT: remark: simulated step time 1.54e-05 s on toy (2 ranks, 1 chunks per rank, 2 microbatches), mean bubble 0.4093
// IMPLICIT: remark: rank 0: busy 1.1632e-05 s, idle 3.768e-06 s, bubble 0.244675, peak in-flight microbatches 2 (512 bytes)
// IMPLICIT: remark: rank 1: busy 6.56e-06 s, idle 8.84e-06 s, bubble 0.574026, peak in-flight microbatches 1 (256 bytes)
// IMPLICIT: remark: link 0 -> 1: 2 transfers, 512 bytes
// IMPLICIT: remark: link 1 -> 0: 2 transfers, 512 bytes
//
// Uniform stages and free links reproduce the closed form: the chain's
// fragments are one 4x4 f32 nn.add each (192 bytes at 1e9 bytes/s + 1 us
// = 1.192 us), so F = B and 1F1B on 4 ranks with 8 microbatches idles
// (p-1)/(m+p-1) = 3/11; step (m+p-1)(F+B) = 11 * 2.384 us (12 such
// fragments: 4 fwd, 4 bwd and 4 optimizers). Rank r stashes
// p - r microbatches of one 64-byte activation each.
// RUN: sed 's/microbatches 4/microbatches 8/' %S/Inputs/chain-4x1.mlir | tandem-opt --mpmd-schedule=schedule=1f1b --mpmd-lower-transfers --mpmd-simulate="device=%S/Inputs/toy-free-links.json" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNIFORM
// UNIFORM-COUNT-12: remark: costs 16 FLOPs, 192 bytes, 1.192e-06 s on toy-free-links
// UNIFORM: remark: simulated step time 2.6224e-05 s on toy-free-links (4 ranks, 1 chunks per rank, 8 microbatches), mean bubble 0.272727
// UNIFORM: remark: rank 0: busy 1.9072e-05 s, idle 7.152e-06 s, bubble 0.272727, peak in-flight microbatches 4 (256 bytes)
// UNIFORM: remark: rank 1: {{.*}} bubble 0.272727, peak in-flight microbatches 3 (192 bytes)
// UNIFORM: remark: rank 2: {{.*}} bubble 0.272727, peak in-flight microbatches 2 (128 bytes)
// UNIFORM: remark: rank 3: {{.*}} bubble 0.272727, peak in-flight microbatches 1 (64 bytes)
// UNIFORM: remark: link 0 -> 1: 8 transfers, 512 bytes
//
// The shipped descriptions are found by their short names.
// RUN: tandem-opt %s --mpmd-simulate="device=h100" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=H100
// H100: remark: simulated step time {{.*}} s on h100-sxm (2 ranks
// RUN: tandem-opt %s --mpmd-simulate="device=cpu" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=CPU
// CPU: remark: simulated step time {{.*}} s on cpu-2core (2 ranks
//
// The IR is unchanged.
// RUN: tandem-opt %s --mpmd-simulate="device=h200" -mlir-print-op-on-diagnostic=false 2>/dev/null | FileCheck %s --check-prefix=IR
// IR: mpmd.program @two
// IR: mpmd.send @f0[0] microbatch 0 to 1 channel 0 : tensor<4x16xf32> wire f32

// Fragment times (roofline max(FLOPs / 1e9, bytes / 1e9) + 1 us per op):
//   f0: matmul 4x8 . 8x16: 2*4*16*8 = 1024 FLOPs, (32+128+64)*4 = 896 bytes
//       -> 1.024 + 1 = 2.024 us
//   f1: tanh of 64 elements: 64*4 = 256 FLOPs, 512 bytes -> 1.512 us
//   b1: mul of 64 elements: 64 FLOPs, 768 bytes -> 1.768 us
//   b0: mul (1.768 us) + matmul x^T . m, K = 4: 2*8*16*4 = 1024 FLOPs,
//       (32+64+128)*4 = 896 bytes -> 2.024 us; 1088 FLOPs, 1664 bytes, 3.792 us
//   o0: sub of 128 elements: 128 FLOPs, 1536 bytes -> 2.536 us (once per
//       step: not in the timeline)
// Transfers: f32, 64*4 = 256 bytes -> 1 + 0.256 = 1.256 us each way.
// Stashes: f0's result on stage 0 (b0 reads it), f1's on stage 1, 256
// bytes each.
// The rendezvous timeline (us):
//   rank 0: F0.0 0-2.024, SEND 2.024-3.28, F0.1 3.28-5.304, RECV
//           6.56-7.816, SEND 7.816-9.072, B0.0 9.072-12.864, RECV
//           12.864-14.12, B0.1 14.12-17.912
//   rank 1: RECV 2.024-3.28, F1.0 3.28-4.792, B1.0 4.792-6.56, SEND
//           6.56-7.816, RECV 7.816-9.072, F1.1 9.072-10.584, B1.1
//           10.584-12.352, SEND 12.864-14.12
// Step 17.912 us; busy 2*(2.024+3.792) = 11.632 us on rank 0 and
// 2*(1.512+1.768) = 6.56 us on rank 1.
nn.parameter @w0 : tensor<8x16xf32> = normal(0.1)

// expected-remark @below {{simulated step time 1.7912e-05 s on toy (2 ranks, 1 chunks per rank, 2 microbatches), mean bubble 0.492184}}
// expected-remark @below {{rank 0: busy 1.1632e-05 s, idle 6.28e-06 s, bubble 0.350603, peak in-flight microbatches 2 (512 bytes)}}
// expected-remark @below {{rank 1: busy 6.56e-06 s, idle 1.1352e-05 s, bubble 0.633765, peak in-flight microbatches 1 (256 bytes)}}
// expected-remark @below {{link 0 -> 1: 2 transfers, 512 bytes}}
// expected-remark @below {{link 1 -> 0: 2 transfers, 512 bytes}}
mpmd.program @two stages 2 chunks 1 replicas 1 microbatches 2 {
  // expected-remark @below {{costs 1024 FLOPs, 896 bytes, 2.024e-06 s on toy}}
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4x8xf32> {mpmd.input = 0 : i64}, %w: tensor<8x16xf32> {mpmd.param = @w0}) -> (tensor<4x16xf32>) {
    %y = nn.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
    mpmd.yield %y : tensor<4x16xf32>
  }
  // expected-remark @below {{costs 256 FLOPs, 512 bytes, 1.512e-06 s on toy}}
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%h: tensor<4x16xf32>) -> (tensor<4x16xf32>) {
    %t = nn.tanh %h : tensor<4x16xf32>
    mpmd.yield %t : tensor<4x16xf32>
  }
  // expected-remark @below {{costs 64 FLOPs, 768 bytes, 1.768e-06 s on toy}}
  mpmd.fragment @b1 stage 1 chunk 0 kind bwd (%t: tensor<4x16xf32>) -> (tensor<4x16xf32>) {
    %g = nn.mul %t, %t : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
    mpmd.yield %g : tensor<4x16xf32>
  }
  // expected-remark @below {{costs 1088 FLOPs, 1664 bytes, 3.792e-06 s on toy}}
  mpmd.fragment @b0 stage 0 chunk 0 kind bwd (%g: tensor<4x16xf32>, %y: tensor<4x16xf32>, %x: tensor<4x8xf32> {mpmd.input = 0 : i64}) -> (tensor<8x16xf32>) {
    %m = nn.mul %g, %y : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
    %dw = nn.matmul %x, %m {transpose_lhs} : tensor<4x8xf32>, tensor<4x16xf32> -> tensor<8x16xf32>
    mpmd.yield %dw : tensor<8x16xf32>
  }
  // expected-remark @below {{costs 128 FLOPs, 1536 bytes, 2.536e-06 s on toy}}
  mpmd.fragment @o0 stage 0 chunk 0 kind optimizer (%g: tensor<8x16xf32>, %w: tensor<8x16xf32> {mpmd.param = @w0}) -> (tensor<8x16xf32>) {
    %n = nn.sub %w, %g : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
    mpmd.yield %n : tensor<8x16xf32>
  }
  mpmd.transfer @f0[0] -> @f1[0] : tensor<4x16xf32>
  mpmd.transfer @f0[0] -> @b0[1] : tensor<4x16xf32>
  mpmd.transfer @f1[0] -> @b1[0] : tensor<4x16xf32>
  mpmd.transfer @b1[0] -> @b0[0] : tensor<4x16xf32>
  mpmd.transfer @b0[0] -> @o0[0] : tensor<8x16xf32>
  mpmd.rank 0 {
    mpmd.run @f0 microbatch 0
    mpmd.send @f0[0] microbatch 0 to 1 channel 0 : tensor<4x16xf32> wire f32
    mpmd.run @f0 microbatch 1
    mpmd.recv @b1[0] microbatch 0 from 1 channel 1 : tensor<4x16xf32> wire f32
    mpmd.send @f0[0] microbatch 1 to 1 channel 0 : tensor<4x16xf32> wire f32
    mpmd.run @b0 microbatch 0
    mpmd.recv @b1[0] microbatch 1 from 1 channel 1 : tensor<4x16xf32> wire f32
    mpmd.run @b0 microbatch 1
    mpmd.run @o0
  }
  mpmd.rank 1 {
    mpmd.recv @f0[0] microbatch 0 from 0 channel 0 : tensor<4x16xf32> wire f32
    mpmd.run @f1 microbatch 0
    mpmd.run @b1 microbatch 0
    mpmd.send @b1[0] microbatch 0 to 0 channel 1 : tensor<4x16xf32> wire f32
    mpmd.recv @f0[0] microbatch 1 from 0 channel 0 : tensor<4x16xf32> wire f32
    mpmd.run @f1 microbatch 1
    mpmd.run @b1 microbatch 1
    mpmd.send @b1[0] microbatch 1 to 0 channel 1 : tensor<4x16xf32> wire f32
  }
}
