// RUN: tandem-opt %s | tandem-opt | FileCheck %s
// RUN: tandem-opt %s --mlir-print-op-generic | tandem-opt | FileCheck %s
// Every example in the nn dialect's ODS descriptions (NNOps.td, NNAttrs.td),
// pasted verbatim, so the documentation stays valid IR. Keep in sync when a
// description changes.

// nn.parameter
// CHECK-LABEL: nn.parameter @wte : tensor<256x32xf32> = normal(2.000000e-02)
nn.parameter @wte : tensor<256x32xf32> = normal(0.02)
// CHECK-LABEL: nn.parameter @ln_f.bias : tensor<32xf32> = zeros
nn.parameter @ln_f.bias : tensor<32xf32> = zeros

// #nn.init
// CHECK-LABEL: func.func @doc_init(
// CHECK-SAME: ) attributes {a = #nn.init<normal(2.000000e-02)>, b = #nn.init<uniform(-1.000000e-01, 1.000000e-01)>, c = #nn.init<zeros>}
// CHECK-NEXT: return
func.func @doc_init() attributes {a = #nn.init<normal(0.02)>, b = #nn.init<uniform(-0.1, 0.1)>, c = #nn.init<zeros>} {
  return
}

// nn.param
// CHECK-LABEL: func.func @doc_param(
// CHECK-SAME: ) -> tensor<256x32xf32>
// CHECK-NEXT: %[[W:.*]] = nn.param @wte : tensor<256x32xf32>
// CHECK-NEXT: return %[[W]] : tensor<256x32xf32>
func.func @doc_param() -> tensor<256x32xf32> {
  %w = nn.param @wte : tensor<256x32xf32>
  return %w : tensor<256x32xf32>
}

// nn.constant
// CHECK-LABEL: func.func @doc_constant(
// CHECK-SAME: ) -> tensor<4xf32>
// CHECK-NEXT: %[[C:.*]] = nn.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK-NEXT: return %[[C]] : tensor<4xf32>
func.func @doc_constant() -> tensor<4xf32> {
  %c = nn.constant dense<1.0> : tensor<4xf32>
  return %c : tensor<4xf32>
}

// nn.cast
// CHECK-LABEL: func.func @doc_cast(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32>) -> (tensor<4x8xbf16>, tensor<4x8xf8E4M3FN>)
// CHECK-NEXT: %[[H:.*]] = nn.cast %[[X]] : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK-NEXT: %[[Q:.*]] = nn.cast %[[X]] {saturate = true} : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
// CHECK-NEXT: return %[[H]], %[[Q]] : tensor<4x8xbf16>, tensor<4x8xf8E4M3FN>
func.func @doc_cast(%x: tensor<4x8xf32>) -> (tensor<4x8xbf16>, tensor<4x8xf8E4M3FN>) {
  %h = nn.cast %x : tensor<4x8xf32> to tensor<4x8xbf16>
  %q = nn.cast %x {saturate = true} : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
  return %h, %q : tensor<4x8xbf16>, tensor<4x8xf8E4M3FN>
}

// nn.pow
// CHECK-LABEL: func.func @doc_pow(
// CHECK-SAME: %[[X:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[Y:.*]] = nn.pow %[[X]], 3.000000e+00 : tensor<4xf32>
// CHECK-NEXT: return %[[Y]] : tensor<4xf32>
func.func @doc_pow(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = nn.pow %x, 3.0 : tensor<4xf32>
  return %y : tensor<4xf32>
}

// nn.add, nn.sub, nn.mul, nn.div (one shared example)
// CHECK-LABEL: func.func @doc_binary(
// CHECK-SAME: %[[X:.*]]: tensor<8x16x32xf32>, %[[BIAS:.*]]: tensor<32xf32>) -> tensor<8x16x32xf32>
// CHECK-NEXT: %[[Y:.*]] = nn.add %[[X]], %[[BIAS]] : tensor<8x16x32xf32>, tensor<32xf32> -> tensor<8x16x32xf32>
// CHECK-NEXT: return %[[Y]] : tensor<8x16x32xf32>
func.func @doc_binary(%x: tensor<8x16x32xf32>, %bias: tensor<32xf32>) -> tensor<8x16x32xf32> {
  %y = nn.add %x, %bias : tensor<8x16x32xf32>, tensor<32xf32> -> tensor<8x16x32xf32>
  return %y : tensor<8x16x32xf32>
}

