// Every diagnostic of mpmd-compress-transfers.

// RUN: not tandem-opt %S/Inputs/chain-2x1.mlir --mpmd-compress-transfers="activations=int4" 2>&1 | FileCheck %s --check-prefix=POLICY
// POLICY: error: mpmd-compress-transfers: activations must be none, int8, fp8, fp8e4m3, fp8e5m2, bf16 or f16, found 'int4'
// RUN: not tandem-opt %S/Inputs/chain-2x1.mlir --mpmd-compress-transfers="gradients=bf8" 2>&1 | FileCheck %s --check-prefix=GRADS
// GRADS: error: mpmd-compress-transfers: gradients must be none, int8, fp8, fp8e4m3, fp8e5m2, bf16 or f16, found 'bf8'
// RUN: not tandem-opt %S/Inputs/chain-2x1.mlir --mpmd-compress-transfers="activations=int8 block=0" 2>&1 | FileCheck %s --check-prefix=BLOCK
// BLOCK: error: mpmd-compress-transfers: block must be at least 1, found 0
// RUN: not tandem-opt %S/Inputs/chain-2x1.mlir --mpmd-compress-transfers="activations=int8 edges=0-x" 2>&1 | FileCheck %s --check-prefix=EDGES
// EDGES: error: mpmd-compress-transfers: edges are stage pairs a-b, found '0-x'
// Codecs go on logical transfers, before they become send/recv.
// RUN: sed 's/microbatches 4/microbatches 2/' %S/Inputs/chain-2x1.mlir | tandem-opt --mpmd-schedule=schedule=1f1b --mpmd-lower-transfers | not tandem-opt --mpmd-compress-transfers="activations=int8" 2>&1 | FileCheck %s --check-prefix=LOWERED
// LOWERED: error: mpmd-compress-transfers: the program already has send/recv actions; run it before mpmd-lower-transfers
// RUN: not tandemc %S/Inputs/chain-2x1.mlir -o %t --compress "activations={int8}" 2>&1 | FileCheck %s --check-prefix=BRACES
// BRACES: --compress takes pass options (name=value ...), found braces in 'activations={int8}'
