// RUN: tandem-opt %s --nn-autodiff --nn-optimizer="optimizer=adamw lr=0.01 weight-decay=0.1" --mpmd-partition="stages=2 microbatches=2" | FileCheck %s
// RUN: tandem-opt %s --nn-autodiff --nn-optimizer="optimizer=adamw lr=0.01 weight-decay=0.1" --mpmd-partition="stages=2 microbatches=2" --mpmd-schedule=schedule=1f1b --mpmd-lower-transfers --mpmd-verify -o /dev/null

// The optimizer's scalars (the step counter plus one, the weight-decay
// step, AdamW's bias corrections) depend on parameters and constants only.
// Every stage computes them itself from @opt.step, which its owner (stage
// 0) hands over from its prologue like any parameter read elsewhere. So
// stage 1's optimizer is one fragment that waits for no other stage's
// step: nothing goes from @s0.step0 to stage 1, and no moment is returned
// twice for a second optimizer fragment.

// CHECK: mpmd.fragment @s0.prologue stage 0 chunk 0 kind step_prologue (%[[P:.*]]: tensor<f32> {mpmd.param = @opt.step}) -> tensor<f32>
// CHECK-NEXT: mpmd.yield %[[P]]
// Stage 0 still updates the counter.
// CHECK: mpmd.fragment @s0.step0 stage 0 chunk 0 kind optimizer (%[[C0:[^:]*]]: tensor<f32> {mpmd.param = @opt.step}
// CHECK-SAME: tensor<f32> {mpmd.update = @opt.step}
// CHECK: %[[ONE0:.*]] = nn.constant dense<1.000000e+00>
// CHECK-NEXT: %[[NEXT0:.*]] = nn.add %[[C0]], %[[ONE0]]
// CHECK: mpmd.yield {{.*}}%[[NEXT0]]
// Stage 1: the counter arrives as a plain argument (stage 0 owns it) and
// the same ops derive the scalars from it; its results are only its own
// parameters' updates and the loss.
// CHECK: mpmd.fragment @s1.step0 stage 1 chunk 0 kind optimizer (%[[C1:[^:]*]]: tensor<f32>, %{{.*}}: tensor<4x3xf32> {mpmd.param = @opt.m.w1}
// CHECK-SAME: -> (tensor<f32> {mpmd.output = 0 : i64}, tensor<4x3xf32> {mpmd.update = @w1}, tensor<4x3xf32> {mpmd.update = @opt.m.w1}, tensor<4x3xf32> {mpmd.update = @opt.v.w1})
// CHECK-NEXT: %[[ONE1:.*]] = nn.constant dense<1.000000e+00>
// CHECK-NEXT: %[[NEXT1:.*]] = nn.add %[[C1]], %[[ONE1]]
// CHECK: nn.tanh
// CHECK: nn.tanh
// CHECK-NOT: mpmd.fragment @s1.step1
// CHECK-NOT: mpmd.transfer @s0.step0
// CHECK: mpmd.transfer @s0.prologue[0] -> @s1.step0[0] : tensor<f32>
// CHECK-NOT: mpmd.transfer @s0.step0
// CHECK-NOT: mpmd.fragment @s1.step1

// With a global gradient norm, the update waits for the clipping factor,
// which stage 1 completes a level later. The parts of the update that do
// not depend on it (the decayed parameter, m * beta1, v * beta2) run with
// it, not a level early: the fragment that writes @w0, @opt.m.w0 and
// @opt.v.w0 binds all three itself, and the only parameter-sized value it
// receives is the averaged gradient.
// RUN: tandem-opt %s --nn-autodiff --nn-optimizer="optimizer=adamw lr=0.01 weight-decay=0.1 clip-norm=1.0" --mpmd-partition="stages=2 microbatches=2" | FileCheck %s --check-prefix=CLIP
// CLIP: mpmd.fragment @s0.step1 stage 0 chunk 0 kind optimizer (%{{[^:]*}}: tensor<4x4xf32>, %{{.*}}: tensor<4x4xf32> {mpmd.param = @opt.m.w0}, %{{.*}}: tensor<4x4xf32> {mpmd.param = @opt.v.w0}, %{{.*}}: tensor<4x4xf32> {mpmd.param = @w0}) -> (tensor<4x4xf32> {mpmd.update = @w0}, tensor<4x4xf32> {mpmd.update = @opt.m.w0}, tensor<4x4xf32> {mpmd.update = @opt.v.w0})
// CLIP: mpmd.transfer @s0.step0[0] -> @s0.step1[0] : tensor<4x4xf32>
// CLIP-NOT: -> @s0.step1[{{[0-9]+}}] : tensor<4x4xf32>

module {
  nn.parameter @w0 : tensor<4x4xf32> = uniform(-0.5, 0.5)
  nn.parameter @w1 : tensor<4x3xf32> = uniform(-0.5, 0.5)
  func.func @forward(%x: tensor<2x4xf32>, %t: tensor<2xi32>) -> tensor<f32> {
    %0 = nn.param @w0 : tensor<4x4xf32>
    %1 = nn.matmul %x, %0 : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    %2 = nn.stage_end %1 : tensor<2x4xf32>
    %3 = nn.param @w1 : tensor<4x3xf32>
    %4 = nn.matmul %2, %3 : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
    %5 = nn.cross_entropy %4, %t : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
    return %5 : tensor<f32>
  }
}
