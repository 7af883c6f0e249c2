// mpmd-remat policy=annotated recomputes the ops the model marks
// nn.recompute (from_jax marks the ops of a jax.checkpoint region) and keeps
// every other value the backward reads. The model is remat.mlir's with tanh
// and softmax marked: @s0.bwd keeps z and h (the matmuls, 128 bytes a
// microbatch instead of 192) and recomputes a = tanh z and s = softmax a;
// stage 1 has no mark and keeps t. The mark survives autodiff and the
// partition, rides on the clones, and other policies ignore it.

// RUN: tandem-opt %s --nn-autodiff --mpmd-partition="function=forward_grad stages=2 microbatches=2" --mpmd-schedule --mpmd-remat=policy=annotated --mpmd-lower-transfers --mpmd-verify 2>%t.remark | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK < %t.remark
// RUN: tandem-opt %s --nn-autodiff --mpmd-partition="function=forward_grad stages=2 microbatches=2" --mpmd-schedule --mpmd-remat=policy=selective 2>&1 >/dev/null | FileCheck %s --check-prefix=SEL
// Without a mark, annotated keeps everything (as none does).
// RUN: sed -e 's/ {nn.recompute}//' -e 's/, nn.recompute}/}/' %s > %t.plain.mlir
// RUN: tandem-opt %t.plain.mlir --nn-autodiff --mpmd-partition="function=forward_grad stages=2 microbatches=2" --mpmd-schedule --mpmd-remat=policy=annotated 2>&1 >/dev/null | FileCheck %s --check-prefix=PLAIN

// CHECK: mpmd.fragment @s0.fwd
// CHECK: mpmd.yield %{{.*}}, %[[Z:.*]], %[[H:.*]] : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
// CHECK: mpmd.fragment @s0.bwd stage 0 chunk 0 kind bwd
// CHECK-NEXT: %[[A:.*]] = nn.tanh %{{.*}} {mpmd.remat, nn.id = 2 : i64, nn.recompute}
// CHECK-NEXT: nn.softmax %[[A]] {axis = 1 : i64, mpmd.remat, nn.id = 3 : i64, nn.recompute}
// CHECK-NOT: mpmd.remat

// REMARK: remark: mpmd-remat policy=annotated: stash 128 bytes per microbatch (was 192) besides the stage inputs; recompute {{[0-9]+}} FLOPs per microbatch; @s0.bwd keeps [nn.matmul, nn.matmul] recomputes 2 ops
// REMARK: remark: mpmd-remat policy=annotated: stash 32 bytes per microbatch (was 32) besides the stage inputs; recompute 0 FLOPs per microbatch; @s1.bwd keeps [nn.tanh] recomputes 0 ops
// SEL: remark: mpmd-remat policy=selective: stash 192 bytes per microbatch (was 192)
// PLAIN: remark: mpmd-remat policy=annotated: stash 192 bytes per microbatch (was 192) besides the stage inputs; recompute 0 FLOPs per microbatch

nn.parameter @w0 : tensor<4x8xf32> = normal(0.1)
nn.parameter @w1 : tensor<8x8xf32> = normal(0.1)
nn.parameter @w2 : tensor<8x4xf32> = normal(0.1)
func.func @forward(%x: tensor<2x4xf32>) -> tensor<f32> {
  %w0 = nn.param @w0 : tensor<4x8xf32>
  %z = nn.matmul %x, %w0 : tensor<2x4xf32>, tensor<4x8xf32> -> tensor<2x8xf32>
  %a = nn.tanh %z {nn.recompute} : tensor<2x8xf32>
  %s = nn.softmax %a {axis = 1 : i64, nn.recompute} : tensor<2x8xf32>
  %w1 = nn.param @w1 : tensor<8x8xf32>
  %h = nn.matmul %s, %w1 : tensor<2x8xf32>, tensor<8x8xf32> -> tensor<2x8xf32>
  %g = nn.gelu %h : tensor<2x8xf32>
  %e = nn.stage_end %g : tensor<2x8xf32>
  %w2 = nn.param @w2 : tensor<8x4xf32>
  %y = nn.matmul %e, %w2 : tensor<2x8xf32>, tensor<8x4xf32> -> tensor<2x4xf32>
  %t = nn.tanh %y : tensor<2x4xf32>
  %yy = nn.mul %t, %t : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %l = nn.reduce_sum %yy [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
