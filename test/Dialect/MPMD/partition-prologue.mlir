// RUN: tandem-opt %s --mpmd-partition="function=f stages=2 microbatches=2" | FileCheck %s
// RUN: tandem-opt %s --mpmd-partition="function=f stages=2 microbatches=2" --mpmd-schedule --mpmd-lower-transfers --mpmd-verify -o %t.s2.mlir
// RUN: tandem-opt %s --mpmd-partition="function=f stages=1 microbatches=2" --mpmd-schedule --mpmd-lower-transfers --mpmd-verify -o %t.s1.mlir
// RUN: tandem-eval %t.s2.mlir --program pipeline --seed 3 --save-outputs %t.s2.out
// RUN: tandem-eval %t.s1.mlir --program pipeline --seed 3 --save-outputs %t.s1.out
// RUN: cmp %t.s1.out %t.s2.out

// Work that depends only on parameters (here each read's cast to bf16, as
// mixed precision writes it) runs once per step in the owner's prologue,
// not once per microbatch; the LM head's stage receives the bf16 copy, half
// the bytes of the f32 master.

// CHECK-LABEL: mpmd.program @pipeline stages 2
// CHECK: mpmd.fragment @s0.prologue stage 0 chunk 0 kind step_prologue (%[[W:.*]]: tensor<6x4xf32> {mpmd.param = @wte}) -> (tensor<6x4xbf16>, tensor<6x4xbf16>)
// CHECK-NEXT: %[[A:.*]] = nn.cast %[[W]] {nn.id = 1 : i64} : tensor<6x4xf32> to tensor<6x4xbf16>
// CHECK-NEXT: %[[B:.*]] = nn.cast %[[W]] {nn.id = 5 : i64} : tensor<6x4xf32> to tensor<6x4xbf16>
// CHECK-NEXT: mpmd.yield %[[A]], %[[B]]
// CHECK: mpmd.fragment @s0.fwd stage 0 chunk 0 kind fwd (%[[E:.*]]: tensor<6x4xbf16>, %{{.*}}: tensor<2x3xi32> {mpmd.input = 0 : i64})
// CHECK-NEXT: nn.embedding %[[E]]
// CHECK: mpmd.fragment @s1.fwd stage 1 chunk 0 kind fwd (%{{.*}}: tensor<2x3x4xbf16>, %{{.*}}: tensor<6x4xbf16>)
// CHECK-NOT: nn.cast {{.*}}to tensor<6x4xbf16>
// CHECK: mpmd.transfer @s0.prologue[0] -> @s0.fwd[0] : tensor<6x4xbf16>
// CHECK: mpmd.transfer @s0.prologue[1] -> @s1.fwd[1] : tensor<6x4xbf16>
nn.parameter @wte : tensor<6x4xf32> = normal(0.5)
func.func @f(%ids: tensor<2x3xi32>) -> tensor<f32> {
  %wte = nn.param @wte {nn.id = 0 : i64} : tensor<6x4xf32>
  %wb = nn.cast %wte {nn.id = 1 : i64} : tensor<6x4xf32> to tensor<6x4xbf16>
  %x = nn.embedding %wb, %ids {nn.id = 2 : i64} : tensor<6x4xbf16>, tensor<2x3xi32> -> tensor<2x3x4xbf16>
  %x1 = nn.stage_end %x {nn.id = 3 : i64} : tensor<2x3x4xbf16>
  %head = nn.param @wte {nn.id = 4 : i64} : tensor<6x4xf32>
  %hb = nn.cast %head {nn.id = 5 : i64} : tensor<6x4xf32> to tensor<6x4xbf16>
  %y = nn.matmul %x1, %hb {nn.id = 6 : i64, transpose_rhs} : tensor<2x3x4xbf16>, tensor<6x4xbf16> -> tensor<2x3x6xbf16>
  %yf = nn.cast %y {nn.id = 7 : i64} : tensor<2x3x6xbf16> to tensor<2x3x6xf32>
  %l = nn.reduce_sum %yf [0, 1, 2] {nn.id = 8 : i64} : tensor<2x3x6xf32> -> tensor<f32>
  return %l : tensor<f32>
}
