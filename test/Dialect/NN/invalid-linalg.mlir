// RUN: tandem-opt %s -split-input-file -verify-diagnostics

// Diagnostics of nn.matmul: ranks, batch dimensions, contraction dimensions
// (with and without the transpose flags) and element types.

func.func @matmul_rank1_lhs(%a: tensor<8xf32>, %b: tensor<8x4xf32>) {
  // expected-error@+2 {{'nn.matmul' op expected operands of rank >= 2, found lhs rank 1 and rhs rank 2}}
  // expected-error@+1 {{'nn.matmul' op failed to infer returned types}}
  %0 = nn.matmul %a, %b : tensor<8xf32>, tensor<8x4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @matmul_rank0_rhs(%a: tensor<2x8xf32>, %b: tensor<f32>) {
  // expected-error@+2 {{'nn.matmul' op expected operands of rank >= 2, found lhs rank 2 and rhs rank 0}}
  // expected-error@+1 {{'nn.matmul' op failed to infer returned types}}
  %0 = nn.matmul %a, %b : tensor<2x8xf32>, tensor<f32> -> tensor<2xf32>
  return
}

// -----

func.func @matmul_rhs_rank_above_lhs(%a: tensor<4x8xf32>, %b: tensor<2x8x4xf32>) {
  // expected-error@+2 {{'nn.matmul' op expected rhs to be 2-D or to have the rank of lhs (2), found rank 3}}
  // expected-error@+1 {{'nn.matmul' op failed to infer returned types}}
  %0 = nn.matmul %a, %b : tensor<4x8xf32>, tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  return
}

// -----

func.func @matmul_rhs_rank_between(%a: tensor<2x3x4x8xf32>, %b: tensor<3x8x4xf32>) {
  // expected-error@+2 {{'nn.matmul' op expected rhs to be 2-D or to have the rank of lhs (4), found rank 3}}
  // expected-error@+1 {{'nn.matmul' op failed to infer returned types}}
  %0 = nn.matmul %a, %b : tensor<2x3x4x8xf32>, tensor<3x8x4xf32> -> tensor<2x3x4x4xf32>
  return
}

// -----

func.func @matmul_batch_mismatch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x4xf32>) {
  // expected-error@+2 {{'nn.matmul' op batch dimensions differ: lhs has [2], rhs has [3]}}
  // expected-error@+1 {{'nn.matmul' op failed to infer returned types}}
  %0 = nn.matmul %a, %b : tensor<2x4x8xf32>, tensor<3x8x4xf32> -> tensor<2x4x4xf32>
  return
}

// -----

// Batch dimensions do not broadcast.
func.func @matmul_batch_no_broadcast(%a: tensor<2x3x4x8xf32>, %b: tensor<1x3x8x4xf32>) {
  // expected-error@+2 {{'nn.matmul' op batch dimensions differ: lhs has [2x3], rhs has [1x3]}}
  // expected-error@+1 {{'nn.matmul' op failed to infer returned types}}
  %0 = nn.matmul %a, %b : tensor<2x3x4x8xf32>, tensor<1x3x8x4xf32> -> tensor<2x3x4x4xf32>
  return
}

// -----

func.func @matmul_contraction(%a: tensor<4x8xf32>, %b: tensor<6x4xf32>) {
  // expected-error@+2 {{'nn.matmul' op contraction dimensions differ: lhs has 8, rhs has 6}}
  // expected-error@+1 {{'nn.matmul' op failed to infer returned types}}
  %0 = nn.matmul %a, %b : tensor<4x8xf32>, tensor<6x4xf32> -> tensor<4x4xf32>
  return
}

// -----

// With transpose_lhs the contraction dimension of lhs is its second-to-last.
func.func @matmul_contraction_transpose_lhs(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) {
  // expected-error@+2 {{'nn.matmul' op contraction dimensions differ: lhs has 4, rhs has 8}}
  // expected-error@+1 {{'nn.matmul' op failed to infer returned types}}
  %0 = nn.matmul %a, %b {transpose_lhs} : tensor<4x8xf32>, tensor<8x3xf32> -> tensor<8x3xf32>
  return
}

// -----

// With transpose_rhs the contraction dimension of rhs is its last.
func.func @matmul_contraction_transpose_rhs(%a: tensor<2x4x8xf32>, %b: tensor<8x3xf32>) {
  // expected-error@+2 {{'nn.matmul' op contraction dimensions differ: lhs has 8, rhs has 3}}
  // expected-error@+1 {{'nn.matmul' op failed to infer returned types}}
  %0 = nn.matmul %a, %b {transpose_rhs} : tensor<2x4x8xf32>, tensor<8x3xf32> -> tensor<2x4x8xf32>
  return
}

// -----

func.func @matmul_wrong_result(%a: tensor<2x4x8xf32>, %b: tensor<8x3xf32>) {
  // expected-error@+2 {{'nn.matmul' op inferred type(s) 'tensor<2x4x3xf32>' are incompatible with return type(s) of operation 'tensor<4x3xf32>'}}
  // expected-error@+1 {{'nn.matmul' op failed to infer returned types}}
  %0 = nn.matmul %a, %b : tensor<2x4x8xf32>, tensor<8x3xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @matmul_element_types(%a: tensor<4x8xbf16>, %b: tensor<8x3xf32>) {
  // expected-error@+2 {{'nn.matmul' op expected operands to have the same element type, found 'bf16' and 'f32'}}
  // expected-error@+1 {{'nn.matmul' op failed to infer returned types}}
  %0 = nn.matmul %a, %b : tensor<4x8xbf16>, tensor<8x3xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @matmul_result_element_type(%a: tensor<4x8xf16>, %b: tensor<8x3xf16>) {
  // expected-error@+2 {{'nn.matmul' op inferred type(s) 'tensor<4x3xf16>' are incompatible with return type(s) of operation 'tensor<4x3xf32>'}}
  // expected-error@+1 {{'nn.matmul' op failed to infer returned types}}
  %0 = nn.matmul %a, %b : tensor<4x8xf16>, tensor<8x3xf16> -> tensor<4x3xf32>
  return
}

// -----

func.func @matmul_integer(%a: tensor<4x8xi32>, %b: tensor<8x3xi32>) {
  // expected-error@+1 {{'nn.matmul' op operand #0 must be statically shaped tensor of 64-bit float or 32-bit float or 16-bit float or bfloat16 type or f8E4M3FN type or f8E5M2 type values, but got 'tensor<4x8xi32>'}}
  %0 = nn.matmul %a, %b : tensor<4x8xi32>, tensor<8x3xi32> -> tensor<4x3xi32>
  return
}

// -----

func.func @matmul_dynamic(%a: tensor<4x8xf32>, %b: tensor<8x?xf32>) {
  // expected-error@+1 {{'nn.matmul' op operand #1 must be statically shaped tensor of 64-bit float or 32-bit float or 16-bit float or bfloat16 type or f8E4M3FN type or f8E5M2 type values, but got 'tensor<8x?xf32>'}}
  %0 = nn.matmul %a, %b : tensor<4x8xf32>, tensor<8x?xf32> -> tensor<4x?xf32>
  return
}

// -----

func.func @matmul_flag_not_unit(%a: tensor<4x8xf32>, %b: tensor<3x8xf32>) {
  // expected-error@+1 {{'nn.matmul' op attribute 'transpose_rhs' failed to satisfy constraint: unit attribute}}
  %0 = nn.matmul %a, %b {transpose_rhs = true} : tensor<4x8xf32>, tensor<3x8xf32> -> tensor<4x3xf32>
  return
}
