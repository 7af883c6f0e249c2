// RUN: tandem-opt %s -split-input-file -verify-diagnostics

// Diagnostics of the gradient helper ops and of #nn.grad.

func.func @embedding_grad_rank(%d: tensor<2x4xf32>, %ids: tensor<2xi32>) {
  // expected-error@+1 {{'nn.embedding_grad' op expected a 2-D result (vocabulary x dimension), found shape [10x4x1]}}
  %0 = nn.embedding_grad %d, %ids : tensor<2x4xf32>, tensor<2xi32> -> tensor<10x4x1xf32>
  return
}

// -----

func.func @embedding_grad_shape(%d: tensor<3x4xf32>, %ids: tensor<2xi32>) {
  // expected-error@+1 {{'nn.embedding_grad' op expected a cotangent of shape [2x4] (the ids' shape and the table's dimension), found [3x4]}}
  %0 = nn.embedding_grad %d, %ids : tensor<3x4xf32>, tensor<2xi32> -> tensor<10x4xf32>
  return
}

// -----

func.func @embedding_grad_element_type(%d: tensor<2x4xf32>, %ids: tensor<2xi32>) {
  // expected-error@+1 {{'nn.embedding_grad' op expected the result element type to be 'f32', found 'f16'}}
  %0 = nn.embedding_grad %d, %ids : tensor<2x4xf32>, tensor<2xi32> -> tensor<10x4xf16>
  return
}

// -----

func.func @cross_entropy_grad_targets(%l: tensor<2x5xf32>, %t: tensor<3xi32>, %g: tensor<f32>) {
  // expected-error@+2 {{'nn.cross_entropy_grad' op expected targets of shape [2] (the logits without the class dimension), found [3]}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = nn.cross_entropy_grad %l, %t, %g : tensor<2x5xf32>, tensor<3xi32>, tensor<f32> -> tensor<2x5xf32>
  return
}

// -----

func.func @cross_entropy_grad_cotangent(%l: tensor<2x5xf32>, %t: tensor<2xi32>, %g: tensor<1xf32>) {
  // expected-error@+2 {{'nn.cross_entropy_grad' op expected a rank-0 cotangent, found shape [1]}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = nn.cross_entropy_grad %l, %t, %g : tensor<2x5xf32>, tensor<2xi32>, tensor<1xf32> -> tensor<2x5xf32>
  return
}

// -----

func.func @cross_entropy_grad_element_type(%l: tensor<2x5xf32>, %t: tensor<2xi32>, %g: tensor<f16>) {
  // expected-error@+2 {{'nn.cross_entropy_grad' op expected logits and cotangent to have the same element type, found 'f32' and 'f16'}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = nn.cross_entropy_grad %l, %t, %g : tensor<2x5xf32>, tensor<2xi32>, tensor<f16> -> tensor<2x5xf32>
  return
}

// -----

func.func @greater_equal_mixed(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error@+2 {{'nn.greater_equal' op expected operands to have the same element type, found 'f32' and 'f16'}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = nn.greater_equal %a, %b : tensor<4xf32>, tensor<4xf16> -> tensor<4xf32>
  return
}

// -----

func.func @grad_kind(%x: tensor<4xf32>) {
  // expected-error@+2 {{expected ::tandem::nn::GradKind to be one of: B, W}}
  // expected-error@+1 {{failed to parse NN_GradAttr parameter 'kind'}}
  %0 = nn.neg %x {nn.grad = #nn.grad<X, of = 3>} : tensor<4xf32>
  return
}

// -----

func.func @cross_entropy_grad_classes(%l: tensor<2x5xf32>, %t: tensor<2xi32>, %g: tensor<f32>) {
  // expected-error@+2 {{'nn.cross_entropy_grad' op expected classes in [1, 5] (the logits' last dimension), found -1}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = nn.cross_entropy_grad %l, %t, %g {classes = -1 : i64} : tensor<2x5xf32>, tensor<2xi32>, tensor<f32> -> tensor<2x5xf32>
  return
}

// -----

func.func @embedding_grad_rows(%c: tensor<2x4xf32>, %ids: tensor<2xi32>) {
  // expected-error@+1 {{'nn.embedding_grad' op expected rows in [1, 10] (the result's first dimension), found 11}}
  %0 = nn.embedding_grad %c, %ids {rows = 11 : i64} : tensor<2x4xf32>, tensor<2xi32> -> tensor<10x4xf32>
  return
}