// nn.matmul
// CHECK-LABEL: func.func @doc_matmul(
// CHECK-SAME: %[[X:.*]]: tensor<8x16x32xf32>, %[[W:.*]]: tensor<32x96xf32>, %[[Q:.*]]: tensor<4x16x8xf32>, %[[K:.*]]: tensor<4x16x8xf32>) -> (tensor<8x16x96xf32>, tensor<4x16x16xf32>)
// CHECK-NEXT: %[[Y:.*]] = nn.matmul %[[X]], %[[W]] : tensor<8x16x32xf32>, tensor<32x96xf32> -> tensor<8x16x96xf32>
// CHECK-NEXT: %[[S:.*]] = nn.matmul %[[Q]], %[[K]] {transpose_rhs} : tensor<4x16x8xf32>, tensor<4x16x8xf32> -> tensor<4x16x16xf32>
// CHECK-NEXT: return %[[Y]], %[[S]] : tensor<8x16x96xf32>, tensor<4x16x16xf32>
func.func @doc_matmul(%x: tensor<8x16x32xf32>, %w: tensor<32x96xf32>, %q: tensor<4x16x8xf32>, %k: tensor<4x16x8xf32>) -> (tensor<8x16x96xf32>, tensor<4x16x16xf32>) {
  %y = nn.matmul %x, %w : tensor<8x16x32xf32>, tensor<32x96xf32> -> tensor<8x16x96xf32>
  %s = nn.matmul %q, %k {transpose_rhs} : tensor<4x16x8xf32>, tensor<4x16x8xf32> -> tensor<4x16x16xf32>
  return %y, %s : tensor<8x16x96xf32>, tensor<4x16x16xf32>
}

// nn.softmax, nn.log_softmax (one example per op from the shared class)
// CHECK-LABEL: func.func @doc_axis_ops(
// CHECK-SAME: %[[X:.*]]: tensor<4x10xf32>) -> (tensor<4x10xf32>, tensor<4x10xf32>)
// CHECK-NEXT: %[[P:.*]] = nn.softmax %[[X]] {axis = 1 : i64} : tensor<4x10xf32>
// CHECK-NEXT: %[[L:.*]] = nn.log_softmax %[[X]] {axis = 1 : i64} : tensor<4x10xf32>
// CHECK-NEXT: return %[[P]], %[[L]] : tensor<4x10xf32>, tensor<4x10xf32>
func.func @doc_axis_ops(%x: tensor<4x10xf32>) -> (tensor<4x10xf32>, tensor<4x10xf32>) {
  %p = nn.softmax %x {axis = 1 : i64} : tensor<4x10xf32>
  %l = nn.log_softmax %x {axis = 1 : i64} : tensor<4x10xf32>
  return %p, %l : tensor<4x10xf32>, tensor<4x10xf32>
}

// nn.layer_norm
// CHECK-LABEL: func.func @doc_layer_norm(
// CHECK-SAME: %[[X:.*]]: tensor<8x16x32xf32>, %[[W:.*]]: tensor<32xf32>, %[[B:.*]]: tensor<32xf32>) -> tensor<8x16x32xf32>
// CHECK-NEXT: %[[Y:.*]] = nn.layer_norm %[[X]], %[[W]], %[[B]] {epsilon = 1.000000e-05 : f64} : tensor<8x16x32xf32>, tensor<32xf32>, tensor<32xf32>
// CHECK-NEXT: return %[[Y]] : tensor<8x16x32xf32>
func.func @doc_layer_norm(%x: tensor<8x16x32xf32>, %w: tensor<32xf32>, %b: tensor<32xf32>) -> tensor<8x16x32xf32> {
  %y = nn.layer_norm %x, %w, %b {epsilon = 1.0e-05 : f64} : tensor<8x16x32xf32>, tensor<32xf32>, tensor<32xf32>
  return %y : tensor<8x16x32xf32>
}

// nn.rms_norm
// CHECK-LABEL: func.func @doc_rms_norm(
// CHECK-SAME: %[[X:.*]]: tensor<8x32xf32>, %[[W:.*]]: tensor<32xf32>) -> tensor<8x32xf32>
// CHECK-NEXT: %[[Y:.*]] = nn.rms_norm %[[X]], %[[W]] {epsilon = 9.9999999999999995E-7 : f64} : tensor<8x32xf32>, tensor<32xf32>
// CHECK-NEXT: return %[[Y]] : tensor<8x32xf32>
func.func @doc_rms_norm(%x: tensor<8x32xf32>, %w: tensor<32xf32>) -> tensor<8x32xf32> {
  %y = nn.rms_norm %x, %w {epsilon = 1.0e-06 : f64} : tensor<8x32xf32>, tensor<32xf32>
  return %y : tensor<8x32xf32>
}

