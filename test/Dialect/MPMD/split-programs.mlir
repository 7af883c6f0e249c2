// The 4-stage chain, scheduled with 1F1B and lowered, split into one module
// per rank; the split output re-parses and verifies. The pass writes no
// files (tandemc writes rank<N>.mlir: test/Driver/compile.test).
// RUN: tandem-opt %S/Inputs/chain-4x1.mlir --mpmd-schedule=schedule=1f1b --mpmd-lower-transfers --mpmd-verify --mpmd-split-programs > %t.split
// RUN: FileCheck %s --input-file=%t.split
// RUN: tandem-opt %t.split | FileCheck %s --check-prefix=REPARSE
// RUN: FileCheck %s --check-prefix=RANK2 --input-file=%t.split

// The top module keeps its parameters; the program is replaced by the ranks.
// CHECK: module {
// CHECK-NEXT: nn.parameter @w0
// CHECK-NEXT: nn.parameter @w1
// CHECK-NEXT: nn.parameter @w2
// CHECK-NEXT: nn.parameter @w3
// CHECK-NOT: mpmd.program
// CHECK: module @rank0 {
// CHECK-NEXT: nn.parameter @w0 : tensor<4x4xf32>
// CHECK-NEXT: mpmd.program @step stages 4 chunks 1 replicas 1 microbatches 4 attributes {mpmd.split_rank = 0 : i64} {

// Rank 0's own fragments, whole.
// CHECK-NEXT: mpmd.fragment @pro stage 0 chunk 0 kind step_prologue (%{{.*}}: tensor<4x4xf32> {mpmd.param = @w0})
// CHECK: mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%{{.*}}: tensor<4x4xf32> {mpmd.input = 0 : i64}, %{{.*}}: tensor<4x4xf32> {mpmd.param = @w0})
// CHECK: nn.add
// CHECK: mpmd.fragment @b0 stage 0 chunk 0 kind bwd
// CHECK: mpmd.fragment @o0 stage 0 chunk 0 kind optimizer

// Producers of received slots are declarations only.
// CHECK: mpmd.fragment @b1 stage 1 chunk 0 kind bwd () -> (tensor<4x4xf32>, tensor<4x4xf32>) attributes {mpmd.remote}{{$}}
// CHECK-NEXT: mpmd.fragment @b3 stage 3 chunk 0 kind bwd () -> (tensor<4x4xf32>, tensor<4x4xf32>) attributes {mpmd.remote}{{$}}
// CHECK-NOT: nn.constant

// Transfers into rank 0's fragments only (outgoing ones are gone).
// CHECK: mpmd.transfer @b1[0] -> @b0[0]
// CHECK-NEXT: mpmd.transfer @f0[0] -> @b0[1]
// CHECK-NEXT: mpmd.transfer @b0[1] -> @o0[0]
// CHECK-NEXT: mpmd.transfer @b3[1] -> @o0[2]

// Only rank 0's action list, unchanged.
// CHECK-NEXT: mpmd.rank 0 {
// CHECK-NEXT: mpmd.run @pro
// CHECK-NEXT: mpmd.send @pro[0] to 3 channel 6
// CHECK-NEXT: mpmd.run @f0 microbatch 0
// CHECK-NEXT: mpmd.send @f0[0] microbatch 0 to 1 channel 1
// CHECK: mpmd.recv @b1[0] microbatch 0 from 1 channel 0
// CHECK: mpmd.run @o0
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }

// CHECK-NEXT: module @rank1 {
// CHECK-NEXT: nn.parameter @w1 : tensor<4x4xf32>
// CHECK-NEXT: mpmd.program @step {{.*}} attributes {mpmd.split_rank = 1 : i64}
// CHECK-NOT: mpmd.rank 0
// CHECK: mpmd.rank 1 {
// CHECK: module @rank2 {
// CHECK: module @rank3 {
// CHECK-NEXT: nn.parameter @w3 : tensor<4x4xf32>
// CHECK-NEXT: mpmd.program @step
// CHECK-NEXT: mpmd.fragment @pro stage 0 chunk 0 kind step_prologue () -> tensor<4x4xf32> attributes {mpmd.remote}{{$}}
// CHECK: mpmd.fragment @epi stage 3 chunk 0 kind step_epilogue
// CHECK: mpmd.transfer @pro[0] -> @f3[1]
// CHECK: mpmd.rank 3 {
// CHECK-NOT: mpmd.rank

// REPARSE: module @rank0 {
// REPARSE: mpmd.split_rank = 0
// REPARSE: module @rank3 {
// REPARSE: mpmd.split_rank = 3

// Rank 2's module on its own: its parameter, its program, the remote
// declaration of the fragment it receives from, and its list only.
// RANK2: module @rank2 {
// RANK2-NEXT: nn.parameter @w2 : tensor<4x4xf32>
// RANK2-NEXT: mpmd.program @step stages 4 chunks 1 replicas 1 microbatches 4 attributes {mpmd.split_rank = 2 : i64} {
// RANK2-NEXT: mpmd.fragment @f1 stage 1 chunk 0 kind fwd () -> tensor<4x4xf32> attributes {mpmd.remote}{{$}}
// RANK2-NOT: module @rank
// RANK2: mpmd.rank 2 {
// RANK2-NOT: mpmd.rank
// RANK2: module @rank3 {
