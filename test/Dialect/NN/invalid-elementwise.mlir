// RUN: tandem-opt %s -split-input-file -verify-diagnostics

// Diagnostics of nn.constant, nn.cast, the unary ops, nn.pow and the
// broadcasting binary ops. Ops that infer their result type report a failed
// inference twice: the precise reason, then "failed to infer returned types".

func.func @constant_bad_element_type() -> tensor<4xi8> {
  // expected-error@+1 {{'nn.constant' op result #0 must be statically shaped tensor of 64-bit float or 32-bit float or 16-bit float or bfloat16 type or f8E4M3FN type or f8E5M2 type or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4xi8>'}}
  %0 = nn.constant dense<1> : tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

func.func @constant_type_mismatch() -> tensor<2x2xf32> {
  // expected-error@+1 {{'nn.constant' op failed to verify that all of {value, result} have same type}}
  %0 = "nn.constant"() <{value = dense<1.0> : tensor<4xf32>}> : () -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @cast_to_f8e4m3_without_saturate(%x: tensor<4xf32>) -> tensor<4xf8E4M3FN> {
  // expected-error@+1 {{'nn.cast' op cast to 'f8E4M3FN' needs an explicit 'saturate' choice (true: clamp to the largest finite value, false: overflow to the non-finite value)}}
  %0 = nn.cast %x : tensor<4xf32> to tensor<4xf8E4M3FN>
  return %0 : tensor<4xf8E4M3FN>
}

// -----

func.func @cast_to_f8e5m2_without_saturate(%x: tensor<4xi32>) -> tensor<4xf8E5M2> {
  // expected-error@+1 {{'nn.cast' op cast to 'f8E5M2' needs an explicit 'saturate' choice}}
  %0 = nn.cast %x : tensor<4xi32> to tensor<4xf8E5M2>
  return %0 : tensor<4xf8E5M2>
}

// -----

func.func @cast_saturate_not_f8(%x: tensor<4xf32>) -> tensor<4xbf16> {
  // expected-error@+1 {{'nn.cast' op 'saturate' applies only to casts to f8 types, found a cast to 'bf16'}}
  %0 = nn.cast %x {saturate = true} : tensor<4xf32> to tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

func.func @cast_saturate_false_not_f8(%x: tensor<4xf8E4M3FN>) -> tensor<4xf32> {
  // expected-error@+1 {{'nn.cast' op 'saturate' applies only to casts to f8 types, found a cast to 'f32'}}
  %0 = nn.cast %x {saturate = false} : tensor<4xf8E4M3FN> to tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @cast_shape_change(%x: tensor<4xf32>) -> tensor<2x2xf16> {
  // expected-error@+1 {{'nn.cast' op requires the same shape for all operands and results}}
  %0 = nn.cast %x : tensor<4xf32> to tensor<2x2xf16>
  return %0 : tensor<2x2xf16>
}

// -----

func.func @cast_saturate_not_bool(%x: tensor<4xf32>) -> tensor<4xf8E5M2> {
  // expected-error@+1 {{'nn.cast' op attribute 'saturate' failed to satisfy constraint: bool attribute}}
  %0 = nn.cast %x {saturate = 1 : i32} : tensor<4xf32> to tensor<4xf8E5M2>
  return %0 : tensor<4xf8E5M2>
}

// -----

func.func @unary_integer(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error@+1 {{'nn.exp' op operand #0 must be statically shaped tensor of 64-bit float or 32-bit float or 16-bit float or bfloat16 type or f8E4M3FN type or f8E5M2 type values, but got 'tensor<4xi32>'}}
  %0 = nn.exp %x : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @unary_dynamic_shape(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error@+1 {{'nn.relu' op operand #0 must be statically shaped tensor of 64-bit float or 32-bit float or 16-bit float or bfloat16 type or f8E4M3FN type or f8E5M2 type values, but got 'tensor<?x4xf32>'}}
  %0 = nn.relu %x : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

func.func @unary_unranked(%x: tensor<*xf32>) {
  // expected-error@+1 {{invalid kind of type specified: expected builtin.tensor, but found 'tensor<*xf32>'}}
  %0 = nn.tanh %x : tensor<*xf32>
  return
}

// -----

func.func @unary_not_tensor(%x: f32) {
  // expected-error@+1 {{invalid kind of type specified: expected builtin.tensor, but found 'f32'}}
  %0 = nn.gelu %x : f32
  return
}

// -----

func.func @unary_type_change(%x: tensor<4xf32>) {
  // expected-error@+1 {{'nn.silu' op requires the same type for all operands and results}}
  %0 = "nn.silu"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @pow_exponent_not_f64(%x: tensor<4xf32>) {
  // expected-error@+1 {{'nn.pow' op attribute 'exponent' failed to satisfy constraint: 64-bit float attribute}}
  %0 = "nn.pow"(%x) <{exponent = 2.0 : f32}> : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @pow_integer(%x: tensor<4xi64>) {
  // expected-error@+1 {{'nn.pow' op operand #0 must be statically shaped tensor of 64-bit float or 32-bit float or 16-bit float or bfloat16 type or f8E4M3FN type or f8E5M2 type values, but got 'tensor<4xi64>'}}
  %0 = nn.pow %x, 2.0 : tensor<4xi64>
  return
}

// -----

func.func @binary_incompatible_shapes(%a: tensor<4x3xf32>, %b: tensor<4xf32>) {
  // expected-error@+2 {{'nn.add' op cannot broadcast shapes [4x3] and [4]}}
  // expected-error@+1 {{'nn.add' op failed to infer returned types}}
  %0 = nn.add %a, %b : tensor<4x3xf32>, tensor<4xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @binary_incompatible_leading(%a: tensor<2x1x5xi64>, %b: tensor<3x4x5xi64>) {
  // expected-error@+2 {{'nn.mul' op cannot broadcast shapes [2x1x5] and [3x4x5]}}
  // expected-error@+1 {{'nn.mul' op failed to infer returned types}}
  %0 = nn.mul %a, %b : tensor<2x1x5xi64>, tensor<3x4x5xi64> -> tensor<3x4x5xi64>
  return
}

// -----

func.func @binary_element_types(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error@+2 {{'nn.sub' op expected operands to have the same element type, found 'f32' and 'f16'}}
  // expected-error@+1 {{'nn.sub' op failed to infer returned types}}
  %0 = nn.sub %a, %b : tensor<4xf32>, tensor<4xf16> -> tensor<4xf32>
  return
}

// -----

func.func @binary_int_float(%a: tensor<4xi32>, %b: tensor<4xf32>) {
  // expected-error@+2 {{'nn.div' op expected operands to have the same element type, found 'i32' and 'f32'}}
  // expected-error@+1 {{'nn.div' op failed to infer returned types}}
  %0 = nn.div %a, %b : tensor<4xi32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @binary_wrong_result(%a: tensor<4x1xf32>, %b: tensor<3xf32>) {
  // expected-error@+2 {{'nn.add' op inferred type(s) 'tensor<4x3xf32>' are incompatible with return type(s) of operation 'tensor<4x1xf32>'}}
  // expected-error@+1 {{'nn.add' op failed to infer returned types}}
  %0 = nn.add %a, %b : tensor<4x1xf32>, tensor<3xf32> -> tensor<4x1xf32>
  return
}

// -----

func.func @binary_unsupported_element(%a: tensor<4xi16>, %b: tensor<4xi16>) {
  // expected-error@+1 {{'nn.add' op operand #0 must be statically shaped tensor of 64-bit float or 32-bit float or 16-bit float or bfloat16 type or f8E4M3FN type or f8E5M2 type or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4xi16>'}}
  %0 = nn.add %a, %b : tensor<4xi16>, tensor<4xi16> -> tensor<4xi16>
  return
}

// -----

func.func @binary_unsigned(%a: tensor<4xui32>, %b: tensor<4xui32>) {
  // expected-error@+1 {{'nn.add' op operand #0 must be statically shaped tensor}}
  %0 = nn.add %a, %b : tensor<4xui32>, tensor<4xui32> -> tensor<4xui32>
  return
}

// -----

func.func @select_mask_does_not_broadcast(%c: tensor<2xf32>, %a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'nn.select' op condition of shape [2] does not broadcast to the result shape [2x3]}}
  %0 = nn.select %c, %a, %a : tensor<2xf32>, tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @select_mask_rank_too_high(%c: tensor<1x2x3xf32>, %a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'nn.select' op condition of shape [1x2x3] does not broadcast to the result shape [2x3]}}
  %0 = nn.select %c, %a, %a : tensor<1x2x3xf32>, tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @select_values_differ(%c: tensor<f32>, %a: tensor<3xf32>, %b: tensor<3xf16>) -> tensor<3xf32> {
  // expected-error@+1 {{'nn.select' op failed to verify that all of {true_value, false_value, result} have same type}}
  %0 = "nn.select"(%c, %a, %b) : (tensor<f32>, tensor<3xf32>, tensor<3xf16>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @select_integer_mask(%c: tensor<i32>, %a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'nn.select' op operand #0 must be statically shaped tensor of}}
  %0 = nn.select %c, %a, %a : tensor<i32>, tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// GELU's gradient does not broadcast: its input and cotangent are one type.
func.func @gelu_grad_types(%x: tensor<4x8xf32>, %dy: tensor<8xf32>) {
  // expected-error@+1 {{'nn.gelu_grad' op requires the same type for all operands and results}}
  %0 = "nn.gelu_grad"(%x, %dy) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return
}