// nn.embedding
// CHECK-LABEL: func.func @doc_embedding(
// CHECK-SAME: %[[WTE:.*]]: tensor<256x32xf32>, %[[TOKENS:.*]]: tensor<8x16xi32>) -> tensor<8x16x32xf32>
// CHECK-NEXT: %[[X:.*]] = nn.embedding %[[WTE]], %[[TOKENS]] : tensor<256x32xf32>, tensor<8x16xi32> -> tensor<8x16x32xf32>
// CHECK-NEXT: return %[[X]] : tensor<8x16x32xf32>
func.func @doc_embedding(%wte: tensor<256x32xf32>, %tokens: tensor<8x16xi32>) -> tensor<8x16x32xf32> {
  %x = nn.embedding %wte, %tokens : tensor<256x32xf32>, tensor<8x16xi32> -> tensor<8x16x32xf32>
  return %x : tensor<8x16x32xf32>
}

// nn.attention
// CHECK-LABEL: func.func @doc_attention(
// CHECK-SAME: %[[Q:.*]]: tensor<8x16x32xf32>, %[[K:.*]]: tensor<8x16x32xf32>, %[[V:.*]]: tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
// CHECK-NEXT: %[[Y:.*]] = nn.attention %[[Q]], %[[K]], %[[V]] {causal, heads = 2 : i64} : tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<8x16x32xf32> -> tensor<8x16x32xf32>
// CHECK-NEXT: return %[[Y]] : tensor<8x16x32xf32>
func.func @doc_attention(%q: tensor<8x16x32xf32>, %k: tensor<8x16x32xf32>, %v: tensor<8x16x32xf32>) -> tensor<8x16x32xf32> {
  %y = nn.attention %q, %k, %v {causal, heads = 2 : i64} : tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<8x16x32xf32> -> tensor<8x16x32xf32>
  return %y : tensor<8x16x32xf32>
}

// nn.cross_entropy
// CHECK-LABEL: func.func @doc_cross_entropy(
// CHECK-SAME: %[[LOGITS:.*]]: tensor<8x16x256xf32>, %[[TARGETS:.*]]: tensor<8x16xi32>) -> tensor<f32>
// CHECK-NEXT: %[[LOSS:.*]] = nn.cross_entropy %[[LOGITS]], %[[TARGETS]] : tensor<8x16x256xf32>, tensor<8x16xi32> -> tensor<f32>
// CHECK-NEXT: return %[[LOSS]] : tensor<f32>
func.func @doc_cross_entropy(%logits: tensor<8x16x256xf32>, %targets: tensor<8x16xi32>) -> tensor<f32> {
  %loss = nn.cross_entropy %logits, %targets : tensor<8x16x256xf32>, tensor<8x16xi32> -> tensor<f32>
  return %loss : tensor<f32>
}

// nn.reshape
// CHECK-LABEL: func.func @doc_reshape(
// CHECK-SAME: %[[X:.*]]: tensor<8x16x32xf32>) -> tensor<128x32xf32>
// CHECK-NEXT: %[[Y:.*]] = nn.reshape %[[X]] : tensor<8x16x32xf32> to tensor<128x32xf32>
// CHECK-NEXT: return %[[Y]] : tensor<128x32xf32>
func.func @doc_reshape(%x: tensor<8x16x32xf32>) -> tensor<128x32xf32> {
  %y = nn.reshape %x : tensor<8x16x32xf32> to tensor<128x32xf32>
  return %y : tensor<128x32xf32>
}

// nn.transpose
// CHECK-LABEL: func.func @doc_transpose(
// CHECK-SAME: %[[X:.*]]: tensor<8x16x32xf32>) -> tensor<8x32x16xf32>
// CHECK-NEXT: %[[Y:.*]] = nn.transpose %[[X]], [0, 2, 1] : tensor<8x16x32xf32> -> tensor<8x32x16xf32>
// CHECK-NEXT: return %[[Y]] : tensor<8x32x16xf32>
func.func @doc_transpose(%x: tensor<8x16x32xf32>) -> tensor<8x32x16xf32> {
  %y = nn.transpose %x, [0, 2, 1] : tensor<8x16x32xf32> -> tensor<8x32x16xf32>
  return %y : tensor<8x32x16xf32>
}

