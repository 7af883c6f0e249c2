// RUN: tandem-opt %s -split-input-file -verify-diagnostics

// Diagnostics of nn.parameter, its initializer (#nn.init) and nn.param.

// expected-error@+1 {{normal initializer needs a positive standard deviation, found 0.000000e+00}}
nn.parameter @p : tensor<4xf32> = normal(0.0)

// -----

// expected-error@+1 {{normal initializer needs a positive standard deviation, found -2.000000e-02}}
nn.parameter @p : tensor<4xf32> = normal(-0.02)

// -----

// expected-error@+1 {{uniform initializer needs low < high, found low 1.000000e-01 and high -1.000000e-01}}
nn.parameter @p : tensor<4xf32> = uniform(0.1, -0.1)

// -----

// expected-error@+1 {{uniform initializer needs low < high, found low 5.000000e-01 and high 5.000000e-01}}
nn.parameter @p : tensor<4xf32> = uniform(0.5, 0.5)

// -----

// A hexadecimal literal is the only way to spell a non-finite double.
// expected-error@+1 {{initializer parameters must be finite, found INF and 0.000000e+00}}
nn.parameter @p : tensor<4xf32> = normal(0x7FF0000000000000)

// -----

// expected-error@+1 {{initializer parameters must be finite, found -1.000000e+00 and nan}}
nn.parameter @p : tensor<4xf32> = uniform(-1.0, 0x7FF8000000000000)

// -----

// expected-error@+1 {{expected an initializer (zeros, ones, normal(std), uniform(low, high), orthonormal), found 'xavier'}}
nn.parameter @p : tensor<4xf32> = xavier

// -----

// expected-error@+1 {{expected '('}}
nn.parameter @p : tensor<4xf32> = normal

// -----

// expected-error@+1 {{expected ','}}
nn.parameter @p : tensor<4xf32> = uniform(0.1)

// -----

// expected-error@+1 {{expected ')'}}
nn.parameter @p : tensor<4xf32> = normal(0.1, 0.2)

// -----

// expected-error@+1 {{expected floating point literal}}
nn.parameter @p : tensor<4xf32> = normal(std)

// -----

// expected-error@+2 {{unexpected decimal integer literal for a floating point value}}
// expected-note@+1 {{add a trailing dot to make the literal a float}}
nn.parameter @p : tensor<4xf32> = uniform(-1, 1)

// -----

// The attribute form checks the same rules.
// expected-error@+1 {{uniform initializer needs low < high, found low 2.000000e+00 and high 1.000000e+00}}
func.func private @f() attributes {init = #nn.init<uniform(2.0, 1.0)>}

// -----

// expected-error@+1 {{expected an initializer (zeros, ones, normal(std), uniform(low, high), orthonormal), found 'gaussian'}}
func.func private @f() attributes {init = #nn.init<gaussian>}

// -----

// expected-error@+1 {{expected '>'}}
func.func private @f() attributes {init = #nn.init<zeros(1.0)>}

// -----

// expected-error@+1 {{'nn.parameter' op attribute 'type' failed to satisfy constraint: type attribute of statically shaped tensor of 64-bit float or 32-bit float or 16-bit float or bfloat16 type or f8E4M3FN type or f8E5M2 type values}}
nn.parameter @p : tensor<4xi32> = zeros

// -----

// expected-error@+1 {{'nn.parameter' op attribute 'type' failed to satisfy constraint}}
nn.parameter @p : f32 = zeros

// -----

// expected-error@+1 {{'nn.parameter' op attribute 'type' failed to satisfy constraint}}
nn.parameter @p : tensor<?x4xf32> = zeros

// -----

func.func @f() {
  // expected-error@+1 {{'nn.parameter' op expects parent op 'builtin.module'}}
  nn.parameter @p : tensor<4xf32> = zeros
  return
}

// -----

// expected-note@+1 {{see existing symbol definition here}}
nn.parameter @p : tensor<4xf32> = zeros
// expected-error@+1 {{redefinition of symbol named 'p'}}
nn.parameter @p : tensor<4xf32> = ones

// -----

func.func @f() -> tensor<4xf32> {
  // expected-error@+1 {{'nn.param' op 'missing' does not name an nn.parameter}}
  %0 = nn.param @missing : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func private @g() -> tensor<4xf32>

func.func @f() -> tensor<4xf32> {
  // expected-error@+1 {{'nn.param' op 'g' does not name an nn.parameter}}
  %0 = nn.param @g : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

nn.parameter @p : tensor<4x8xf32> = zeros

func.func @f() -> tensor<8x4xf32> {
  // expected-error@+1 {{'nn.param' op result type 'tensor<8x4xf32>' does not match the type of parameter 'p', 'tensor<4x8xf32>'}}
  %0 = nn.param @p : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

nn.parameter @p : tensor<4xf32> = zeros

func.func @f() -> tensor<4xbf16> {
  // expected-error@+1 {{'nn.param' op result type 'tensor<4xbf16>' does not match the type of parameter 'p', 'tensor<4xf32>'}}
  %0 = nn.param @p : tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

func.func @f() -> tensor<4xi32> {
  // expected-error@+1 {{'nn.param' op result #0 must be statically shaped tensor of 64-bit float or 32-bit float or 16-bit float or bfloat16 type or f8E4M3FN type or f8E5M2 type values, but got 'tensor<4xi32>'}}
  %0 = nn.param @p : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @f() {
  // expected-error@+1 {{'nn.param' op requires attribute 'name'}}
  %0 = "nn.param"() : () -> tensor<4xf32>
  return
}

// -----

// expected-error@+1 {{'nn.parameter' op expected a logical_shape of rank 2 (the type's), found rank 1}}
nn.parameter @wte : tensor<384x32xf32> = normal(0.02) {logical_shape = array<i64: 300>}

// -----

// expected-error@+1 {{'nn.parameter' op expected logical_shape dimension 0 in [1, 384] (the stored size), found 400}}
nn.parameter @wte : tensor<384x32xf32> = normal(0.02) {logical_shape = array<i64: 400, 32>}

// -----

// expected-error@+1 {{'nn.parameter' op expected logical_shape dimension 1 in [1, 32] (the stored size), found 0}}
nn.parameter @wte : tensor<384x32xf32> = normal(0.02) {logical_shape = array<i64: 300, 0>}

// -----

// expected-error@+1 {{'nn.parameter' op expected a logical_shape that differs from the type in at most one dimension, found 2}}
nn.parameter @wte : tensor<384x32xf32> = normal(0.02) {logical_shape = array<i64: 300, 30>}

// -----

// expected-error@+1 {{'nn.parameter' op an orthonormal parameter must have rank >= 2 (a matrix: rows x columns), found rank 1}}
nn.parameter @u : tensor<8xf32> = orthonormal {frozen}

// -----

// expected-error@+1 {{'nn.parameter' op an orthonormal parameter needs at least as many rows as columns (the last dimension), found 4 rows and 8 columns}}
nn.parameter @u : tensor<4x8xf32> = orthonormal {frozen}

// -----

// expected-error@+1 {{'nn.parameter' op an orthonormal parameter cannot be padded (logical_shape)}}
nn.parameter @u : tensor<16x4xf32> = orthonormal {logical_shape = array<i64: 12, 4>}

// -----

// expected-error@+1 {{'nn.parameter' op expected a non-negative seed, found -3}}
nn.parameter @t : tensor<16x4xf32> = normal(0.02) {frozen, seed = -3 : i64}
