// RUN: tandem-opt %s --nn-optimizer="optimizer=sgd lr=0.1" | FileCheck %s --check-prefix=SGD
// RUN: tandem-opt %s --nn-optimizer="optimizer=momentum lr=0.1 momentum=0.8 weight-decay=0.5" | FileCheck %s --check-prefix=MOM
// RUN: tandem-opt %s --nn-optimizer="optimizer=adamw lr=0.01 decay=all no-decay=ln." | FileCheck %s --check-prefix=ADAMW
// RUN: tandem-opt %s --nn-optimizer="optimizer=sgd clip-norm=1.0" | FileCheck %s --check-prefix=CLIP
// RUN: tandem-opt %s --nn-optimizer="optimizer=sgd lr=0.1 schedule=warmup-cosine warmup-steps=10 total-steps=100 min-lr=0.001" | FileCheck %s --check-prefix=COS
// RUN: tandem-opt %s --nn-optimizer="optimizer=adamw result=step" | tandem-opt | FileCheck %s --check-prefix=ROUNDTRIP

// z = x·w + b; y = z·ln.weight. The returned "gradients" are arbitrary
// tensors of the right types, not the true derivatives: this file checks the
// update IR the pass builds, which depends only on their types and on
// nn.gradients (OptimizerTest.cpp checks the numbers against a reference).
// @unused has no gradient.
nn.parameter @w : tensor<3x4xf32> = normal(0.02)
nn.parameter @b : tensor<4xf32> = zeros
nn.parameter @ln.weight : tensor<4xf32> = ones
nn.parameter @unused : tensor<2xf32> = zeros

func.func @forward_grad(%x: tensor<2x3xf32>)
    -> (tensor<f32>, tensor<3x4xf32>, tensor<4xf32>, tensor<4xf32>)
    attributes {nn.gradients = [@w, @b, @ln.weight]} {
  %w = nn.param @w {nn.id = 0 : i64} : tensor<3x4xf32>
  %b = nn.param @b {nn.id = 1 : i64} : tensor<4xf32>
  %g = nn.param @ln.weight {nn.id = 2 : i64} : tensor<4xf32>
  %xw = nn.matmul %x, %w {nn.id = 3 : i64} : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
  %z = nn.add %xw, %b {nn.id = 4 : i64} : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
  %y = nn.mul %z, %g {nn.id = 5 : i64} : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
  %loss = nn.reduce_sum %y [0, 1] {nn.id = 6 : i64} : tensor<2x4xf32> -> tensor<f32>
  %dg = nn.reduce_sum %z [0] {test.grad} : tensor<2x4xf32> -> tensor<4xf32>
  %dw = nn.matmul %x, %y {transpose_lhs, test.grad} : tensor<2x3xf32>, tensor<2x4xf32> -> tensor<3x4xf32>
  return %loss, %dw, %g, %dg : tensor<f32>, tensor<3x4xf32>, tensor<4xf32>, tensor<4xf32>
}

// SGD: nn.parameter @unused
// SGD-NEXT: nn.parameter @opt.step : tensor<f32> = zeros
// SGD-NOT: nn.parameter @opt.
// SGD-LABEL: func.func @train_step
// SGD-SAME: (%[[X:.*]]: tensor<2x3xf32>) -> (tensor<f32>, tensor<3x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>)
// SGD-SAME: attributes {nn.updates = [@w, @b, @ln.weight, @opt.step]}
// The body of @forward_grad, copied with its attributes.
// SGD: nn.param @w {nn.id = 0 : i64}
// SGD: %[[LOSS:.*]] = nn.reduce_sum %{{.*}} [0, 1] {nn.id = 6 : i64}
// SGD: %[[DG:.*]] = nn.reduce_sum %{{.*}} [0] {test.grad}
// SGD: %[[DW:.*]] = nn.matmul %[[X]], %{{.*}} {test.grad, transpose_lhs}
// SGD: %[[T:.*]] = nn.param @opt.step {nn.optimizer} : tensor<f32>
// SGD: %[[ONE:.*]] = nn.constant dense<1.000000e+00> : tensor<f32> {nn.optimizer}
// SGD: %[[T1:.*]] = nn.add %[[T]], %[[ONE]] {nn.optimizer}
// SGD: %[[LR:.*]] = nn.constant dense<1.000000e-01> : tensor<f32> {nn.optimizer}
// No decay for sgd by default.
// SGD-NOT: nn.mul %{{.*}}, %{{.*}} {nn.optimizer} : tensor<3x4xf32>, tensor<3x4xf32>
// SGD: %[[PW:.*]] = nn.param @w {nn.optimizer}
// SGD: %[[SW:.*]] = nn.mul %[[DW]], %[[LR]] {nn.optimizer}
// SGD: %[[NW:.*]] = nn.sub %[[PW]], %[[SW]] {nn.optimizer}
// SGD: return %[[LOSS]], %[[NW]], %{{.*}}, %{{.*}}, %[[T1]] :

