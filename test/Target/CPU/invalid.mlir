// RUN: tandem-opt %s --tandem-emit-cpu -o /dev/null -split-input-file -verify-diagnostics

// Types the emitter does not handle yet are errors at the op, never code.
func.func @bf16(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  // expected-error @below {{'nn.exp' on 'bf16' is not supported by the CPU emitter yet (supported element types: f32, f64, i32, i64)}}
  %y = nn.exp %x : tensor<4xbf16>
  return %y : tensor<4xbf16>
}

// -----

func.func @f16_cast(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'nn.cast' on 'f16' is not supported by the CPU emitter yet}}
  %h = nn.cast %x : tensor<4xf32> to tensor<4xf16>
  %y = nn.cast %h : tensor<4xf16> to tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @integer_add(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @below {{'nn.add' with integer results is not supported by the CPU emitter yet}}
  %y = nn.add %x, %x : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  return %y : tensor<4xi32>
}

// -----

func.func @attention(%q: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  // expected-error @below {{nn.attention is not supported by the CPU emitter: run nn-decompose-attention first}}
  %y = nn.attention %q, %q, %q {causal, heads = 2 : i64} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

func.func private @callee(tensor<4xf32>) -> tensor<4xf32>

func.func @call(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'func.call' is not supported by the CPU emitter}}
  %y = func.call @callee(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
