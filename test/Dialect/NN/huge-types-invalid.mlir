// RUN: tandem-opt %s -split-input-file -verify-diagnostics
//
// A tensor of more than 2^48 bytes (256 TiB, beyond any machine a rank runs
// on) is refused where it appears, in checked arithmetic: before issue 17,
// tensor<99999999999x99999999999xf32> compiled, mpmd-memory printed wrapped
// negative sizes and the manifest recorded them.

func.func @add(%x: tensor<99999999999x99999999999xf32>) -> tensor<99999999999x99999999999xf32> {
  // expected-error@+1 {{'nn.add' op operand 0 of type 'tensor<99999999999x99999999999xf32>' holds more than 2^48 bytes, more than any machine can allocate}}
  %0 = nn.add %x, %x : tensor<99999999999x99999999999xf32>, tensor<99999999999x99999999999xf32> -> tensor<99999999999x99999999999xf32>
  return %0 : tensor<99999999999x99999999999xf32>
}

// -----

// The element count alone overflows 64 bits.
func.func @count(%x: tensor<4xf32>) -> tensor<4294967296x4294967296x16xf32> {
  // expected-error@+1 {{'nn.broadcast_to' op result 0 of type 'tensor<4294967296x4294967296x16xf32>' holds more than 2^48 bytes}}
  %0 = nn.broadcast_to %x : tensor<4xf32> to tensor<4294967296x4294967296x16xf32>
  return %0 : tensor<4294967296x4294967296x16xf32>
}

// -----

// expected-error@+1 {{'nn.parameter' op the parameter of type 'tensor<65536x1073741825xf32>' holds more than 2^48 bytes}}
nn.parameter @w : tensor<65536x1073741825xf32> = zeros

// -----

// Exactly 2^48 bytes is allowed; one element of a wider type is not.
nn.parameter @ok : tensor<65536x1073741824xf32> = zeros
// expected-error@+1 {{'nn.parameter' op the parameter of type 'tensor<65536x1073741824xf64>' holds more than 2^48 bytes}}
nn.parameter @wide : tensor<65536x1073741824xf64> = zeros

// -----

nn.parameter @w : tensor<4xf32> = zeros
mpmd.program @p stages 1 chunks 1 replicas 1 microbatches 1 {
  // expected-error@+1 {{'mpmd.fragment' op argument 0 of type 'tensor<99999999999x99999999999xf32>' holds more than 2^48 bytes}}
  mpmd.fragment @f stage 0 chunk 0 kind fwd
      (%x: tensor<99999999999x99999999999xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    %c = nn.constant dense<1.0> : tensor<4xf32>
    mpmd.yield %c : tensor<4xf32>
  }
}
