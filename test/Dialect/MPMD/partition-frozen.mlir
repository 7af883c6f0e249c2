// RUN: tandem-opt %s --mpmd-partition="function=f stages=2 microbatches=2" | FileCheck %s
// RUN: tandem-opt %s --mpmd-partition="function=f stages=2 microbatches=2" --mpmd-schedule --mpmd-lower-transfers --mpmd-verify -o %t.s2.mlir
// RUN: tandem-opt %s --mpmd-partition="function=f stages=1 microbatches=2" --mpmd-schedule --mpmd-lower-transfers --mpmd-verify -o %t.s1.mlir
// RUN: tandem-eval %t.s2.mlir --program pipeline --seed 3 --save-outputs %t.s2.out
// RUN: tandem-eval %t.s1.mlir --program pipeline --seed 3 --save-outputs %t.s1.out
// RUN: cmp %t.s1.out %t.s2.out

// Frozen parameters are never sent: each stage that reads one binds its
// own copy. Work that reads only step inputs and frozen parameters (the
// gather of the fixed table @t by the ids) runs on the stage of its reader
// instead of stage 0, so nothing 4 wide crosses the edge: only the 2-wide
// stream. Prologue work on a frozen parameter (@t + @e·@uᵀ, read by stage
// 1's head) runs on its reader's stage, which receives the 2-wide @e.

// CHECK-LABEL: mpmd.program @pipeline stages 2
// CHECK: mpmd.fragment @s0.prologue stage 0 chunk 0 kind step_prologue (%{{.*}}: tensor<6x2xf32> {mpmd.param = @e}) -> tensor<6x2xf32>
// CHECK: mpmd.fragment @s1.prologue1 stage 1 chunk 0 kind step_prologue (%{{.*}}: tensor<6x2xf32>, %{{.*}}: tensor<4x2xf32> {mpmd.param = @u}, %{{.*}}: tensor<6x4xf32> {mpmd.param = @t}) -> tensor<6x4xf32>
// CHECK: mpmd.fragment @s0.fwd stage 0 chunk 0 kind fwd (%{{.*}}: tensor<6x2xf32> {mpmd.param = @e}, %{{.*}}: tensor<2x3xi32> {mpmd.input = 0 : i64}) -> tensor<2x3x2xf32>
// CHECK: mpmd.fragment @s1.fwd stage 1 chunk 0 kind fwd (%{{.*}}: tensor<2x3x2xf32>, %{{.*}}: tensor<4x2xf32> {mpmd.param = @u}, %[[T:.*]]: tensor<6x4xf32> {mpmd.param = @t}, %[[IDS:.*]]: tensor<2x3xi32> {mpmd.input = 0 : i64}, %{{.*}}: tensor<6x4xf32>)
// CHECK: nn.embedding %[[T]], %[[IDS]] {nn.id = 6 : i64}
// CHECK-NOT: mpmd.transfer @s0.{{.*}}x4xf32>
// CHECK: mpmd.transfer @s0.prologue[0] -> @s1.prologue1[0] : tensor<6x2xf32>
// CHECK-NEXT: mpmd.transfer @s0.fwd[0] -> @s1.fwd[0] : tensor<2x3x2xf32>
// CHECK-NEXT: mpmd.transfer @s1.prologue1[0] -> @s1.fwd[4] : tensor<6x4xf32>
// CHECK-NOT: mpmd.transfer @s0.{{.*}}x4xf32>
nn.parameter @e : tensor<6x2xf32> = normal(0.5)
nn.parameter @u : tensor<4x2xf32> = orthonormal {frozen, seed = 1 : i64}
nn.parameter @t : tensor<6x4xf32> = normal(0.5) {frozen, seed = 1 : i64}
func.func @f(%ids: tensor<2x3xi32>) -> tensor<f32> {
  %e = nn.param @e {nn.id = 0 : i64} : tensor<6x2xf32>
  %c = nn.embedding %e, %ids {nn.id = 1 : i64} : tensor<6x2xf32>, tensor<2x3xi32> -> tensor<2x3x2xf32>
  %c1 = nn.stage_end %c {nn.id = 2 : i64} : tensor<2x3x2xf32>
  %u = nn.param @u {nn.id = 3 : i64} : tensor<4x2xf32>
  %lift = nn.matmul %c1, %u {nn.id = 4 : i64, transpose_rhs} : tensor<2x3x2xf32>, tensor<4x2xf32> -> tensor<2x3x4xf32>
  %t = nn.param @t {nn.id = 5 : i64} : tensor<6x4xf32>
  %g = nn.embedding %t, %ids {nn.id = 6 : i64} : tensor<6x4xf32>, tensor<2x3xi32> -> tensor<2x3x4xf32>
  %x = nn.add %g, %lift {nn.id = 7 : i64} : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %eh = nn.param @e {nn.id = 8 : i64} : tensor<6x2xf32>
  %uh = nn.param @u {nn.id = 9 : i64} : tensor<4x2xf32>
  %eu = nn.matmul %eh, %uh {nn.id = 10 : i64, transpose_rhs} : tensor<6x2xf32>, tensor<4x2xf32> -> tensor<6x4xf32>
  %th = nn.param @t {nn.id = 11 : i64} : tensor<6x4xf32>
  %w = nn.add %th, %eu {nn.id = 12 : i64} : tensor<6x4xf32>, tensor<6x4xf32> -> tensor<6x4xf32>
  %y = nn.matmul %x, %w {nn.id = 13 : i64, transpose_rhs} : tensor<2x3x4xf32>, tensor<6x4xf32> -> tensor<2x3x6xf32>
  %l = nn.reduce_sum %y [0, 1, 2] {nn.id = 14 : i64} : tensor<2x3x6xf32> -> tensor<f32>
  return %l : tensor<f32>
}
