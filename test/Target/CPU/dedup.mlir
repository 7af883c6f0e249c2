// RUN: tandem-translate %s --tandem-to-source | FileCheck %s

// Two layers with the same structure, shapes and types, in two fragments
// and a function: one group function serves every call. A group that
// differs only in a constant is a different function, and so is the same
// chain run as a matmul's in-place epilogue.

// CHECK: // tandem-cpu: 3 function(s), 3 fused group function(s) for 4 group call(s)
// CHECK: void [[$SAME:tk_fused_[0-9a-f]+]](
// CHECK-NEXT: // nn.mul, nn.add, nn.relu
// CHECK: void [[$EPILOGUE:tk_fused_[0-9a-f]+]](
// CHECK-NEXT: // epilogue of nn.matmul: nn.mul, nn.add, nn.relu
// CHECK: void [[$OTHER:tk_fused_[0-9a-f]+]](
// CHECK-NEXT: // nn.mul, nn.add, nn.relu
// CHECK-NOT: void tk_fused_

// CHECK-LABEL: extern "C" int tandem_fwd_{{[0-9a-f]+}}(
// CHECK: [[$SAME]](
// CHECK: [[$EPILOGUE]](
// CHECK: return 0;
// CHECK-LABEL: extern "C" int tandem_fwd_{{[0-9a-f]+}}(
// CHECK: [[$SAME]](
// CHECK: return 0;
// CHECK-LABEL: extern "C" int tandem_other(
// CHECK: [[$OTHER]](
// CHECK: return 0;
mpmd.program @step stages 2 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @s0.fwd stage 0 chunk 0 kind fwd (%x: tensor<4x8xf32> {mpmd.input = 0 : i64}, %a: tensor<4x8xf32> {mpmd.input = 1 : i64}, %b: tensor<8xf32> {mpmd.input = 2 : i64}) -> tensor<4x8xf32> {
    %0 = nn.mul %x, %a : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
    %1 = nn.add %0, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    %2 = nn.relu %1 : tensor<4x8xf32>
    %q = nn.matmul %a, %a {transpose_lhs} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<8x8xf32>
    %m = nn.matmul %2, %q : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
    %3 = nn.mul %m, %a : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
    %4 = nn.add %3, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    %5 = nn.relu %4 : tensor<4x8xf32>
    mpmd.yield %5 : tensor<4x8xf32>
  }
  mpmd.fragment @s1.fwd stage 1 chunk 0 kind fwd (%x: tensor<4x8xf32> {mpmd.input = 0 : i64}, %a: tensor<4x8xf32> {mpmd.input = 1 : i64}, %b: tensor<8xf32> {mpmd.input = 2 : i64}) -> tensor<4x8xf32> {
    %0 = nn.mul %x, %a : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
    %1 = nn.add %0, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    %2 = nn.relu %1 : tensor<4x8xf32>
    mpmd.yield %2 : tensor<4x8xf32>
  }
}

func.func @other(%x: tensor<4x8xf32>, %a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = nn.constant dense<2.0> : tensor<f32>
  %0 = nn.mul %x, %a : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = nn.add %0, %c : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %2 = nn.relu %1 : tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}
