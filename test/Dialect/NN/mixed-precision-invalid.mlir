// Diagnostics of nn-mixed-precision, and of the nn.loss_scale contract as
// nn-autodiff and nn-optimizer read it: a clear message and a non-zero exit.
//
// RUN: not tandem-opt %s --nn-mixed-precision="policy=fp8" 2>&1 | FileCheck %s --check-prefix=POLICY
// POLICY: error: nn-mixed-precision: unknown policy 'fp8'; expected bf16, fp16 or f32
// RUN: not tandem-opt %s --nn-mixed-precision="low-precision-ops=nn.matmul,nn.conv2d" 2>&1 | FileCheck %s --check-prefix=UNKNOWN-LOW
// UNKNOWN-LOW: error: nn-mixed-precision: unknown op 'nn.conv2d' in low-precision-ops (expected nn ops such as nn.matmul)
// RUN: not tandem-opt %s --nn-mixed-precision="f32-ops=softmax" 2>&1 | FileCheck %s --check-prefix=UNKNOWN-F32
// UNKNOWN-F32: error: nn-mixed-precision: unknown op 'softmax' in f32-ops (expected nn ops such as nn.matmul)
// RUN: not tandem-opt %s --nn-mixed-precision="f32-ops=func.call" 2>&1 | FileCheck %s --check-prefix=OTHER-DIALECT
// OTHER-DIALECT: error: nn-mixed-precision: unknown op 'func.call' in f32-ops
// RUN: not tandem-opt %s --nn-mixed-precision="low-precision-ops=nn.param" 2>&1 | FileCheck %s --check-prefix=STRUCTURAL
// STRUCTURAL: error: nn-mixed-precision: 'nn.param' in low-precision-ops is not a compute op; its result type follows its definition
// RUN: not tandem-opt %s --nn-mixed-precision="low-precision-ops=nn.gelu f32-ops=nn.gelu" 2>&1 | FileCheck %s --check-prefix=BOTH
// BOTH: error: nn-mixed-precision: 'nn.gelu' is named in both low-precision-ops and f32-ops
// RUN: not tandem-opt %s --nn-mixed-precision="loss-scale=dynamc" 2>&1 | FileCheck %s --check-prefix=SPEC
// SPEC: error: nn-mixed-precision: invalid loss-scale 'dynamc'; expected none, static:<s>, dynamic, dynamic:<initial> or dynamic:<initial>:<interval> with a positive scale that is finite in f32 and an interval >= 1
// RUN: not tandem-opt %s --nn-mixed-precision="loss-scale=static" 2>&1 | FileCheck %s --check-prefix=STATIC-NONE
// STATIC-NONE: error: nn-mixed-precision: invalid loss-scale 'static'
// RUN: not tandem-opt %s --nn-mixed-precision="loss-scale=static:abc" 2>&1 | FileCheck %s --check-prefix=STATIC-NAN
// STATIC-NAN: error: nn-mixed-precision: invalid loss-scale 'static:abc'
// RUN: not tandem-opt %s --nn-mixed-precision="loss-scale=static:-2" 2>&1 | FileCheck %s --check-prefix=STATIC-NEG
// STATIC-NEG: error: nn-mixed-precision: invalid loss-scale 'static:-2'
// RUN: not tandem-opt %s --nn-mixed-precision="loss-scale=static:1e39" 2>&1 | FileCheck %s --check-prefix=STATIC-BIG
// STATIC-BIG: error: nn-mixed-precision: invalid loss-scale 'static:1e39'
// RUN: not tandem-opt %s --nn-mixed-precision="loss-scale=dynamic:1024:0" 2>&1 | FileCheck %s --check-prefix=INTERVAL
// INTERVAL: error: nn-mixed-precision: invalid loss-scale 'dynamic:1024:0'
// RUN: not tandem-opt %s --nn-mixed-precision="loss-scale=dynamic:1024:10:5" 2>&1 | FileCheck %s --check-prefix=EXTRA
// EXTRA: error: nn-mixed-precision: invalid loss-scale 'dynamic:1024:10:5'
// RUN: not tandem-opt %s --nn-mixed-precision="function=main" 2>&1 | FileCheck %s --check-prefix=FUNC
// FUNC: error: nn-mixed-precision: no function @main (option 'function')
// RUN: not tandem-opt %s --nn-mixed-precision="loss-scale=static:8" --nn-mixed-precision="policy=f32 loss-scale=static:8" 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: error: nn-mixed-precision: @forward already has 'nn.loss_scale' (the pass ran twice?)

nn.parameter @w : tensor<4x4xf32> = normal(0.02)

func.func @forward(%x: tensor<2x4xf32>) -> tensor<f32> {
  %w = nn.param @w : tensor<4x4xf32>
  %m = nn.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %g = nn.gelu %m : tensor<2x4xf32>
  %l = nn.reduce_sum %g [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
