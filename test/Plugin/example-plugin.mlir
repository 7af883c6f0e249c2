// REQUIRES: plugin
// The example pass plugin (examples/plugin), built against the build tree's
// Tandem package and loaded into tandem-opt.
// RUN: tandem-opt %s --load-pass-plugin=%tandem_plugin --split-input-file \
// RUN:   --pass-pipeline='builtin.module(example-param-stats)' \
// RUN:   -verify-diagnostics | FileCheck %s
// Without remarks, the annotations alone. (stderr is checked with grep:
// MLIR 22's tandem-opt prints the unmet expected-remark lines below even
// without -verify-diagnostics, exiting 0.)
// RUN: tandem-opt %s --load-pass-plugin=%tandem_plugin --split-input-file \
// RUN:   --pass-pipeline='builtin.module(example-param-stats{remarks=false})' \
// RUN:   2> %t.stderr | FileCheck %s
// RUN: not grep "remark: reads" %t.stderr

nn.parameter @wte : tensor<16x8xf32> = normal(0.02)
nn.parameter @bias : tensor<8xf32> = zeros

// A parameter read twice (a tied embedding) counts once.
// CHECK-LABEL: func.func @tied
// CHECK-SAME: attributes {example.param_bytes = 544 : i64, example.param_elements = 136 : i64, example.params = 2 : i64}
// expected-remark@+1 {{reads 2 parameters, 136 elements, 544 bytes}}
func.func @tied(%tokens: tensor<2x4xi32>) -> tensor<2x4x16xf32> {
  %wte = nn.param @wte : tensor<16x8xf32>
  %x = nn.embedding %wte, %tokens : tensor<16x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
  %b = nn.param @bias : tensor<8xf32>
  %h = nn.add %x, %b : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
  %head = nn.param @wte : tensor<16x8xf32>
  %y = nn.matmul %h, %head {transpose_rhs} : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>
  return %y : tensor<2x4x16xf32>
}

// Each function counts only what it reads itself.
// CHECK-LABEL: func.func @bias_only
// CHECK-SAME: example.param_bytes = 32 : i64, example.param_elements = 8 : i64, example.params = 1 : i64
// expected-remark@+1 {{reads 1 parameter, 8 elements, 32 bytes}}
func.func @bias_only(%x: tensor<8xf32>) -> tensor<8xf32> {
  %b = nn.param @bias : tensor<8xf32>
  %y = nn.add %x, %b : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// A function reading no parameter, and a declaration, are annotated too.
// CHECK-LABEL: func.func @no_params
// CHECK-SAME: example.param_bytes = 0 : i64, example.param_elements = 0 : i64, example.params = 0 : i64
// expected-remark@+1 {{reads 0 parameters, 0 elements, 0 bytes}}
func.func @no_params(%x: tensor<8xf32>) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}
// CHECK-LABEL: func.func private @external
// CHECK-SAME: example.params = 0 : i64
// expected-remark@+1 {{reads 0 parameters, 0 elements, 0 bytes}}
func.func private @external(tensor<8xf32>) -> tensor<8xf32>

// -----

// Bytes follow the element type: bf16 is 2 bytes, f8E4M3FN is 1.
nn.parameter @gain : tensor<4x8xbf16> = ones
nn.parameter @scale : tensor<3xf8E4M3FN> = ones

// CHECK-LABEL: func.func @narrow
// CHECK-SAME: example.param_bytes = 67 : i64, example.param_elements = 35 : i64, example.params = 2 : i64
// expected-remark@+1 {{reads 2 parameters, 35 elements, 67 bytes}}
func.func @narrow() -> (tensor<4x8xbf16>, tensor<3xf8E4M3FN>) {
  %g = nn.param @gain : tensor<4x8xbf16>
  %s = nn.param @scale : tensor<3xf8E4M3FN>
  return %g, %s : tensor<4x8xbf16>, tensor<3xf8E4M3FN>
}
