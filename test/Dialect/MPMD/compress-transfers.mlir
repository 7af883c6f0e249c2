// mpmd-compress-transfers on Inputs/chain-2x1.mlir: the activation edge
// @f0[0] -> @f1[0] gets int8 codes, the gradient edge @b1[0] -> @b0[0]
// fp8 (f8E5M2 for gradients); the step prologue's value into @f1 and the
// per-microbatch value summed into the optimizer @o0 stay as they are.
// Arguments and results are only appended or retyped, so every other
// transfer keeps its indices.

// RUN: tandem-opt %S/Inputs/chain-2x1.mlir --mpmd-compress-transfers="activations=int8 gradients=fp8 block=3" | FileCheck %s
// RUN: tandem-opt %S/Inputs/chain-2x1.mlir --mpmd-compress-transfers="gradients=fp8e4m3 edges=1-0" | FileCheck %s --check-prefix=EDGE
// RUN: tandem-opt %S/Inputs/chain-2x1.mlir --mpmd-compress-transfers="activations=fp8 edges=1-0" | FileCheck %s --check-prefix=NOEDGE
// RUN: tandem-opt %S/Inputs/chain-2x1.mlir > %t.plain
// RUN: tandem-opt %S/Inputs/chain-2x1.mlir --mpmd-compress-transfers > %t.none
// RUN: diff %t.plain %t.none
// RUN: tandem-opt %S/Inputs/chain-2x1.mlir --mpmd-compress-transfers="activations=bf16 gradients=f16" | FileCheck %s --check-prefix=CAST
// A plain cast applies only to values wider than 16 bits: on an f16
// program a bf16 policy changes nothing.
// RUN: sed 's/xf32>/xf16>/g; s/tensor<f32>/tensor<f16>/g' %S/Inputs/chain-2x1.mlir | tandem-opt > %t.f16
// RUN: sed 's/xf32>/xf16>/g; s/tensor<f32>/tensor<f16>/g' %S/Inputs/chain-2x1.mlir | tandem-opt --mpmd-compress-transfers="activations=bf16 gradients=bf16" > %t.f16cast
// RUN: diff %t.f16 %t.f16cast
// RUN: sed 's/microbatches 4/microbatches 2/' %S/Inputs/chain-2x1.mlir | tandem-opt --mpmd-compress-transfers="activations=bf16 gradients=f16" --mpmd-schedule=schedule=1f1b --mpmd-lower-transfers --mpmd-verify | FileCheck %s --check-prefix=CASTWIRE
// The compressed program schedules, lowers and verifies: the wire carries
// the codes and the scales.
// RUN: sed 's/microbatches 4/microbatches 2/' %S/Inputs/chain-2x1.mlir | tandem-opt --mpmd-compress-transfers="activations=int8 gradients=fp8 block=3" --mpmd-schedule=schedule=1f1b --mpmd-lower-transfers --mpmd-verify | FileCheck %s --check-prefix=WIRE

// CHECK: mpmd.fragment @f0 stage 0 chunk 0 kind fwd ({{.*}}) -> (tensor<4x4xf32>, tensor<4x4xi8>, tensor<4x2xf32>) {
// CHECK: %[[Q:.*]], %[[S:.*]] = nn.quantize %[[H:.*]] {block = 3 : i64} : tensor<4x4xf32> to tensor<4x4xi8>, tensor<4x2xf32>
// CHECK-NEXT: mpmd.yield %[[H]], %[[Q]], %[[S]]
// CHECK: mpmd.fragment @b0 stage 0 chunk 0 kind bwd (%[[G:.*]]: tensor<4x4xf8E5M2>, %{{.*}}: tensor<4x4xf32>, %[[GS:.*]]: tensor<4x2xf32>)
// CHECK-NEXT: %[[D:.*]] = nn.dequantize %[[G]], %[[GS]] {block = 3 : i64} : tensor<4x4xf8E5M2>, tensor<4x2xf32> to tensor<4x4xf32>
// CHECK-NEXT: nn.add %[[D]],
// CHECK: mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%{{.*}}: tensor<4x4xi8>, %{{.*}}: tensor<4x4xf32>, %{{.*}}: tensor<4x2xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: nn.dequantize
// CHECK: mpmd.fragment @b1 stage 1 chunk 0 kind bwd ({{.*}}) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf8E5M2>, tensor<4x2xf32>)
// CHECK: mpmd.transfer @b1[2] -> @b0[0] : tensor<4x4xf8E5M2>
// CHECK-NEXT: mpmd.transfer @b1[3] -> @b0[2] : tensor<4x2xf32>
// CHECK-NEXT: mpmd.transfer @f0[0] -> @b0[1] : tensor<4x4xf32>
// CHECK-NEXT: mpmd.transfer @b0[1] -> @o0[0] : tensor<4x4xf32>
// CHECK-NEXT: mpmd.transfer @f0[1] -> @f1[0] : tensor<4x4xi8>
// CHECK-NEXT: mpmd.transfer @f0[2] -> @f1[2] : tensor<4x2xf32>
// CHECK-NEXT: mpmd.transfer @pro[0] -> @f1[1] : tensor<4x4xf32>
// CHECK-NEXT: mpmd.transfer @f1[0] -> @b1[0] : tensor<4x4xf32>
// CHECK-NEXT: mpmd.transfer @f1[0] -> @b1[1] : tensor<4x4xf32>
// CHECK-NEXT: mpmd.transfer @b1[1] -> @o1[0] : tensor<4x4xf32>
// CHECK-NEXT: mpmd.transfer @b1[1] -> @o0[2] : tensor<4x4xf32>

