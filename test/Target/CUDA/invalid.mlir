// What the CUDA target does not lower yet is an error at the op, and
// types it does not hold are refused.
// RUN: tandem-translate %s --tandem-to-source --target cuda -o /dev/null -split-input-file -verify-diagnostics

func.func @f64(%x: tensor<4xf64>) -> tensor<4xf64> {
  // expected-error @below {{the cuda target does not support type 'tensor<4xf64>' (f32, bf16, f16, i32 and i64 tensors; i8, f8E4M3FN and f8E5M2 as codec payloads)}}
  %y = nn.exp %x : tensor<4xf64>
  return %y : tensor<4xf64>
}

// -----

// Codec payloads are bytes only the codecs and data movement touch, as on
// the CPU target.
func.func @payload_arithmetic(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %q, %s = nn.quantize %x {block = 8} : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>, tensor<4x1xf32>
  // expected-error @below {{'nn.broadcast_to' on 'f8E4M3FN' is not supported by the cuda target (i8, f8E4M3FN and f8E5M2 only as codec payloads, which nn.quantize, nn.dequantize and data movement handle)}}
  %b = nn.broadcast_to %q : tensor<4x8xf8E4M3FN> to tensor<2x4x8xf8E4M3FN>
  %y = nn.dequantize %q, %s {block = 8} : tensor<4x8xf8E4M3FN>, tensor<4x1xf32> to tensor<4x8xf32>
  return %y : tensor<4x8xf32>
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

// -----

// The attention kernels divide block and head indices in 32 bits: 2^31
// query rows (batch 4 x one head x 2^29 queries) are refused.
func.func @attention_too_many_rows(%q: tensor<4x536870912x8xf32>) -> tensor<4x536870912x8xf32> {
  // expected-error @below {{the cuda target's attention takes fewer than 2^31 query and key rows (batch x heads x sequence), found 2147483648 and 2147483648}}
  %y = nn.attention %q, %q, %q {heads = 1 : i64} : tensor<4x536870912x8xf32>, tensor<4x536870912x8xf32>, tensor<4x536870912x8xf32> -> tensor<4x536870912x8xf32>
  return %y : tensor<4x536870912x8xf32>
}

// -----

// A recorded plan (tandem-form-kernels without the CUDA policy) may fuse
// more into a reduction than the CUDA target's reductions take: a cast
// whose operand is also returned needs the reduction's value stored too.
func.func @reduction_epilogue(%x: tensor<8x96xbf16>) -> (tensor<96xf32>, tensor<96xbf16>) {
  // expected-error @below {{the cuda target fuses only a cast of a column reduction's result into the reduction (docs/cuda-backend.md)}}
  %s = nn.reduce_sum %x [0] {nn.kernel = 0 : i64} : tensor<8x96xbf16> -> tensor<96xbf16>
  %f = nn.cast %s {nn.kernel = 0 : i64} : tensor<96xbf16> to tensor<96xf32>
  return %f, %s : tensor<96xf32>, tensor<96xbf16>
}

// -----

// A recorded row input the CUDA target's norms do not compute: a product,
// not a residual add.
func.func @row_input(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>, %w: tensor<4xf32>) -> tensor<2x4xf32> {
  %x = nn.mul %a, %b {nn.kernel = 0 : i64} : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  // expected-error @below {{the cuda target computes only a residual add ('a + b' or 'a + cast(b)') into a norm's row kernel (docs/cuda-backend.md)}}
  %y = nn.rms_norm %x, %w {epsilon = 1.0e-05 : f64, nn.kernel_row_input = 0 : i64} : tensor<2x4xf32>, tensor<4xf32>
  return %y : tensor<2x4xf32>
}
