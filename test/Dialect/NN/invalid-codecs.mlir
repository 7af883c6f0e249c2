// RUN: tandem-opt %s -split-input-file -verify-diagnostics

// Diagnostics of the blockwise codecs, nn.quantize and nn.dequantize.

func.func @block_zero(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'nn.quantize' op 'block' must be at least 1, found 0}}
  %q, %s = nn.quantize %x {block = 0} : tensor<4x8xf32> to tensor<4x8xi8>, tensor<4x1xf32>
  return
}

// -----

func.func @rank_zero(%x: tensor<f32>) {
  // expected-error@+1 {{'nn.quantize' op expects the input to have rank at least 1 (blocks run along its last dimension)}}
  %q, %s = nn.quantize %x {block = 4} : tensor<f32> to tensor<i8>, tensor<f32>
  return
}

// -----

func.func @payload_shape(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'nn.quantize' op expects the payload to have the input's shape 'tensor<4x8xi8>', found 'tensor<8x4xi8>'}}
  %q, %s = nn.quantize %x {block = 4} : tensor<4x8xf32> to tensor<8x4xi8>, tensor<4x2xf32>
  return
}

// -----

func.func @scales_shape(%x: tensor<4x10xf32>) {
  // expected-error@+1 {{'nn.quantize' op expects scales of type 'tensor<4x3xf32>' (one f32 per 4 elements of the last dimension), found 'tensor<4x2xf32>'}}
  %q, %s = nn.quantize %x {block = 4} : tensor<4x10xf32> to tensor<4x10xi8>, tensor<4x2xf32>
  return
}

// -----

func.func @scales_type(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'nn.quantize' op expects scales of type 'tensor<4x2xf32>' (one f32 per 4 elements of the last dimension), found 'tensor<4x2xbf16>'}}
  %q, %s = nn.quantize %x {block = 4} : tensor<4x8xf32> to tensor<4x8xi8>, tensor<4x2xbf16>
  return
}

// -----

func.func @payload_type(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'nn.quantize' op result #0 must be statically shaped tensor of 8-bit signless integer or f8E4M3FN type or f8E5M2 type values, but got 'tensor<4x8xf16>'}}
  %q, %s = nn.quantize %x {block = 4} : tensor<4x8xf32> to tensor<4x8xf16>, tensor<4x2xf32>
  return
}

// -----

func.func @integer_input(%x: tensor<4x8xi32>) {
  // expected-error@+1 {{'nn.quantize' op operand #0 must be statically shaped tensor of}}
  %q, %s = nn.quantize %x {block = 4} : tensor<4x8xi32> to tensor<4x8xi8>, tensor<4x2xf32>
  return
}

// -----

func.func @dequantize_shape(%q: tensor<4x8xi8>, %s: tensor<4x2xf32>) {
  // expected-error@+1 {{'nn.dequantize' op expects the payload to have the result's shape 'tensor<4x4xi8>', found 'tensor<4x8xi8>'}}
  %y = nn.dequantize %q, %s {block = 4} : tensor<4x8xi8>, tensor<4x2xf32> to tensor<4x4xf32>
  return
}

// -----

func.func @dequantize_block(%q: tensor<4x8xi8>, %s: tensor<4x2xf32>) {
  // expected-error@+1 {{'nn.dequantize' op expects scales of type 'tensor<4x1xf32>' (one f32 per 8 elements of the last dimension), found 'tensor<4x2xf32>'}}
  %y = nn.dequantize %q, %s {block = 8} : tensor<4x8xi8>, tensor<4x2xf32> to tensor<4x8xf32>
  return
}

// -----

func.func @dequantize_result(%q: tensor<4x8xi8>, %s: tensor<4x2xf32>) {
  // expected-error@+1 {{'nn.dequantize' op result #0 must be statically shaped tensor of}}
  %y = nn.dequantize %q, %s {block = 4} : tensor<4x8xi8>, tensor<4x2xf32> to tensor<4x8xi32>
  return
}