// MOM: nn.parameter @opt.step : tensor<f32> = zeros
// MOM-NEXT: nn.parameter @opt.mom.w : tensor<3x4xf32> = zeros
// MOM-NEXT: nn.parameter @opt.mom.b : tensor<4xf32> = zeros
// MOM-NEXT: nn.parameter @opt.mom.ln.weight : tensor<4xf32> = zeros
// MOM-LABEL: func.func @train_step
// MOM-SAME: nn.updates = [@w, @b, @ln.weight, @opt.step, @opt.mom.w, @opt.mom.b, @opt.mom.ln.weight]
// MOM: %[[LR:.*]] = nn.constant dense<1.000000e-01> : tensor<f32> {nn.optimizer}
// MOM: %[[WD:.*]] = nn.constant dense<5.000000e-01>
// MOM: %[[LRWD:.*]] = nn.mul %[[LR]], %[[WD]] {nn.optimizer}
// MOM: %[[MU:.*]] = nn.constant dense<8.000000e-01>
// MOM: %[[BUF:.*]] = nn.param @opt.mom.w {nn.optimizer}
// MOM: %[[SCALED:.*]] = nn.mul %[[BUF]], %[[MU]]
// MOM: %[[NEWBUF:.*]] = nn.add %[[SCALED]], %{{.*}} {nn.optimizer} : tensor<3x4xf32>
// The matrix decays (decoupled: from the parameter) ...
// MOM: %[[PW:.*]] = nn.param @w {nn.optimizer}
// MOM: %[[DEC:.*]] = nn.mul %[[PW]], %[[LRWD]]
// MOM: %[[PW1:.*]] = nn.sub %[[PW]], %[[DEC]]
// MOM: %[[STEP:.*]] = nn.mul %[[NEWBUF]], %[[LR]]
// MOM: nn.sub %[[PW1]], %[[STEP]]
// ... the bias does not.
// MOM: %[[PB:.*]] = nn.param @b {nn.optimizer}
// MOM-NEXT: %[[SB:.*]] = nn.mul %{{.*}}, %[[LR]]
// MOM-NEXT: nn.sub %[[PB]], %[[SB]]

// ADAMW: nn.parameter @opt.step : tensor<f32> = zeros
// ADAMW-NEXT: nn.parameter @opt.m.w : tensor<3x4xf32> = zeros
// ADAMW-NEXT: nn.parameter @opt.v.w : tensor<3x4xf32> = zeros
// ADAMW-NEXT: nn.parameter @opt.m.b : tensor<4xf32> = zeros
// ADAMW-NEXT: nn.parameter @opt.v.b : tensor<4xf32> = zeros
// ADAMW-NEXT: nn.parameter @opt.m.ln.weight : tensor<4xf32> = zeros
// ADAMW-NEXT: nn.parameter @opt.v.ln.weight : tensor<4xf32> = zeros
// ADAMW-LABEL: func.func @train_step
// ADAMW-SAME: nn.updates = [@w, @b, @ln.weight, @opt.step, @opt.m.w, @opt.v.w, @opt.m.b, @opt.v.b, @opt.m.ln.weight, @opt.v.ln.weight]
// ADAMW: %[[T1:.*]] = nn.add %{{.*}}, %{{.*}} {nn.optimizer} : tensor<f32>
// ADAMW: %[[LR:.*]] = nn.constant dense<0.00999999977>
// ADAMW: %[[WD:.*]] = nn.constant dense<0.00999999977>
// ADAMW: %[[LRWD:.*]] = nn.mul %[[LR]], %[[WD]]
// Bias corrections 1 − β^(t+1) through tanh: ln(0.9)/2 and ln(0.999)/2.
// ADAMW: nn.constant dense<-0.0526802577>
// ADAMW: nn.mul %[[T1]]
// ADAMW: nn.tanh
// ADAMW: %[[C1:.*]] = nn.div
// ADAMW: nn.constant dense<-5.00250142E-4>
// ADAMW: nn.mul %[[T1]]
// ADAMW: nn.tanh
// ADAMW: %[[C2:.*]] = nn.div
// ADAMW: nn.param @opt.m.w
// ADAMW: nn.param @opt.v.w
// ADAMW: %[[VH:.*]] = nn.div %{{.*}}, %[[C2]]
// ADAMW: nn.sqrt %[[VH]]
// ADAMW: nn.div %{{.*}}, %[[C1]]
// decay=all: @w and @b decay; no-decay=ln. exempts @ln.weight.
// ADAMW: %[[PW:.*]] = nn.param @w {nn.optimizer}
// ADAMW-NEXT: nn.mul %[[PW]], %[[LRWD]]
// ADAMW: %[[PB:.*]] = nn.param @b {nn.optimizer}
// ADAMW-NEXT: nn.mul %[[PB]], %[[LRWD]]
// ADAMW: %[[PG:.*]] = nn.param @ln.weight {nn.optimizer}
// ADAMW-NOT: %[[LRWD]]
// ADAMW: return

