// RUN: tandem-opt %s -split-input-file -verify-diagnostics

// Diagnostics of the shape ops: reshape, transpose, broadcast_to, concat,
// slice and split.

func.func @reshape_element_type(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'nn.reshape' op expected the result element type to be 'f32', found 'f16'}}
  %0 = nn.reshape %x : tensor<4x8xf32> to tensor<32xf16>
  return
}

// -----

func.func @reshape_element_count(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'nn.reshape' op cannot reshape 32 elements [4x8] into 30 elements [5x6]}}
  %0 = nn.reshape %x : tensor<4x8xf32> to tensor<5x6xf32>
  return
}

// -----

func.func @reshape_to_scalar(%x: tensor<2xi64>) {
  // expected-error@+1 {{'nn.reshape' op cannot reshape 2 elements [2] into 1 elements []}}
  %0 = nn.reshape %x : tensor<2xi64> to tensor<i64>
  return
}

// -----

func.func @reshape_dynamic(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'nn.reshape' op result #0 must be statically shaped tensor of 64-bit float or 32-bit float or 16-bit float or bfloat16 type or f8E4M3FN type or f8E5M2 type or 32-bit signless integer or 64-bit signless integer or 8-bit signless integer values, but got 'tensor<?xf32>'}}
  %0 = nn.reshape %x : tensor<4x8xf32> to tensor<?xf32>
  return
}

// -----

func.func @transpose_wrong_length(%x: tensor<2x3x4xf32>) {
  // expected-error@+2 {{'nn.transpose' op expected a permutation of 0..2 for rank 3, found [1, 0]}}
  // expected-error@+1 {{'nn.transpose' op failed to infer returned types}}
  %0 = nn.transpose %x, [1, 0] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  return
}

// -----

func.func @transpose_duplicate(%x: tensor<2x3xf32>) {
  // expected-error@+2 {{'nn.transpose' op expected a permutation of 0..1 for rank 2, found [1, 1]}}
  // expected-error@+1 {{'nn.transpose' op failed to infer returned types}}
  %0 = nn.transpose %x, [1, 1] : tensor<2x3xf32> -> tensor<3x3xf32>
  return
}

// -----

func.func @transpose_out_of_range(%x: tensor<2x3xi32>) {
  // expected-error@+2 {{'nn.transpose' op expected a permutation of 0..1 for rank 2, found [0, 2]}}
  // expected-error@+1 {{'nn.transpose' op failed to infer returned types}}
  %0 = nn.transpose %x, [0, 2] : tensor<2x3xi32> -> tensor<2x3xi32>
  return
}

// -----

