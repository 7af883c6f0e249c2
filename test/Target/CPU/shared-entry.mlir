// RUN: tandem-translate %s --tandem-to-source | FileCheck %s

// A fragment's entry point is named by its kind and a hash of its code, not
// its stage: equal fragments (here two chunks of one stage) share one entry
// point, written once; a fragment with other code gets another name. So the
// middle ranks of a GPT, which run equal code, compile to equal sources.

// CHECK: // tandem-cpu: 3 function(s)
// CHECK: extern "C" int [[$SAME:tandem_fwd_[0-9a-f]+]](
// CHECK-NOT: extern "C" int [[$SAME]](
// CHECK: extern "C" int tandem_bwd_{{[0-9a-f]+}}(
// CHECK-NOT: extern "C" int
mpmd.program @step stages 1 chunks 2 replicas 1 microbatches 1 {
  mpmd.fragment @s0.fwd stage 0 chunk 0 kind fwd (%x: tensor<4x8xf32> {mpmd.input = 0 : i64}, %b: tensor<8xf32> {mpmd.input = 1 : i64}) -> tensor<4x8xf32> {
    %0 = nn.add %x, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    %1 = nn.relu %0 : tensor<4x8xf32>
    mpmd.yield %1 : tensor<4x8xf32>
  }
  mpmd.fragment @s1.fwd stage 0 chunk 1 kind fwd (%x: tensor<4x8xf32> {mpmd.input = 0 : i64}, %b: tensor<8xf32> {mpmd.input = 1 : i64}) -> tensor<4x8xf32> {
    %0 = nn.add %x, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    %1 = nn.relu %0 : tensor<4x8xf32>
    mpmd.yield %1 : tensor<4x8xf32>
  }
  mpmd.fragment @s0.bwd stage 0 chunk 0 kind bwd (%x: tensor<4x8xf32> {mpmd.input = 0 : i64}, %b: tensor<8xf32> {mpmd.input = 1 : i64}) -> tensor<4x8xf32> {
    %0 = nn.add %x, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    %1 = nn.relu %0 : tensor<4x8xf32>
    mpmd.yield %1 : tensor<4x8xf32>
  }
}
