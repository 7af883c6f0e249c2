// RUN: tandem-opt %s | tandem-opt | FileCheck %s
// RUN: tandem-opt %s --mlir-print-op-generic | tandem-opt | FileCheck %s

// The blockwise codecs print as they parse: every payload type, a block
// that does not divide the last dimension, and a decode to another float
// type.

// CHECK-LABEL: func.func @codecs
func.func @codecs(%x: tensor<2x300xf32>, %h: tensor<4x64xbf16>) -> (tensor<2x300xf32>, tensor<4x64xf32>, tensor<4x64xbf16>) {
  // CHECK: %[[Q:.*]], %[[S:.*]] = nn.quantize %{{.*}} {block = 128 : i64} : tensor<2x300xf32> to tensor<2x300xi8>, tensor<2x3xf32>
  %q, %s = nn.quantize %x {block = 128} : tensor<2x300xf32> to tensor<2x300xi8>, tensor<2x3xf32>
  // Codes cross stage markers and reshapes unchanged.
  // CHECK: %[[M:.*]]:2 = nn.stage_end %[[Q]], %[[S]] : tensor<2x300xi8>, tensor<2x3xf32>
  %m, %n = nn.stage_end %q, %s : tensor<2x300xi8>, tensor<2x3xf32>
  // CHECK: nn.reshape %[[M]]#0 : tensor<2x300xi8> to tensor<600xi8>
  %r = nn.reshape %m : tensor<2x300xi8> to tensor<600xi8>
  // CHECK: nn.dequantize %[[M]]#0, %[[M]]#1 {block = 128 : i64} : tensor<2x300xi8>, tensor<2x3xf32> to tensor<2x300xf32>
  %y = nn.dequantize %m, %n {block = 128} : tensor<2x300xi8>, tensor<2x3xf32> to tensor<2x300xf32>
  // CHECK: nn.quantize %{{.*}} {block = 32 : i64} : tensor<4x64xbf16> to tensor<4x64xf8E4M3FN>, tensor<4x2xf32>
  %q8, %s8 = nn.quantize %h {block = 32} : tensor<4x64xbf16> to tensor<4x64xf8E4M3FN>, tensor<4x2xf32>
  // CHECK: nn.dequantize %{{.*}}, %{{.*}} {block = 32 : i64} : tensor<4x64xf8E4M3FN>, tensor<4x2xf32> to tensor<4x64xf32>
  %z = nn.dequantize %q8, %s8 {block = 32} : tensor<4x64xf8E4M3FN>, tensor<4x2xf32> to tensor<4x64xf32>
  // CHECK: nn.quantize %{{.*}} {block = 64 : i64} : tensor<4x64xbf16> to tensor<4x64xf8E5M2>, tensor<4x1xf32>
  %q5, %s5 = nn.quantize %h {block = 64} : tensor<4x64xbf16> to tensor<4x64xf8E5M2>, tensor<4x1xf32>
  %w = nn.dequantize %q5, %s5 {block = 64} : tensor<4x64xf8E5M2>, tensor<4x1xf32> to tensor<4x64xbf16>
  return %y, %z, %w : tensor<2x300xf32>, tensor<4x64xf32>, tensor<4x64xbf16>
}
