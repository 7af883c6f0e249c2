// End to end: mpmd-schedule, then mpmd-lower-transfers, then mpmd-verify.
//
// The hand-written example (example-2stage.mlir) without its rank lists
// (Inputs/mlp-2stage.mlir), scheduled as 1F1B, comes out exactly as the
// example, explicit sends and receives included.
// RUN: tandem-opt %S/Inputs/mlp-2stage.mlir --mpmd-schedule=schedule=1f1b --mpmd-lower-transfers --mpmd-verify > %t.generated
// RUN: tandem-opt %S/example-2stage.mlir > %t.example
// RUN: diff %t.example %t.generated
// RUN: FileCheck %s --input-file=%t.generated
//
// Every built-in schedule for S in {2, 4} and m in {1, 4, 8} where it is
// valid, on the chain programs of Inputs/ (zb-h1 on those with split
// backwards; 1f1b and gpipe on both kinds; interleaved-1f1b and gpipe with
// 2 chunks per stage, m a multiple of S): mpmd-verify accepts the result.
// RUN: sed 's/microbatches 4/microbatches 1/' %S/Inputs/chain-2x1.mlir | tandem-opt --mpmd-schedule=schedule=gpipe --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 4/' %S/Inputs/chain-2x1.mlir | tandem-opt --mpmd-schedule=schedule=gpipe --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 8/' %S/Inputs/chain-2x1.mlir | tandem-opt --mpmd-schedule=schedule=gpipe --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 1/' %S/Inputs/chain-2x1.mlir | tandem-opt --mpmd-schedule=schedule=1f1b --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 4/' %S/Inputs/chain-2x1.mlir | tandem-opt --mpmd-schedule=schedule=1f1b --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 8/' %S/Inputs/chain-2x1.mlir | tandem-opt --mpmd-schedule=schedule=1f1b --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 1/' %S/Inputs/chain-4x1.mlir | tandem-opt --mpmd-schedule=schedule=gpipe --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 4/' %S/Inputs/chain-4x1.mlir | tandem-opt --mpmd-schedule=schedule=gpipe --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 8/' %S/Inputs/chain-4x1.mlir | tandem-opt --mpmd-schedule=schedule=gpipe --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 1/' %S/Inputs/chain-4x1.mlir | tandem-opt --mpmd-schedule=schedule=1f1b --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 4/' %S/Inputs/chain-4x1.mlir | tandem-opt --mpmd-schedule=schedule=1f1b --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 8/' %S/Inputs/chain-4x1.mlir | tandem-opt --mpmd-schedule=schedule=1f1b --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 1/' %S/Inputs/chain-2x1-split.mlir | tandem-opt --mpmd-schedule=schedule=gpipe --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 4/' %S/Inputs/chain-2x1-split.mlir | tandem-opt --mpmd-schedule=schedule=gpipe --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 8/' %S/Inputs/chain-2x1-split.mlir | tandem-opt --mpmd-schedule=schedule=gpipe --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 1/' %S/Inputs/chain-2x1-split.mlir | tandem-opt --mpmd-schedule=schedule=1f1b --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 4/' %S/Inputs/chain-2x1-split.mlir | tandem-opt --mpmd-schedule=schedule=1f1b --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 8/' %S/Inputs/chain-2x1-split.mlir | tandem-opt --mpmd-schedule=schedule=1f1b --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 1/' %S/Inputs/chain-2x1-split.mlir | tandem-opt --mpmd-schedule=schedule=zb-h1 --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 4/' %S/Inputs/chain-2x1-split.mlir | tandem-opt --mpmd-schedule=schedule=zb-h1 --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 8/' %S/Inputs/chain-2x1-split.mlir | tandem-opt --mpmd-schedule=schedule=zb-h1 --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 1/' %S/Inputs/chain-4x1-split.mlir | tandem-opt --mpmd-schedule=schedule=gpipe --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 4/' %S/Inputs/chain-4x1-split.mlir | tandem-opt --mpmd-schedule=schedule=gpipe --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 8/' %S/Inputs/chain-4x1-split.mlir | tandem-opt --mpmd-schedule=schedule=gpipe --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 1/' %S/Inputs/chain-4x1-split.mlir | tandem-opt --mpmd-schedule=schedule=1f1b --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 4/' %S/Inputs/chain-4x1-split.mlir | tandem-opt --mpmd-schedule=schedule=1f1b --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 8/' %S/Inputs/chain-4x1-split.mlir | tandem-opt --mpmd-schedule=schedule=1f1b --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 1/' %S/Inputs/chain-4x1-split.mlir | tandem-opt --mpmd-schedule=schedule=zb-h1 --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 4/' %S/Inputs/chain-4x1-split.mlir | tandem-opt --mpmd-schedule=schedule=zb-h1 --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 8/' %S/Inputs/chain-4x1-split.mlir | tandem-opt --mpmd-schedule=schedule=zb-h1 --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 1/' %S/Inputs/chain-2x2.mlir | tandem-opt --mpmd-schedule=schedule=gpipe --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 4/' %S/Inputs/chain-2x2.mlir | tandem-opt --mpmd-schedule=schedule=gpipe --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 8/' %S/Inputs/chain-2x2.mlir | tandem-opt --mpmd-schedule=schedule=gpipe --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 4/' %S/Inputs/chain-2x2.mlir | tandem-opt --mpmd-schedule=schedule=interleaved-1f1b --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 8/' %S/Inputs/chain-2x2.mlir | tandem-opt --mpmd-schedule=schedule=interleaved-1f1b --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 1/' %S/Inputs/chain-4x2.mlir | tandem-opt --mpmd-schedule=schedule=gpipe --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 4/' %S/Inputs/chain-4x2.mlir | tandem-opt --mpmd-schedule=schedule=gpipe --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 8/' %S/Inputs/chain-4x2.mlir | tandem-opt --mpmd-schedule=schedule=gpipe --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 4/' %S/Inputs/chain-4x2.mlir | tandem-opt --mpmd-schedule=schedule=interleaved-1f1b --mpmd-lower-transfers --mpmd-verify -o /dev/null
// RUN: sed 's/microbatches 4/microbatches 8/' %S/Inputs/chain-4x2.mlir | tandem-opt --mpmd-schedule=schedule=interleaved-1f1b --mpmd-lower-transfers --mpmd-verify -o /dev/null
//
// The action order of example-2stage.mlir:

// CHECK: mpmd.rank 0 {
// CHECK-NEXT: mpmd.run @s0.fwd microbatch 0
// CHECK-NEXT: mpmd.send @s0.fwd[0] microbatch 0 to 1 channel 0 : tensor<4x16xf32> wire f32
// CHECK-NEXT: mpmd.run @s0.fwd microbatch 1
// CHECK-NEXT: mpmd.send @s0.fwd[0] microbatch 1 to 1 channel 0 : tensor<4x16xf32> wire f32
// CHECK-NEXT: mpmd.recv @s1.bwd[0] microbatch 0 from 1 channel 1 : tensor<4x16xf32> wire f32
// CHECK-NEXT: mpmd.run @s0.bwd microbatch 0
// CHECK-NEXT: mpmd.recv @s1.bwd[0] microbatch 1 from 1 channel 1 : tensor<4x16xf32> wire f32
// CHECK-NEXT: mpmd.run @s0.bwd microbatch 1
// CHECK-NEXT: mpmd.run @s0.opt{{$}}
// CHECK-NEXT: }
// CHECK: mpmd.rank 1 {
// CHECK-NEXT: mpmd.recv @s0.fwd[0] microbatch 0 from 0 channel 0 : tensor<4x16xf32> wire f32
// CHECK-NEXT: mpmd.run @s1.fwd microbatch 0
// CHECK-NEXT: mpmd.recv @s0.fwd[0] microbatch 1 from 0 channel 0 : tensor<4x16xf32> wire f32
// CHECK-NEXT: mpmd.run @s1.bwd microbatch 0
// CHECK-NEXT: mpmd.send @s1.bwd[0] microbatch 0 to 0 channel 1 : tensor<4x16xf32> wire f32
// CHECK-NEXT: mpmd.run @s1.fwd microbatch 1
// CHECK-NEXT: mpmd.run @s1.bwd microbatch 1
// CHECK-NEXT: mpmd.send @s1.bwd[0] microbatch 1 to 0 channel 1 : tensor<4x16xf32> wire f32
// CHECK-NEXT: mpmd.run @s1.opt{{$}}
// CHECK-NEXT: }