func.func @transpose_negative(%x: tensor<2x3xf32>) {
  // expected-error@+2 {{'nn.transpose' op expected a permutation of 0..1 for rank 2, found [-1, 0]}}
  // expected-error@+1 {{'nn.transpose' op failed to infer returned types}}
  %0 = nn.transpose %x, [-1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  return
}

// -----

func.func @transpose_rank0(%x: tensor<f32>) {
  // expected-error@+2 {{'nn.transpose' op expected an empty permutation for a rank-0 input, found [0]}}
  // expected-error@+1 {{'nn.transpose' op failed to infer returned types}}
  %0 = nn.transpose %x, [0] : tensor<f32> -> tensor<f32>
  return
}

// -----

func.func @transpose_wrong_result(%x: tensor<2x3xf32>) {
  // expected-error@+2 {{'nn.transpose' op inferred type(s) 'tensor<3x2xf32>' are incompatible with return type(s) of operation 'tensor<2x3xf32>'}}
  // expected-error@+1 {{'nn.transpose' op failed to infer returned types}}
  %0 = nn.transpose %x, [1, 0] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @broadcast_to_element_type(%x: tensor<4xf32>) {
  // expected-error@+1 {{'nn.broadcast_to' op expected the result element type to be 'f32', found 'bf16'}}
  %0 = nn.broadcast_to %x : tensor<4xf32> to tensor<2x4xbf16>
  return
}

// -----

func.func @broadcast_to_incompatible(%x: tensor<3xf32>) {
  // expected-error@+1 {{'nn.broadcast_to' op cannot broadcast shape [3] to [2x4]}}
  %0 = nn.broadcast_to %x : tensor<3xf32> to tensor<2x4xf32>
  return
}

// -----

func.func @broadcast_to_lower_rank(%x: tensor<2x4xf32>) {
  // expected-error@+1 {{'nn.broadcast_to' op cannot broadcast shape [2x4] to [4]}}
  %0 = nn.broadcast_to %x : tensor<2x4xf32> to tensor<4xf32>
  return
}

// -----

// broadcast_to only grows dimensions of size 1; it never shrinks one.
func.func @broadcast_to_shrink(%x: tensor<4x3xi64>) {
  // expected-error@+1 {{'nn.broadcast_to' op cannot broadcast shape [4x3] to [4x1]}}
  %0 = nn.broadcast_to %x : tensor<4x3xi64> to tensor<4x1xi64>
  return
}

// -----

func.func @concat_no_inputs() {
  // expected-error@+2 {{'nn.concat' op expected at least one input}}
  // expected-error@+1 {{'nn.concat' op failed to infer returned types}}
  %0 = nn.concat {axis = 0 : i64} : () -> tensor<4xf32>
  return
}

// -----

func.func @concat_axis(%a: tensor<4x8xf32>) {
  // expected-error@+2 {{'nn.concat' op axis 2 is out of range for rank 2}}
  // expected-error@+1 {{'nn.concat' op failed to infer returned types}}
  %0 = nn.concat %a, %a {axis = 2 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  return
}

// -----

func.func @concat_axis_negative(%a: tensor<4x8xf32>) {
  // expected-error@+2 {{'nn.concat' op axis -1 is out of range for rank 2}}
  // expected-error@+1 {{'nn.concat' op failed to infer returned types}}
  %0 = nn.concat %a, %a {axis = -1 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  return
}

// -----

func.func @concat_element_types(%a: tensor<4x8xf32>, %b: tensor<4x2xf16>) {
  // expected-error@+2 {{'nn.concat' op expected inputs to have the same element type, found 'f32' and 'f16'}}
  // expected-error@+1 {{'nn.concat' op failed to infer returned types}}
  %0 = nn.concat %a, %b {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x2xf16>) -> tensor<4x10xf32>
  return
}

// -----

func.func @concat_shapes(%a: tensor<4x8xf32>, %b: tensor<4x2xf32>, %c: tensor<3x8xf32>) {
  // expected-error@+2 {{'nn.concat' op input 2 has shape [3x8], which does not match input 0's shape [4x8] outside the concatenation axis 1}}
  // expected-error@+1 {{'nn.concat' op failed to infer returned types}}
  %0 = nn.concat %a, %b, %c {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x2xf32>, tensor<3x8xf32>) -> tensor<4x18xf32>
  return
}

// -----

func.func @concat_ranks(%a: tensor<4x8xi32>, %b: tensor<4x8x1xi32>) {
  // expected-error@+2 {{'nn.concat' op input 1 has shape [4x8x1], which does not match input 0's shape [4x8] outside the concatenation axis 0}}
  // expected-error@+1 {{'nn.concat' op failed to infer returned types}}
  %0 = nn.concat %a, %b {axis = 0 : i64} : (tensor<4x8xi32>, tensor<4x8x1xi32>) -> tensor<8x8xi32>
  return
}

// -----

func.func @concat_wrong_result(%a: tensor<4x8xf32>, %b: tensor<4x2xf32>) {
  // expected-error@+2 {{'nn.concat' op inferred type(s) 'tensor<4x10xf32>' are incompatible with return type(s) of operation 'tensor<4x8xf32>'}}
  // expected-error@+1 {{'nn.concat' op failed to infer returned types}}
  %0 = nn.concat %a, %b {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x2xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @slice_counts(%x: tensor<4x32xf32>) {
  // expected-error@+2 {{'nn.slice' op expected 2 starts, limits and strides (one per dimension), found 1, 2 and 2}}
  // expected-error@+1 {{'nn.slice' op failed to infer returned types}}
  %0 = nn.slice %x [0] to [4, 16] step [1, 1] : tensor<4x32xf32> -> tensor<4x16xf32>
  return
}

// -----

func.func @slice_stride_count(%x: tensor<4x32xf32>) {
  // expected-error@+2 {{'nn.slice' op expected 2 starts, limits and strides (one per dimension), found 2, 2 and 3}}
  // expected-error@+1 {{'nn.slice' op failed to infer returned types}}
  %0 = nn.slice %x [0, 0] to [4, 16] step [1, 1, 1] : tensor<4x32xf32> -> tensor<4x16xf32>
  return
}

// -----

func.func @slice_negative_start(%x: tensor<4x32xf32>) {
  // expected-error@+2 {{'nn.slice' op dimension 1: expected 0 <= start < limit <= 32, found start -1 and limit 16}}
  // expected-error@+1 {{'nn.slice' op failed to infer returned types}}
  %0 = nn.slice %x [0, -1] to [4, 16] step [1, 1] : tensor<4x32xf32> -> tensor<4x17xf32>
  return
}

// -----

func.func @slice_empty(%x: tensor<4x32xf32>) {
  // expected-error@+2 {{'nn.slice' op dimension 0: expected 0 <= start < limit <= 4, found start 2 and limit 2}}
  // expected-error@+1 {{'nn.slice' op failed to infer returned types}}
  %0 = nn.slice %x [2, 0] to [2, 32] step [1, 1] : tensor<4x32xf32> -> tensor<0x32xf32>
  return
}

// -----

func.func @slice_limit_beyond(%x: tensor<4x32xf32>) {
  // expected-error@+2 {{'nn.slice' op dimension 1: expected 0 <= start < limit <= 32, found start 16 and limit 33}}
  // expected-error@+1 {{'nn.slice' op failed to infer returned types}}
  %0 = nn.slice %x [0, 16] to [4, 33] step [1, 1] : tensor<4x32xf32> -> tensor<4x17xf32>
  return
}

// -----

func.func @slice_zero_stride(%x: tensor<4x32xf32>) {
  // expected-error@+2 {{'nn.slice' op dimension 0: expected a positive stride, found 0}}
  // expected-error@+1 {{'nn.slice' op failed to infer returned types}}
  %0 = nn.slice %x [0, 0] to [4, 32] step [0, 1] : tensor<4x32xf32> -> tensor<4x32xf32>
  return
}

// -----

func.func @slice_negative_stride(%x: tensor<4x32xf32>) {
  // expected-error@+2 {{'nn.slice' op dimension 1: expected a positive stride, found -1}}
  // expected-error@+1 {{'nn.slice' op failed to infer returned types}}
  %0 = nn.slice %x [0, 0] to [4, 32] step [1, -1] : tensor<4x32xf32> -> tensor<4x32xf32>
  return
}

// -----

func.func @slice_wrong_result(%x: tensor<10xf32>) {
  // expected-error@+2 {{'nn.slice' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<3xf32>'}}
  // expected-error@+1 {{'nn.slice' op failed to infer returned types}}
  %0 = nn.slice %x [0] to [10] step [3] : tensor<10xf32> -> tensor<3xf32>
  return
}

// -----

func.func @split_axis(%x: tensor<4x6xf32>) {
  // expected-error@+2 {{'nn.split' op axis 2 is out of range for rank 2}}
  // expected-error@+1 {{'nn.split' op failed to infer returned types}}
  %0:2 = nn.split %x {axis = 2 : i64, sizes = array<i64: 3, 3>} : tensor<4x6xf32> -> tensor<4x3xf32>, tensor<4x3xf32>
  return
}

// -----

func.func @split_no_sizes(%x: tensor<4x6xf32>) {
  // expected-error@+2 {{'nn.split' op expected at least one piece size}}
  // expected-error@+1 {{'nn.split' op failed to infer returned types}}
  "nn.split"(%x) <{axis = 1 : i64, sizes = array<i64>}> : (tensor<4x6xf32>) -> ()
  return
}

// -----

func.func @split_zero_size(%x: tensor<4x6xf32>) {
  // expected-error@+2 {{'nn.split' op expected positive piece sizes, found 0}}
  // expected-error@+1 {{'nn.split' op failed to infer returned types}}
  %0:2 = nn.split %x {axis = 1 : i64, sizes = array<i64: 6, 0>} : tensor<4x6xf32> -> tensor<4x6xf32>, tensor<4x0xf32>
  return
}

// -----

func.func @split_negative_size(%x: tensor<4x6xf32>) {
  // expected-error@+2 {{'nn.split' op expected positive piece sizes, found -2}}
  // expected-error@+1 {{'nn.split' op failed to infer returned types}}
  %0:2 = nn.split %x {axis = 1 : i64, sizes = array<i64: 8, -2>} : tensor<4x6xf32> -> tensor<4x8xf32>, tensor<4x6xf32>
  return
}

// -----

func.func @split_sum(%x: tensor<4x6xf32>) {
  // expected-error@+2 {{'nn.split' op piece sizes sum to 5, expected the size of axis 1, 6}}
  // expected-error@+1 {{'nn.split' op failed to infer returned types}}
  %0:2 = nn.split %x {axis = 1 : i64, sizes = array<i64: 2, 3>} : tensor<4x6xf32> -> tensor<4x2xf32>, tensor<4x3xf32>
  return
}

// -----

func.func @split_result_count(%x: tensor<4x6xf32>) {
  // expected-error@+2 {{'nn.split' op inferred type(s) 'tensor<4x3xf32>', 'tensor<4x3xf32>' are incompatible with return type(s) of operation 'tensor<4x3xf32>'}}
  // expected-error@+1 {{'nn.split' op failed to infer returned types}}
  %0 = nn.split %x {axis = 1 : i64, sizes = array<i64: 3, 3>} : tensor<4x6xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @split_sum_overflow(%x: tensor<4xf32>) {
  // expected-error@+2 {{'nn.split' op piece sizes overflow a 64-bit sum, expected them to sum to the size of axis 0, 4}}
  // expected-error@+1 {{'nn.split' op failed to infer returned types}}
  %0:2 = nn.split %x {axis = 0 : i64, sizes = array<i64: 9223372036854775807, 9223372036854775807>} : tensor<4xf32> -> tensor<4xf32>, tensor<4xf32>
  return
}
