// What the analyses see of a compressed program (Inputs/chain-2x1.mlir at
// m = 2, 1F1B, int8 both ways, blocks of 128: one scale per row of 4).
//
// mpmd-simulate counts the bytes on the wire by the wire type: each
// microbatch's 4x4 activation crosses as 16 one-byte codes plus 4 f32
// scales, 32 bytes against 64 in f32, so each link carries 64 bytes over
// the step against 128 uncompressed.
// RUN: sed 's/microbatches 4/microbatches 2/' %S/Inputs/chain-2x1.mlir | tandem-opt --mpmd-schedule=schedule=1f1b --mpmd-lower-transfers --mpmd-verify --mpmd-simulate="device=%S/Inputs/toy-device.json" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=PLAIN
// RUN: sed 's/microbatches 4/microbatches 2/' %S/Inputs/chain-2x1.mlir | tandem-opt --mpmd-compress-transfers="activations=int8 gradients=int8" --mpmd-schedule=schedule=1f1b --mpmd-lower-transfers --mpmd-verify --mpmd-simulate="device=%S/Inputs/toy-device.json" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=CODED
// PLAIN: remark: link 0 -> 1: 2 transfers, 128 bytes
// PLAIN: remark: link 1 -> 0: 2 transfers, 128 bytes
// CODED: remark: link 0 -> 1: 2 transfers, 64 bytes
// CODED: remark: link 1 -> 0: 2 transfers, 64 bytes
//
// mpmd-memory counts the codecs' buffers (nn.quantize's payload and
// scales, nn.dequantize's value: fragment temporaries like any other):
// 64 bytes of temporaries on each rank that the uncompressed program does
// not have, which raise rank 0's peak from 512 to 576 bytes.
// RUN: sed 's/microbatches 4/microbatches 2/' %S/Inputs/chain-2x1.mlir | tandem-opt --mpmd-schedule=schedule=1f1b --mpmd-lower-transfers --mpmd-verify --mpmd-memory -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=PLAINMEM
// RUN: sed 's/microbatches 4/microbatches 2/' %S/Inputs/chain-2x1.mlir | tandem-opt --mpmd-compress-transfers="activations=int8 gradients=int8" --mpmd-schedule=schedule=1f1b --mpmd-lower-transfers --mpmd-verify --mpmd-memory -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=CODEDMEM
// PLAINMEM: remark: rank 0: peak 512 bytes; {{.*}}, temporaries 0
// PLAINMEM: remark: rank 1: peak 448 bytes; {{.*}}, temporaries 0
// CODEDMEM: remark: rank 0: peak 576 bytes; {{.*}}, temporaries 64
// CODEDMEM: remark: rank 1: peak 448 bytes; {{.*}}, temporaries 64