// Squared norms added in nn.gradients order: w, b (here %g), ln.weight.
// CLIP-LABEL: func.func @train_step
// CLIP: %[[G:.*]] = nn.param @ln.weight {nn.id = 2 : i64}
// CLIP: %[[DG:.*]] = nn.reduce_sum %{{.*}} [0] {test.grad}
// CLIP: %[[DW:.*]] = nn.matmul
// CLIP: %[[SQW:.*]] = nn.mul %[[DW]], %[[DW]] {nn.optimizer}
// CLIP: %[[NW:.*]] = nn.reduce_sum %[[SQW]] [0, 1] {nn.optimizer} : tensor<3x4xf32> -> tensor<f32>
// CLIP: %[[SQB:.*]] = nn.mul %[[G]], %[[G]] {nn.optimizer}
// CLIP: %[[NB:.*]] = nn.reduce_sum %[[SQB]] [0] {nn.optimizer}
// CLIP: %[[S1:.*]] = nn.add %[[NW]], %[[NB]] {nn.optimizer}
// CLIP: %[[SQG:.*]] = nn.mul %[[DG]], %[[DG]] {nn.optimizer}
// CLIP: %[[NG:.*]] = nn.reduce_sum %[[SQG]] [0] {nn.optimizer}
// CLIP: %[[S2:.*]] = nn.add %[[S1]], %[[NG]] {nn.optimizer}
// CLIP: %[[NORM:.*]] = nn.sqrt %[[S2]] {nn.optimizer}
// CLIP: %[[EPS:.*]] = nn.constant dense<9.99999997E-7>
// CLIP: %[[CLIP:.*]] = nn.constant dense<1.000000e+00>
// CLIP: %[[ONE:.*]] = nn.constant dense<1.000000e+00>
// CLIP: %[[DEN:.*]] = nn.add %[[NORM]], %[[EPS]]
// CLIP: %[[RATIO:.*]] = nn.div %[[CLIP]], %[[DEN]]
// CLIP: %[[SCALE:.*]] = nn.minimum %[[ONE]], %[[RATIO]]
// CLIP: nn.mul %[[DW]], %[[SCALE]]
// CLIP: nn.mul %[[G]], %[[SCALE]]
// CLIP: nn.mul %[[DG]], %[[SCALE]]

// lr(t) = lr·min(1, (t+1)/10)·... with the cosine over steps 10..100.
// COS-LABEL: func.func @train_step
// COS: %[[T:.*]] = nn.param @opt.step
// COS: %[[W:.*]] = nn.constant dense<1.000000e+01>
// COS: %[[LEN:.*]] = nn.constant dense<9.000000e+01>
// COS: %[[D:.*]] = nn.sub %[[T]], %[[W]]
// COS: %[[P0:.*]] = nn.div %[[D]], %[[LEN]]
// COS: %[[ZERO:.*]] = nn.constant dense<0.000000e+00>
// COS: %[[P1:.*]] = nn.maximum %[[P0]], %[[ZERO]]
// COS: %[[ONE:.*]] = nn.constant dense<1.000000e+00>
// COS: %[[P:.*]] = nn.minimum %[[P1]], %[[ONE]]
// COS: %[[PI:.*]] = nn.constant dense<3.14159274>
// COS: %[[ANGLE:.*]] = nn.mul %[[P]], %[[PI]]
// COS: %[[COS:.*]] = nn.cos %[[ANGLE]] {nn.optimizer}
// COS: %[[AMP:.*]] = nn.constant dense<4.950000e-02>
// COS: %[[MIN:.*]] = nn.constant dense<1.000000e-03>
// COS: %[[OPC:.*]] = nn.add %[[ONE]], %[[COS]]
// COS: %[[SC:.*]] = nn.mul %[[AMP]], %[[OPC]]
// COS: %[[RATE:.*]] = nn.add %[[MIN]], %[[SC]]
// COS: %[[WS:.*]] = nn.constant dense<1.000000e+01>
// COS: %[[TP1:.*]] = nn.add %[[T]], %[[ONE]]
// COS: %[[FR:.*]] = nn.div %[[TP1]], %[[WS]]
// COS: %[[FAC:.*]] = nn.minimum %[[FR]], %[[ONE]]
// COS: %[[LR:.*]] = nn.mul %[[RATE]], %[[FAC]]
// COS: nn.mul %{{.*}}, %[[LR]] {nn.optimizer} : tensor<3x4xf32>

// The result prints, verifies and re-parses; `result` names it.
// ROUNDTRIP: func.func @forward_grad
// ROUNDTRIP: func.func @step(
// ROUNDTRIP-SAME: nn.updates
