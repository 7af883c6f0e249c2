// RUN: tandem-opt %s -split-input-file -verify-diagnostics

// Diagnostics of the reductions (reduce_sum, reduce_mean, reduce_max) and of
// nn.stage_end.

func.func @reduce_axis_too_large(%x: tensor<4x8xf32>) {
  // expected-error@+2 {{'nn.reduce_sum' op axis 2 is out of range for rank 2}}
  // expected-error@+1 {{'nn.reduce_sum' op failed to infer returned types}}
  %0 = nn.reduce_sum %x [2] : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @reduce_axis_negative(%x: tensor<4x8xf32>) {
  // expected-error@+2 {{'nn.reduce_mean' op axis -1 is out of range for rank 2}}
  // expected-error@+1 {{'nn.reduce_mean' op failed to infer returned types}}
  %0 = nn.reduce_mean %x [-1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
  return
}

// -----

func.func @reduce_rank0_axis(%x: tensor<f32>) {
  // expected-error@+2 {{'nn.reduce_max' op axis 0 is out of range for rank 0}}
  // expected-error@+1 {{'nn.reduce_max' op failed to infer returned types}}
  %0 = nn.reduce_max %x [0] : tensor<f32> -> tensor<f32>
  return
}

// -----

func.func @reduce_axes_decreasing(%x: tensor<2x3x4xf32>) {
  // expected-error@+2 {{'nn.reduce_max' op expected distinct axes in increasing order, found 0 after 2}}
  // expected-error@+1 {{'nn.reduce_max' op failed to infer returned types}}
  %0 = nn.reduce_max %x [2, 0] : tensor<2x3x4xf32> -> tensor<3xf32>
  return
}

// -----

func.func @reduce_axes_repeated(%x: tensor<2x3x4xf32>) {
  // expected-error@+2 {{'nn.reduce_sum' op expected distinct axes in increasing order, found 1 after 1}}
  // expected-error@+1 {{'nn.reduce_sum' op failed to infer returned types}}
  %0 = nn.reduce_sum %x [1, 1] : tensor<2x3x4xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @reduce_keepdims_mismatch(%x: tensor<4x8xf32>) {
  // expected-error@+2 {{'nn.reduce_sum' op inferred type(s) 'tensor<4x1xf32>' are incompatible with return type(s) of operation 'tensor<4xf32>'}}
  // expected-error@+1 {{'nn.reduce_sum' op failed to infer returned types}}
  %0 = nn.reduce_sum %x [1] keepdims : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @reduce_without_keepdims_mismatch(%x: tensor<4x8xf32>) {
  // expected-error@+2 {{'nn.reduce_mean' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<4x1xf32>'}}
  // expected-error@+1 {{'nn.reduce_mean' op failed to infer returned types}}
  %0 = nn.reduce_mean %x [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  return
}

// -----

func.func @reduce_integer(%x: tensor<4x8xi32>) {
  // expected-error@+1 {{'nn.reduce_sum' op operand #0 must be statically shaped tensor of 64-bit float or 32-bit float or 16-bit float or bfloat16 type or f8E4M3FN type or f8E5M2 type values, but got 'tensor<4x8xi32>'}}
  %0 = nn.reduce_sum %x [1] : tensor<4x8xi32> -> tensor<4xi32>
  return
}

// -----

func.func @reduce_element_type(%x: tensor<4x8xbf16>) {
  // expected-error@+2 {{'nn.reduce_sum' op inferred type(s) 'tensor<4xbf16>' are incompatible with return type(s) of operation 'tensor<4xf32>'}}
  // expected-error@+1 {{'nn.reduce_sum' op failed to infer returned types}}
  %0 = nn.reduce_sum %x [1] : tensor<4x8xbf16> -> tensor<4xf32>
  return
}

// -----

func.func @stage_end_empty() {
  // expected-error@+1 {{'nn.stage_end' op expected at least one value to carry across the stage boundary}}
  "nn.stage_end"() : () -> ()
  return
}

// -----

func.func @stage_end_type_change(%x: tensor<4xf32>) {
  // expected-error@+2 {{'nn.stage_end' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<4xbf16>'}}
  // expected-error@+1 {{'nn.stage_end' op failed to infer returned types}}
  %0 = "nn.stage_end"(%x) : (tensor<4xf32>) -> tensor<4xbf16>
  return
}

// -----

func.func @stage_end_dynamic(%x: tensor<?xf32>) {
  // expected-error@+1 {{'nn.stage_end' op operand #0 must be variadic of statically shaped tensor of 64-bit float or 32-bit float or 16-bit float or bfloat16 type or f8E4M3FN type or f8E5M2 type or 32-bit signless integer or 64-bit signless integer or 8-bit signless integer values, but got 'tensor<?xf32>'}}
  %0 = nn.stage_end %x : tensor<?xf32>
  return
}
