// RUN: tandem-opt %s -split-input-file -verify-diagnostics

// Diagnostics of nn.erf, nn.erfc, nn.stop_gradient and nn.one_hot.

func.func @erf_integer(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error@+1 {{'nn.erf' op operand #0 must be statically shaped tensor of 64-bit float or 32-bit float or 16-bit float or bfloat16 type or f8E4M3FN type or f8E5M2 type values, but got 'tensor<4xi32>'}}
  %0 = nn.erf %x : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @erfc_type_mismatch(%x: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error@+1 {{'nn.erfc' op requires the same type for all operands and results}}
  %0 = "nn.erfc"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

func.func @stop_gradient_integer(%x: tensor<4xi64>) -> tensor<4xi64> {
  // expected-error@+1 {{'nn.stop_gradient' op operand #0 must be statically shaped tensor of 64-bit float or 32-bit float or 16-bit float or bfloat16 type or f8E4M3FN type or f8E5M2 type values, but got 'tensor<4xi64>'}}
  %0 = nn.stop_gradient %x : tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @stop_gradient_shape_mismatch(%x: tensor<4xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{'nn.stop_gradient' op requires the same type for all operands and results}}
  %0 = "nn.stop_gradient"(%x) : (tensor<4xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @one_hot_no_classes(%ids: tensor<8xi32>) -> tensor<8x0xf32> {
  // expected-error@+1 {{'nn.one_hot' op expected at least one class, found classes = 0}}
  %0 = nn.one_hot %ids {classes = 0 : i64} : tensor<8xi32> -> tensor<8x0xf32>
  return %0 : tensor<8x0xf32>
}

// -----

func.func @one_hot_negative_classes(%ids: tensor<8xi32>) -> tensor<8x4xf32> {
  // expected-error@+1 {{'nn.one_hot' op expected at least one class, found classes = -4}}
  %0 = nn.one_hot %ids {classes = -4 : i64} : tensor<8xi32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @one_hot_wrong_class_dimension(%ids: tensor<2x3xi32>) -> tensor<2x3x5xf32> {
  // expected-error@+1 {{'nn.one_hot' op expected a result of shape [2x3x4] (the ids' shape and the 4 classes), found [2x3x5]}}
  %0 = nn.one_hot %ids {classes = 4 : i64} : tensor<2x3xi32> -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----

func.func @one_hot_wrong_batch_shape(%ids: tensor<2x3xi32>) -> tensor<3x2x4xf32> {
  // expected-error@+1 {{'nn.one_hot' op expected a result of shape [2x3x4] (the ids' shape and the 4 classes), found [3x2x4]}}
  %0 = nn.one_hot %ids {classes = 4 : i64} : tensor<2x3xi32> -> tensor<3x2x4xf32>
  return %0 : tensor<3x2x4xf32>
}

// -----

func.func @one_hot_scalar_ids(%ids: tensor<i64>) -> tensor<f32> {
  // expected-error@+1 {{'nn.one_hot' op expected a result of shape [4] (the ids' shape and the 4 classes), found []}}
  %0 = nn.one_hot %ids {classes = 4 : i64} : tensor<i64> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @one_hot_float_ids(%ids: tensor<8xf32>) -> tensor<8x4xf32> {
  // expected-error@+1 {{'nn.one_hot' op operand #0 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<8xf32>'}}
  %0 = nn.one_hot %ids {classes = 4 : i64} : tensor<8xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @one_hot_integer_result(%ids: tensor<8xi32>) -> tensor<8x4xi32> {
  // expected-error@+1 {{'nn.one_hot' op result #0 must be statically shaped tensor of 64-bit float or 32-bit float or 16-bit float or bfloat16 type or f8E4M3FN type or f8E5M2 type values, but got 'tensor<8x4xi32>'}}
  %0 = nn.one_hot %ids {classes = 4 : i64} : tensor<8xi32> -> tensor<8x4xi32>
  return %0 : tensor<8x4xi32>
}

// -----

func.func @one_hot_missing_classes(%ids: tensor<8xi32>) -> tensor<8x4xf32> {
  // expected-error@+1 {{'nn.one_hot' op requires attribute 'classes'}}
  %0 = "nn.one_hot"(%ids) : (tensor<8xi32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
