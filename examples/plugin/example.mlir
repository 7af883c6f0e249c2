// A tiny tied-embedding language model: the token embedding @wte is read by
// the embedding and again, transposed, by the LM head. Run the plugin's pass
// over it (see README.md):
//
//   tandem-opt example.mlir --load-pass-plugin=TandemExamplePlugin.so \
//     --pass-pipeline='builtin.module(example-param-stats)'
//
// The install test (cmake/test-install.sh) checks the printed IR against
// the CHECK lines and the remarks against the REMARK lines.

// REMARK: example.mlir:{{[0-9]+}}:1: remark: reads 3 parameters, 144 elements, 576 bytes
// REMARK: example.mlir:{{[0-9]+}}:1: remark: reads 1 parameter, 8 elements, 16 bytes
// REMARK: example.mlir:{{[0-9]+}}:1: remark: reads 0 parameters, 0 elements, 0 bytes

// CHECK-LABEL: func.func @logits
// CHECK-SAME: attributes {example.param_bytes = 576 : i64, example.param_elements = 144 : i64, example.params = 3 : i64}
// CHECK-LABEL: func.func @scale
// CHECK-SAME: attributes {example.param_bytes = 16 : i64, example.param_elements = 8 : i64, example.params = 1 : i64}
// CHECK-LABEL: func.func @identity
// CHECK-SAME: attributes {example.param_bytes = 0 : i64, example.param_elements = 0 : i64, example.params = 0 : i64}

nn.parameter @wte : tensor<16x8xf32> = normal(0.02)
nn.parameter @scale.weight : tensor<8xf32> = ones
nn.parameter @scale.bias : tensor<8xf32> = zeros
nn.parameter @gain : tensor<8xbf16> = ones

func.func @logits(%tokens: tensor<2x4xi32>) -> tensor<2x4x16xf32> {
  %wte = nn.param @wte : tensor<16x8xf32>
  %x = nn.embedding %wte, %tokens : tensor<16x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
  %w = nn.param @scale.weight : tensor<8xf32>
  %b = nn.param @scale.bias : tensor<8xf32>
  %xw = nn.mul %x, %w : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
  %h = nn.add %xw, %b : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
  %head = nn.param @wte : tensor<16x8xf32>
  %y = nn.matmul %h, %head {transpose_rhs} : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>
  return %y : tensor<2x4x16xf32>
}

func.func @scale(%x: tensor<8xbf16>) -> tensor<8xbf16> {
  %g = nn.param @gain : tensor<8xbf16>
  %y = nn.mul %x, %g : tensor<8xbf16>, tensor<8xbf16> -> tensor<8xbf16>
  return %y : tensor<8xbf16>
}

func.func @identity(%x: tensor<8xf32>) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}
