// What the CUDA target does not lower yet is an error at the op, and
// types it does not hold are refused.
// RUN: tandem-translate %s --tandem-to-source --target cuda -o /dev/null -split-input-file -verify-diagnostics

func.func @f64(%x: tensor<4xf64>) -> tensor<4xf64> {
  // expected-error @below {{the cuda target does not support type 'tensor<4xf64>' (f32, bf16, f16, i32 and i64 tensors)}}
  %y = nn.exp %x : tensor<4xf64>
  return %y : tensor<4xf64>
}

// -----

func.func @int_add(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @below {{the cuda target computes 'nn.add' only on f32, bf16 or f16 results}}
  %y = nn.add %x, %x : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  return %y : tensor<4xi32>
}

// -----

func.func @constant_result() -> tensor<4xf32> {
  %c = nn.constant dense<1.0> : tensor<4xf32>
  // expected-error @below {{the cuda target does not return a constant yet (result 0)}}
  return %c : tensor<4xf32>
}

// -----

func.func @attention_wide_heads(%q: tensor<1x4x512xf32>) -> tensor<1x4x512xf32> {
  // expected-error @below {{the cuda target's attention takes heads of at most 256 elements, found 512}}
  %y = nn.attention %q, %q, %q {heads = 1 : i64} : tensor<1x4x512xf32>, tensor<1x4x512xf32>, tensor<1x4x512xf32> -> tensor<1x4x512xf32>
  return %y : tensor<1x4x512xf32>
}