// Only the edge from stage 1 to stage 0, in blocks of 128 (one per row).
// EDGE: mpmd.transfer @b1[2] -> @b0[0] : tensor<4x4xf8E4M3FN>
// EDGE-NEXT: mpmd.transfer @b1[3] -> @b0[2] : tensor<4x1xf32>
// EDGE: mpmd.transfer @f0[0] -> @f1[0] : tensor<4x4xf32>

// Activations only flow from stage 0 to stage 1: nothing to compress.
// NOEDGE-NOT: nn.quantize
// NOEDGE: mpmd.transfer @f0[0] -> @f1[0] : tensor<4x4xf32>

// WIRE: mpmd.send @f0[1] microbatch 0 to 1 channel {{[0-9]+}} : tensor<4x4xi8> wire i8
// WIRE-NEXT: mpmd.send @f0[2] microbatch 0 to 1 channel {{[0-9]+}} : tensor<4x2xf32> wire f32
// WIRE: mpmd.recv @b1[2] microbatch 0 from 1 channel {{[0-9]+}} : tensor<4x4xf8E5M2> wire f8E5M2

// The plain casts: nn.cast on both sides, no scales, the wire type the
// value's.
// CAST: mpmd.fragment @f0 stage 0 chunk 0 kind fwd ({{.*}}) -> (tensor<4x4xf32>, tensor<4x4xbf16>) {
// CAST: %[[C:.*]] = nn.cast %[[H:.*]] : tensor<4x4xf32> to tensor<4x4xbf16>
// CAST-NEXT: mpmd.yield %[[H]], %[[C]]
// CAST: mpmd.fragment @b0 stage 0 chunk 0 kind bwd (%[[G:.*]]: tensor<4x4xf16>, %{{.*}}: tensor<4x4xf32>)
// CAST-NEXT: %[[D:.*]] = nn.cast %[[G]] : tensor<4x4xf16> to tensor<4x4xf32>
// CAST-NEXT: nn.add %[[D]],
// CAST: mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%{{.*}}: tensor<4x4xbf16>, %{{.*}}: tensor<4x4xf32>) -> tensor<4x4xf32>
// CAST-NEXT: nn.cast
// CAST: mpmd.transfer @b1[2] -> @b0[0] : tensor<4x4xf16>
// CAST-NEXT: mpmd.transfer @f0[0] -> @b0[1] : tensor<4x4xf32>
// CAST-NEXT: mpmd.transfer @b0[1] -> @o0[0] : tensor<4x4xf32>
// CAST-NEXT: mpmd.transfer @f0[1] -> @f1[0] : tensor<4x4xbf16>
// CAST-NEXT: mpmd.transfer @pro[0] -> @f1[1] : tensor<4x4xf32>
// CASTWIRE: mpmd.send @f0[1] microbatch 0 to 1 channel {{[0-9]+}} : tensor<4x4xbf16> wire bf16
// CASTWIRE: mpmd.recv @b1[2] microbatch 0 from 1 channel {{[0-9]+}} : tensor<4x4xf16> wire f16