// nn.broadcast_to
// CHECK-LABEL: func.func @doc_broadcast_to(
// CHECK-SAME: %[[B:.*]]: tensor<32xf32>) -> tensor<8x32xf32>
// CHECK-NEXT: %[[Y:.*]] = nn.broadcast_to %[[B]] : tensor<32xf32> to tensor<8x32xf32>
// CHECK-NEXT: return %[[Y]] : tensor<8x32xf32>
func.func @doc_broadcast_to(%b: tensor<32xf32>) -> tensor<8x32xf32> {
  %y = nn.broadcast_to %b : tensor<32xf32> to tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}

// nn.concat
// CHECK-LABEL: func.func @doc_concat(
// CHECK-SAME: %[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<4x2xf32>) -> tensor<4x10xf32>
// CHECK-NEXT: %[[Y:.*]] = nn.concat %[[A]], %[[B]] {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x2xf32>) -> tensor<4x10xf32>
// CHECK-NEXT: return %[[Y]] : tensor<4x10xf32>
func.func @doc_concat(%a: tensor<4x8xf32>, %b: tensor<4x2xf32>) -> tensor<4x10xf32> {
  %y = nn.concat %a, %b {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x2xf32>) -> tensor<4x10xf32>
  return %y : tensor<4x10xf32>
}

// nn.slice
// CHECK-LABEL: func.func @doc_slice(
// CHECK-SAME: %[[X:.*]]: tensor<4x32xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[Y:.*]] = nn.slice %[[X]] [0, 8] to [4, 16] step [1, 1] : tensor<4x32xf32> -> tensor<4x8xf32>
// CHECK-NEXT: return %[[Y]] : tensor<4x8xf32>
func.func @doc_slice(%x: tensor<4x32xf32>) -> tensor<4x8xf32> {
  %y = nn.slice %x [0, 8] to [4, 16] step [1, 1] : tensor<4x32xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// nn.split
// CHECK-LABEL: func.func @doc_split(
// CHECK-SAME: %[[QKV:.*]]: tensor<8x16x96xf32>) -> (tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<8x16x32xf32>)
// CHECK-NEXT: %[[Q:.*]]:3 = nn.split %[[QKV]] {axis = 2 : i64, sizes = array<i64: 32, 32, 32>} : tensor<8x16x96xf32> -> tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<8x16x32xf32>
// CHECK-NEXT: return %[[Q]]#0, %[[Q]]#1, %[[Q]]#2 : tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<8x16x32xf32>
func.func @doc_split(%qkv: tensor<8x16x96xf32>) -> (tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<8x16x32xf32>) {
  %q, %k, %v = nn.split %qkv {axis = 2 : i64, sizes = array<i64: 32, 32, 32>} : tensor<8x16x96xf32> -> tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<8x16x32xf32>
  return %q, %k, %v : tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<8x16x32xf32>
}

// nn.reduce_sum, nn.reduce_mean, nn.reduce_max (one example per op from the
// shared class)
// CHECK-LABEL: func.func @doc_reductions(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32>) -> (tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
// CHECK-NEXT: %[[S:.*]] = nn.reduce_sum %[[X]] [1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT: %[[M:.*]] = nn.reduce_mean %[[X]] [1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT: %[[X2:.*]] = nn.reduce_max %[[X]] [1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT: return %[[S]], %[[M]], %[[X2]] : tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>
func.func @doc_reductions(%x: tensor<4x8xf32>) -> (tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>) {
  %s = nn.reduce_sum %x [1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
  %m = nn.reduce_mean %x [1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
  %x2 = nn.reduce_max %x [1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
  return %s, %m, %x2 : tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>
}

// nn.stage_end
// CHECK-LABEL: func.func @doc_stage_end(
// CHECK-SAME: %[[X:.*]]: tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
// CHECK-NEXT: %[[H:.*]] = nn.stage_end %[[X]] : tensor<8x16x32xf32>
// CHECK-NEXT: return %[[H]] : tensor<8x16x32xf32>
func.func @doc_stage_end(%x: tensor<8x16x32xf32>) -> tensor<8x16x32xf32> {
  %h = nn.stage_end %x : tensor<8x16x32xf32>
  return %h : tensor<8x16x32xf32>
}
