// mpmd-remat recompute-splits: a split whose results the backward reads all
// of is recomputed there from its operand, which the forward stashes
// instead (the same bytes): @s0.fwd yields the QKV projection's output
// (2x4x24) where it yielded q, k and v (three 2x4x8), and @s0.bwd begins
// with the split, marked mpmd.remat, feeding nn.attention_grad. A split of
// which the backward reads only some results (%a of %a, %b: the square
// needs a, the plain sum nothing) stays stashed as it was. policy=none
// with it reports nothing; with selective it also applies. tandemc asks
// for it for a target that reads split pieces in place (--target cuda).

// RUN: tandem-opt %s --nn-autodiff=decompose-attention=false --mpmd-partition="function=forward_grad stages=1 microbatches=2" --mpmd-schedule --mpmd-remat="policy=none recompute-splits=true" --mpmd-lower-transfers --mpmd-verify 2>%t.remark | FileCheck %s
// RUN: FileCheck %s --check-prefix=QUIET --allow-empty < %t.remark
// RUN: tandem-opt %s --nn-autodiff=decompose-attention=false --mpmd-partition="function=forward_grad stages=1 microbatches=2" --mpmd-schedule --mpmd-remat="policy=none" | FileCheck %s --check-prefix=KEEP
// RUN: tandem-opt %s --nn-autodiff=decompose-attention=false --mpmd-partition="function=forward_grad stages=1 microbatches=2" --mpmd-schedule --mpmd-remat="policy=selective recompute-splits=true" 2>&1 >/dev/null | FileCheck %s --check-prefix=SEL

// CHECK-LABEL: mpmd.fragment @s0.fwd
// CHECK: %[[QKV:.*]] = nn.matmul
// CHECK: nn.split %[[QKV]] {axis = 2 : i64
// CHECK: mpmd.yield
// CHECK-SAME: tensor<2x4x24xf32>
// CHECK-NOT: tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
// CHECK-LABEL: mpmd.fragment @s0.bwd
// CHECK: %[[Q:.*]]:3 = nn.split %{{.*}} {axis = 2 : i64, mpmd.remat
// CHECK-NOT: nn.split {{.*}}axis = 1 : i64, mpmd.remat
// CHECK: nn.attention_grad %[[Q]]#0, %[[Q]]#1, %[[Q]]#2
// QUIET-NOT: remark

// Without the option the pieces are stashed: three 2x4x8 and the kept %a.
// KEEP-LABEL: mpmd.fragment @s0.fwd
// KEEP: mpmd.yield {{.*}}tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
// KEEP-NOT: mpmd.remat

// SEL: remark: mpmd-remat policy=selective: {{.*}}@s0.bwd keeps [{{.*}}nn.matmul{{.*}}] recomputes

nn.parameter @w : tensor<8x24xf32> = normal(0.1)
nn.parameter @p : tensor<6x6xf32> = normal(0.1)
func.func @forward(%x: tensor<2x4x8xf32>, %u: tensor<2x6xf32>) -> tensor<f32> {
  %w = nn.param @w : tensor<8x24xf32>
  %qkv = nn.matmul %x, %w : tensor<2x4x8xf32>, tensor<8x24xf32> -> tensor<2x4x24xf32>
  %q, %k, %v = nn.split %qkv {axis = 2 : i64, sizes = array<i64: 8, 8, 8>} : tensor<2x4x24xf32> -> tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
  %y = nn.attention %q, %k, %v {causal, heads = 2 : i64} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %yy = nn.mul %y, %y : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %l1 = nn.reduce_sum %yy [0, 1, 2] : tensor<2x4x8xf32> -> tensor<f32>
  %p = nn.param @p : tensor<6x6xf32>
  %uw = nn.matmul %u, %p : tensor<2x6xf32>, tensor<6x6xf32> -> tensor<2x6xf32>
  %a, %b = nn.split %uw {axis = 1 : i64, sizes = array<i64: 2, 4>} : tensor<2x6xf32> -> tensor<2x2xf32>, tensor<2x4xf32>
  %aa = nn.mul %a, %a : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  %l2 = nn.reduce_sum %aa [0, 1] : tensor<2x2xf32> -> tensor<f32>
  %l3 = nn.reduce_sum %b [0, 1] : tensor<2x4xf32> -> tensor<f32>
  %l12 = nn.add %l1, %l2 : tensor<f32>, tensor<f32> -> tensor<f32>
  %l = nn.add %l12, %l3 : tensor<f32>, tensor<f32> -> tensor<f32>
  return %l : tensor<f32>
}
