// Option diagnostics of nn-optimizer: a clear message and a non-zero exit.
//
// RUN: not tandem-opt %s --nn-optimizer="optimizer=adam" 2>&1 | FileCheck %s --check-prefix=OPT
// OPT: error: nn-optimizer: unknown optimizer 'adam'; expected sgd, momentum or adamw
// RUN: not tandem-opt %s --nn-optimizer="decay=biases" 2>&1 | FileCheck %s --check-prefix=DECAY
// DECAY: error: nn-optimizer: unknown decay group 'biases'; expected matrices, all or none
// RUN: not tandem-opt %s --nn-optimizer="schedule=linear" 2>&1 | FileCheck %s --check-prefix=SCHED
// SCHED: error: nn-optimizer: unknown schedule 'linear'; expected constant or warmup-cosine
// RUN: not tandem-opt %s --nn-optimizer="lr=0" 2>&1 | FileCheck %s --check-prefix=LR0
// LR0: error: nn-optimizer: lr must be positive and finite, found 0.000000e+00
// RUN: not tandem-opt %s --nn-optimizer="lr=-0.1" 2>&1 | FileCheck %s --check-prefix=LRNEG
// LRNEG: error: nn-optimizer: lr must be positive and finite, found -1.000000e-01
// RUN: not tandem-opt %s --nn-optimizer="optimizer=momentum momentum=1.0" 2>&1 | FileCheck %s --check-prefix=MOM
// MOM: error: nn-optimizer: momentum must be in [0, 1), found 1.000000e+00
// RUN: not tandem-opt %s --nn-optimizer="beta1=1.0" 2>&1 | FileCheck %s --check-prefix=BETA1
// BETA1: error: nn-optimizer: beta1 must be in [0, 1), found 1.000000e+00
// RUN: not tandem-opt %s --nn-optimizer="beta2=-0.5" 2>&1 | FileCheck %s --check-prefix=BETA2
// BETA2: error: nn-optimizer: beta2 must be in [0, 1), found -5.000000e-01
// RUN: not tandem-opt %s --nn-optimizer="eps=0" 2>&1 | FileCheck %s --check-prefix=EPS
// EPS: error: nn-optimizer: eps must be positive and finite, found 0.000000e+00
// RUN: not tandem-opt %s --nn-optimizer="weight-decay=-0.5" 2>&1 | FileCheck %s --check-prefix=WD
// WD: error: nn-optimizer: weight-decay must be non-negative and finite (or -1 for the optimizer's default), found -5.000000e-01
// RUN: not tandem-opt %s --nn-optimizer="clip-norm=-1" 2>&1 | FileCheck %s --check-prefix=CLIP
// CLIP: error: nn-optimizer: clip-norm must be non-negative and finite (0 turns clipping off), found -1.000000e+00
// RUN: not tandem-opt %s --nn-optimizer="schedule=warmup-cosine" 2>&1 | FileCheck %s --check-prefix=TOTAL
// TOTAL: error: nn-optimizer: schedule warmup-cosine needs total-steps > 0, found 0
// RUN: not tandem-opt %s --nn-optimizer="schedule=warmup-cosine warmup-steps=20 total-steps=10" 2>&1 | FileCheck %s --check-prefix=WARMUP
// WARMUP: error: nn-optimizer: warmup-steps must be in [0, total-steps = 10], found 20
// RUN: not tandem-opt %s --nn-optimizer="schedule=warmup-cosine total-steps=10 min-lr=0.5 lr=0.1" 2>&1 | FileCheck %s --check-prefix=MINLR
// MINLR: error: nn-optimizer: min-lr must be in [0, lr = 1.000000e-01], found 5.000000e-01
// RUN: not tandem-opt %s --nn-optimizer="function=missing" 2>&1 | FileCheck %s --check-prefix=FUNC
// FUNC: error: nn-optimizer: no function @missing (the gradient function, option 'function')

nn.parameter @w : tensor<4xf32> = zeros
func.func @forward_grad(%x: tensor<f32>, %g: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
    attributes {nn.gradients = [@w]} {
  return %x, %g : tensor<f32>, tensor<4xf32>
}
