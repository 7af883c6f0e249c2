// RUN: tandem-translate %s --tandem-to-source -o /dev/null -split-input-file -verify-diagnostics

// Types the emitter does not handle yet are errors at the op, never code.
func.func @f8(%x: tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN> {
  // expected-error @below {{'nn.exp' on 'f8E4M3FN' is not supported by the CPU emitter yet (supported element types: f32, f64, bf16, f16, i32, i64; i8, f8E4M3FN and f8E5M2 only as codec payloads, which nn.quantize, nn.dequantize and data movement handle)}}
  %y = nn.exp %x : tensor<4xf8E4M3FN>
  return %y : tensor<4xf8E4M3FN>
}

// -----

func.func @f8_cast(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'nn.cast' on 'f8E5M2' is not supported by the CPU emitter yet}}
  %h = nn.cast %x {saturate = false} : tensor<4xf32> to tensor<4xf8E5M2>
  %y = nn.cast %h : tensor<4xf8E5M2> to tensor<4xf32>
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

func.func @layer_norm_grad(%x: tensor<2x8xf32>, %w: tensor<8xf32>) -> tensor<2x8xf32> {
  // expected-error @below {{nn.layer_norm_grad is not supported by the CPU emitter: differentiate with nn-autodiff{decompose-norms=true}}}
  %dx, %xhat = nn.layer_norm_grad %x, %w, %x {epsilon = 1.0e-05 : f64} : tensor<2x8xf32>, tensor<8xf32>, tensor<2x8xf32>
  return %dx : tensor<2x8xf32>
}

// -----

func.func @rms_norm_grad(%x: tensor<2x8xf32>, %w: tensor<8xf32>) -> tensor<2x8xf32> {
  // expected-error @below {{nn.rms_norm_grad is not supported by the CPU emitter: differentiate with nn-autodiff{decompose-norms=true}}}
  %dx, %xhat = nn.rms_norm_grad %x, %w, %x {epsilon = 1.0e-05 : f64} : tensor<2x8xf32>, tensor<8xf32>, tensor<2x8xf32>
  return %dx : tensor<2x8xf32>
}

// -----

func.func @gelu_grad(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @below {{nn.gelu_grad is not supported by the CPU emitter: differentiate with nn-autodiff{decompose-gelu=true}}}
  %dx = nn.gelu_grad %x, %x : tensor<2x8xf32>
  return %dx : tensor<2x8xf32>
}

// -----

func.func private @callee(tensor<4xf32>) -> tensor<4xf32>

func.func @call(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'func.call' is not supported by the CPU emitter}}
  %y = func.call @callee(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Codec payloads are bytes only the codecs and data movement touch.
func.func @payload_arithmetic(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %q, %s = nn.quantize %x {block = 8} : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>, tensor<4x1xf32>
  // expected-error @below {{'nn.broadcast_to' on 'f8E4M3FN' is not supported by the CPU emitter yet}}
  %b = nn.broadcast_to %q : tensor<4x8xf8E4M3FN> to tensor<2x4x8xf8E4M3FN>
  %y = nn.dequantize %q, %s {block = 8} : tensor<4x8xf8E4M3FN>, tensor<4x1xf32> to tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
