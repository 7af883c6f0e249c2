// RUN: tandem-opt %s -split-input-file --nn-pad-classes | FileCheck %s
// RUN: tandem-opt %s -split-input-file --nn-pad-classes=multiple=1 | FileCheck %s --check-prefix=ONE
// RUN: awk '/^\/\/ -----/ { exit } { print }' %s | tandem-opt --nn-pad-classes --nn-autodiff | FileCheck %s --check-prefix=GRAD
// RUN: not tandem-opt %s -split-input-file --nn-pad-classes=multiple=0 2>&1 | FileCheck %s --check-prefix=ZERO

// nn-pad-classes stores an LM head's weight padded to a multiple of 128
// along the vocabulary and marks the loss with the real class count.

// A tied head: the table's rows are the vocabulary, for the embedding and
// the transposed GEMM alike.
// CHECK-LABEL: module
// CHECK: nn.parameter @wte : tensor<384x8xf32> = normal(2.000000e-02) {logical_shape = array<i64: 300, 8>}
// CHECK: func.func @forward
// CHECK: %[[E:.*]] = nn.param @wte : tensor<384x8xf32>
// CHECK: nn.embedding %[[E]], %{{.*}} {rows = 300 : i64} : tensor<384x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
// CHECK: %[[H:.*]] = nn.param @wte : tensor<384x8xf32>
// CHECK: %[[L:.*]] = nn.matmul %{{.*}}, %[[H]] {transpose_rhs} : tensor<2x4x8xf32>, tensor<384x8xf32> -> tensor<2x4x384xf32>
// CHECK: nn.cross_entropy %[[L]], %{{.*}} {classes = 300 : i64} : tensor<2x4x384xf32>, tensor<2x4xi32> -> tensor<f32>
// ONE-LABEL: module
// ONE: nn.parameter @wte : tensor<300x8xf32> = normal(2.000000e-02){{$}}
// ONE: nn.embedding %{{.*}}, %{{.*}} : tensor<300x8xf32>
// ONE: nn.cross_entropy %{{.*}}, %{{.*}} : tensor<2x4x300xf32>
// The gradient keeps the class count.
// GRAD-LABEL: module
// GRAD: nn.cross_entropy_grad %{{.*}} {classes = 300 : i64{{.*}}} : tensor<2x4x384xf32>, tensor<2x4xi32>, tensor<f32> -> tensor<2x4x384xf32>
// GRAD: nn.embedding_grad {{.*}}rows = 300 : i64} : {{.*}} -> tensor<384x8xf32>
// ZERO: error: nn-pad-classes: multiple must be at least 1, found 0
module {
  nn.parameter @wte : tensor<300x8xf32> = normal(0.02)
  func.func @forward(%ids: tensor<2x4xi32>, %targets: tensor<2x4xi32>) -> tensor<f32> {
    %e = nn.param @wte : tensor<300x8xf32>
    %x = nn.embedding %e, %ids : tensor<300x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
    %h = nn.param @wte : tensor<300x8xf32>
    %l = nn.matmul %x, %h {transpose_rhs} : tensor<2x4x8xf32>, tensor<300x8xf32> -> tensor<2x4x300xf32>
    %loss = nn.cross_entropy %l, %targets : tensor<2x4x300xf32>, tensor<2x4xi32> -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// -----

// An untied head: the weight's columns are the vocabulary.
// CHECK-LABEL: module
// CHECK: nn.parameter @head : tensor<8x256xf32> = uniform(-1.000000e-01, 1.000000e-01) {logical_shape = array<i64: 8, 130>}
// CHECK: nn.matmul %{{.*}}, %{{.*}} : tensor<2x8xf32>, tensor<8x256xf32> -> tensor<2x256xf32>
// CHECK: nn.cross_entropy %{{.*}}, %{{.*}} {classes = 130 : i64} : tensor<2x256xf32>
module {
  nn.parameter @head : tensor<8x130xf32> = uniform(-0.1, 0.1)
  func.func @forward(%x: tensor<2x8xf32>, %targets: tensor<2xi32>) -> tensor<f32> {
    %w = nn.param @head : tensor<8x130xf32>
    %l = nn.matmul %x, %w : tensor<2x8xf32>, tensor<8x130xf32> -> tensor<2x130xf32>
    %loss = nn.cross_entropy %l, %targets : tensor<2x130xf32>, tensor<2xi32> -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// -----

// Left alone: a vocabulary that is a multiple already; logits with another
// user; a weight read by something other than a head or an embedding; a
// loss that has its class count; a batched (rank-3) weight; a table whose
// rows are the embedding's vocabulary but whose columns are the head's.
// CHECK-LABEL: module
// CHECK: nn.parameter @round : tensor<8x256xf32> = zeros{{$}}
// CHECK: nn.parameter @shared_logits : tensor<8x130xf32> = zeros{{$}}
// CHECK: nn.parameter @other_use : tensor<8x130xf32> = zeros{{$}}
// CHECK: nn.parameter @marked : tensor<8x130xf32> = zeros{{$}}
// CHECK: nn.parameter @batched : tensor<2x8x130xf32> = zeros{{$}}
// CHECK: nn.parameter @crossed : tensor<130x130xf32> = zeros{{$}}
// CHECK-NOT: logical_shape
// CHECK: nn.cross_entropy %{{.*}} {classes = 100 : i64}
// CHECK-NOT: classes
module {
  nn.parameter @round : tensor<8x256xf32> = zeros
  nn.parameter @shared_logits : tensor<8x130xf32> = zeros
  nn.parameter @other_use : tensor<8x130xf32> = zeros
  nn.parameter @marked : tensor<8x130xf32> = zeros
  nn.parameter @batched : tensor<2x8x130xf32> = zeros
  nn.parameter @crossed : tensor<130x130xf32> = zeros
  func.func @many(%x: tensor<2x8xf32>, %t: tensor<2xi32>, %xb: tensor<2x4x8xf32>, %tb: tensor<2x4xi32>, %ids: tensor<2xi32>) -> (tensor<f32>, tensor<f32>, tensor<2x130xf32>, tensor<f32>, tensor<8x130xf32>, tensor<f32>, tensor<f32>, tensor<f32>) {
    %w0 = nn.param @round : tensor<8x256xf32>
    %l0 = nn.matmul %x, %w0 : tensor<2x8xf32>, tensor<8x256xf32> -> tensor<2x256xf32>
    %c0 = nn.cross_entropy %l0, %t : tensor<2x256xf32>, tensor<2xi32> -> tensor<f32>
    %w1 = nn.param @shared_logits : tensor<8x130xf32>
    %l1 = nn.matmul %x, %w1 : tensor<2x8xf32>, tensor<8x130xf32> -> tensor<2x130xf32>
    %c1 = nn.cross_entropy %l1, %t : tensor<2x130xf32>, tensor<2xi32> -> tensor<f32>
    %w2 = nn.param @other_use : tensor<8x130xf32>
    %l2 = nn.matmul %x, %w2 : tensor<2x8xf32>, tensor<8x130xf32> -> tensor<2x130xf32>
    %c2 = nn.cross_entropy %l2, %t : tensor<2x130xf32>, tensor<2xi32> -> tensor<f32>
    %s2 = nn.add %w2, %w2 : tensor<8x130xf32>, tensor<8x130xf32> -> tensor<8x130xf32>
    %w3 = nn.param @marked : tensor<8x130xf32>
    %l3 = nn.matmul %x, %w3 : tensor<2x8xf32>, tensor<8x130xf32> -> tensor<2x130xf32>
    %c3 = nn.cross_entropy %l3, %t {classes = 100 : i64} : tensor<2x130xf32>, tensor<2xi32> -> tensor<f32>
    %w4 = nn.param @batched : tensor<2x8x130xf32>
    %l4 = nn.matmul %xb, %w4 : tensor<2x4x8xf32>, tensor<2x8x130xf32> -> tensor<2x4x130xf32>
    %c4 = nn.cross_entropy %l4, %tb : tensor<2x4x130xf32>, tensor<2x4xi32> -> tensor<f32>
    %w5 = nn.param @crossed : tensor<130x130xf32>
    %e5 = nn.embedding %w5, %ids : tensor<130x130xf32>, tensor<2xi32> -> tensor<2x130xf32>
    %l5 = nn.matmul %e5, %w5 : tensor<2x130xf32>, tensor<130x130xf32> -> tensor<2x130xf32>
    %c5 = nn.cross_entropy %l5, %t : tensor<2x130xf32>, tensor<2xi32> -> tensor<f32>
    return %c0, %c1, %l1, %c2, %s2, %c3, %c4, %c5 : tensor<f32>, tensor<f32>, tensor<2x130xf32>, tensor<f32>, tensor<8x130xf32>, tensor<f32>, tensor<f32>, tensor<f32>
  }
}
