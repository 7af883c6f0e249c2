// RUN: tandem-opt %s -split-input-file -verify-diagnostics

// Diagnostics of the axis ops (softmax, log_softmax), the normalizations
// (layer_norm, rms_norm), embedding, attention and cross_entropy.
//
// layer_norm and rms_norm do not print their result type, so their custom
// form infers it while parsing: a bad operand is a parse error, reported
// once. The generic form reports it at verification, followed by "failed to
// infer returned types".

func.func @softmax_axis_too_large(%x: tensor<4x10xf32>) {
  // expected-error@+1 {{'nn.softmax' op axis 2 is out of range for rank 2 (expected 0 <= axis < 2)}}
  %0 = nn.softmax %x {axis = 2 : i64} : tensor<4x10xf32>
  return
}

// -----

func.func @softmax_axis_negative(%x: tensor<4x10xf32>) {
  // expected-error@+1 {{'nn.softmax' op axis -1 is out of range for rank 2 (expected 0 <= axis < 2)}}
  %0 = nn.softmax %x {axis = -1 : i64} : tensor<4x10xf32>
  return
}

// -----

func.func @softmax_rank0(%x: tensor<f32>) {
  // expected-error@+1 {{'nn.softmax' op axis 0 is out of range for rank 0 (expected 0 <= axis < 0)}}
  %0 = nn.softmax %x {axis = 0 : i64} : tensor<f32>
  return
}

// -----

func.func @log_softmax_axis(%x: tensor<2x3x4xbf16>) {
  // expected-error@+1 {{'nn.log_softmax' op axis 3 is out of range for rank 3 (expected 0 <= axis < 3)}}
  %0 = nn.log_softmax %x {axis = 3 : i64} : tensor<2x3x4xbf16>
  return
}

// -----

func.func @softmax_missing_axis(%x: tensor<4x10xf32>) {
  // expected-error@+1 {{'nn.softmax' op requires attribute 'axis'}}
  %0 = nn.softmax %x : tensor<4x10xf32>
  return
}

// -----

func.func @softmax_axis_i32(%x: tensor<4x10xf32>) {
  // expected-error@+1 {{'nn.log_softmax' op attribute 'axis' failed to satisfy constraint: 64-bit signless integer attribute}}
  %0 = nn.log_softmax %x {axis = 1 : i32} : tensor<4x10xf32>
  return
}

// -----

func.func @layer_norm_rank0(%x: tensor<f32>, %w: tensor<1xf32>) {
  // expected-error@+1 {{'nn.layer_norm' op expected an input of rank >= 1, found a rank-0 tensor}}
  %0 = nn.layer_norm %x, %w, %w {epsilon = 1.0e-05 : f64} : tensor<f32>, tensor<1xf32>, tensor<1xf32>
  return
}

// -----

func.func @layer_norm_dynamic(%x: tensor<?x32xf32>, %w: tensor<32xf32>) {
  // expected-error@+1 {{'nn.layer_norm' op expected input to be a statically shaped tensor, found 'tensor<?x32xf32>'}}
  %0 = nn.layer_norm %x, %w, %w {epsilon = 1.0e-05 : f64} : tensor<?x32xf32>, tensor<32xf32>, tensor<32xf32>
  return
}

// -----

func.func @layer_norm_weight_dynamic(%x: tensor<4x32xf32>, %w: tensor<?xf32>, %b: tensor<32xf32>) {
  // expected-error@+1 {{'nn.layer_norm' op expected weight to be a statically shaped tensor, found 'tensor<?xf32>'}}
  %0 = nn.layer_norm %x, %w, %b {epsilon = 1.0e-05 : f64} : tensor<4x32xf32>, tensor<?xf32>, tensor<32xf32>
  return
}

// -----

func.func @layer_norm_weight_shape(%x: tensor<4x32xf32>, %w: tensor<16xf32>, %b: tensor<32xf32>) {
  // expected-error@+1 {{'nn.layer_norm' op expected weight of shape [32] (the input's last dimension), found [16]}}
  %0 = nn.layer_norm %x, %w, %b {epsilon = 1.0e-05 : f64} : tensor<4x32xf32>, tensor<16xf32>, tensor<32xf32>
  return
}

// -----

func.func @layer_norm_weight_rank(%x: tensor<4x32xf32>, %w: tensor<1x32xf32>, %b: tensor<32xf32>) {
  // expected-error@+1 {{'nn.layer_norm' op expected weight of shape [32] (the input's last dimension), found [1x32]}}
  %0 = nn.layer_norm %x, %w, %b {epsilon = 1.0e-05 : f64} : tensor<4x32xf32>, tensor<1x32xf32>, tensor<32xf32>
  return
}

// -----

func.func @layer_norm_weight_element_type(%x: tensor<4x32xbf16>, %w: tensor<32xf32>, %b: tensor<32xbf16>) {
  // expected-error@+1 {{'nn.layer_norm' op expected input and weight to have the same element type, found 'bf16' and 'f32'}}
  %0 = nn.layer_norm %x, %w, %b {epsilon = 1.0e-05 : f64} : tensor<4x32xbf16>, tensor<32xf32>, tensor<32xbf16>
  return
}

// -----

func.func @layer_norm_bias_shape(%x: tensor<4x32xf32>, %w: tensor<32xf32>, %b: tensor<4xf32>) {
  // expected-error@+1 {{'nn.layer_norm' op expected bias of shape [32] (the input's last dimension), found [4]}}
  %0 = nn.layer_norm %x, %w, %b {epsilon = 1.0e-05 : f64} : tensor<4x32xf32>, tensor<32xf32>, tensor<4xf32>
  return
}

// -----

func.func @layer_norm_bias_element_type(%x: tensor<4x32xf32>, %w: tensor<32xf32>, %b: tensor<32xf16>) {
  // expected-error@+1 {{'nn.layer_norm' op expected input and bias to have the same element type, found 'f32' and 'f16'}}
  %0 = nn.layer_norm %x, %w, %b {epsilon = 1.0e-05 : f64} : tensor<4x32xf32>, tensor<32xf32>, tensor<32xf16>
  return
}

// -----

// The generic form verifies the op after parsing it: the same message, then
// the generic inference failure.
func.func @layer_norm_generic_bias_shape(%x: tensor<4x32xf32>, %w: tensor<32xf32>, %b: tensor<4xf32>) {
  // expected-error@+2 {{'nn.layer_norm' op expected bias of shape [32] (the input's last dimension), found [4]}}
  // expected-error@+1 {{'nn.layer_norm' op failed to infer returned types}}
  %0 = "nn.layer_norm"(%x, %w, %b) <{epsilon = 1.0e-05 : f64}> : (tensor<4x32xf32>, tensor<32xf32>, tensor<4xf32>) -> tensor<4x32xf32>
  return
}

// -----

func.func @layer_norm_generic_wrong_result(%x: tensor<4x32xf32>, %w: tensor<32xf32>) {
  // expected-error@+2 {{'nn.layer_norm' op inferred type(s) 'tensor<4x32xf32>' are incompatible with return type(s) of operation 'tensor<4x32xf16>'}}
  // expected-error@+1 {{'nn.layer_norm' op failed to infer returned types}}
  %0 = "nn.layer_norm"(%x, %w, %w) <{epsilon = 1.0e-05 : f64}> : (tensor<4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<4x32xf16>
  return
}

// -----

func.func @layer_norm_epsilon_zero(%x: tensor<4x32xf32>, %w: tensor<32xf32>) {
  // expected-error@+1 {{'nn.layer_norm' op expected a positive finite epsilon, found 0.000000e+00}}
  %0 = nn.layer_norm %x, %w, %w {epsilon = 0.0 : f64} : tensor<4x32xf32>, tensor<32xf32>, tensor<32xf32>
  return
}

// -----

func.func @layer_norm_epsilon_negative(%x: tensor<4x32xf32>, %w: tensor<32xf32>) {
  // expected-error@+1 {{'nn.layer_norm' op expected a positive finite epsilon, found -1.000000e-05}}
  %0 = nn.layer_norm %x, %w, %w {epsilon = -1.0e-05 : f64} : tensor<4x32xf32>, tensor<32xf32>, tensor<32xf32>
  return
}

// -----

func.func @layer_norm_epsilon_inf(%x: tensor<4x32xf32>, %w: tensor<32xf32>) {
  // expected-error@+1 {{'nn.layer_norm' op expected a positive finite epsilon, found INF}}
  %0 = nn.layer_norm %x, %w, %w {epsilon = 0x7FF0000000000000 : f64} : tensor<4x32xf32>, tensor<32xf32>, tensor<32xf32>
  return
}

// -----

func.func @layer_norm_missing_epsilon(%x: tensor<4x32xf32>, %w: tensor<32xf32>) {
  // expected-error@+1 {{'nn.layer_norm' op requires attribute 'epsilon'}}
  %0 = nn.layer_norm %x, %w, %w : tensor<4x32xf32>, tensor<32xf32>, tensor<32xf32>
  return
}

// -----

func.func @layer_norm_epsilon_f32(%x: tensor<4x32xf32>, %w: tensor<32xf32>) {
  // expected-error@+1 {{'nn.layer_norm' op attribute 'epsilon' failed to satisfy constraint: 64-bit float attribute}}
  %0 = nn.layer_norm %x, %w, %w {epsilon = 1.0e-05 : f32} : tensor<4x32xf32>, tensor<32xf32>, tensor<32xf32>
  return
}

// -----

func.func @rms_norm_rank0(%x: tensor<f16>, %w: tensor<1xf16>) {
  // expected-error@+1 {{'nn.rms_norm' op expected an input of rank >= 1, found a rank-0 tensor}}
  %0 = nn.rms_norm %x, %w {epsilon = 1.0e-06 : f64} : tensor<f16>, tensor<1xf16>
  return
}

// -----

func.func @rms_norm_weight_shape(%x: tensor<8x32xf32>, %w: tensor<8xf32>) {
  // expected-error@+1 {{'nn.rms_norm' op expected weight of shape [32] (the input's last dimension), found [8]}}
  %0 = nn.rms_norm %x, %w {epsilon = 1.0e-06 : f64} : tensor<8x32xf32>, tensor<8xf32>
  return
}

// -----

func.func @rms_norm_weight_element_type(%x: tensor<8x32xf8E4M3FN>, %w: tensor<32xf8E5M2>) {
  // expected-error@+1 {{'nn.rms_norm' op expected input and weight to have the same element type, found 'f8E4M3FN' and 'f8E5M2'}}
  %0 = nn.rms_norm %x, %w {epsilon = 1.0e-06 : f64} : tensor<8x32xf8E4M3FN>, tensor<32xf8E5M2>
  return
}

// -----

func.func @rms_norm_epsilon(%x: tensor<8x32xf32>, %w: tensor<32xf32>) {
  // expected-error@+1 {{'nn.rms_norm' op expected a positive finite epsilon, found -1.000000e+00}}
  %0 = nn.rms_norm %x, %w {epsilon = -1.0 : f64} : tensor<8x32xf32>, tensor<32xf32>
  return
}

// -----

func.func @rms_norm_generic_weight_shape(%x: tensor<8x32xf32>, %w: tensor<8xf32>) {
  // expected-error@+2 {{'nn.rms_norm' op expected weight of shape [32] (the input's last dimension), found [8]}}
  // expected-error@+1 {{'nn.rms_norm' op failed to infer returned types}}
  %0 = "nn.rms_norm"(%x, %w) <{epsilon = 1.0e-06 : f64}> : (tensor<8x32xf32>, tensor<8xf32>) -> tensor<8x32xf32>
  return
}

// -----

func.func @rms_norm_integer(%x: tensor<8x32xi32>, %w: tensor<32xi32>) {
  // expected-error@+1 {{'nn.rms_norm' op operand #0 must be statically shaped tensor of 64-bit float or 32-bit float or 16-bit float or bfloat16 type or f8E4M3FN type or f8E5M2 type values, but got 'tensor<8x32xi32>'}}
  %0 = "nn.rms_norm"(%x, %w) <{epsilon = 1.0e-06 : f64}> : (tensor<8x32xi32>, tensor<32xi32>) -> tensor<8x32xi32>
  return
}

// -----

func.func @embedding_table_rank(%t: tensor<256xf32>, %ids: tensor<8xi32>) {
  // expected-error@+2 {{'nn.embedding' op expected a 2-D table (vocabulary x dimension), found shape [256]}}
  // expected-error@+1 {{'nn.embedding' op failed to infer returned types}}
  %0 = nn.embedding %t, %ids : tensor<256xf32>, tensor<8xi32> -> tensor<8xf32>
  return
}

// -----

func.func @embedding_table_rank3(%t: tensor<2x256x32xf32>, %ids: tensor<8xi32>) {
  // expected-error@+2 {{'nn.embedding' op expected a 2-D table (vocabulary x dimension), found shape [2x256x32]}}
  // expected-error@+1 {{'nn.embedding' op failed to infer returned types}}
  %0 = nn.embedding %t, %ids : tensor<2x256x32xf32>, tensor<8xi32> -> tensor<8x32xf32>
  return
}

// -----

func.func @embedding_wrong_result(%t: tensor<256x32xf32>, %ids: tensor<8x16xi32>) {
  // expected-error@+2 {{'nn.embedding' op inferred type(s) 'tensor<8x16x32xf32>' are incompatible with return type(s) of operation 'tensor<128x32xf32>'}}
  // expected-error@+1 {{'nn.embedding' op failed to infer returned types}}
  %0 = nn.embedding %t, %ids : tensor<256x32xf32>, tensor<8x16xi32> -> tensor<128x32xf32>
  return
}

// -----

func.func @embedding_rows_zero(%t: tensor<256x32xf32>, %ids: tensor<8xi32>) {
  // expected-error@+2 {{'nn.embedding' op expected rows in [1, 256] (the table's first dimension), found 0}}
  // expected-error@+1 {{'nn.embedding' op failed to infer returned types}}
  %0 = nn.embedding %t, %ids {rows = 0 : i64} : tensor<256x32xf32>, tensor<8xi32> -> tensor<8x32xf32>
  return
}

// -----

func.func @embedding_rows_too_many(%t: tensor<256x32xf32>, %ids: tensor<8xi32>) {
  // expected-error@+2 {{'nn.embedding' op expected rows in [1, 256] (the table's first dimension), found 257}}
  // expected-error@+1 {{'nn.embedding' op failed to infer returned types}}
  %0 = nn.embedding %t, %ids {rows = 257 : i64} : tensor<256x32xf32>, tensor<8xi32> -> tensor<8x32xf32>
  return
}

// -----

// Integer ids are an operand constraint, checked before inference.
func.func @embedding_float_ids(%t: tensor<256x32xf32>, %ids: tensor<8xf32>) {
  // expected-error@+1 {{'nn.embedding' op operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<8xf32>'}}
  %0 = nn.embedding %t, %ids : tensor<256x32xf32>, tensor<8xf32> -> tensor<8x32xf32>
  return
}

// -----

func.func @embedding_integer_table(%t: tensor<256x32xi32>, %ids: tensor<8xi32>) {
  // expected-error@+1 {{'nn.embedding' op operand #0 must be statically shaped tensor of 64-bit float or 32-bit float or 16-bit float or bfloat16 type or f8E4M3FN type or f8E5M2 type values, but got 'tensor<256x32xi32>'}}
  %0 = nn.embedding %t, %ids : tensor<256x32xi32>, tensor<8xi32> -> tensor<8x32xi32>
  return
}

// -----

func.func @attention_key_element_type(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xbf16>) {
  // expected-error@+1 {{'nn.attention' op expected query and key to have the same element type, found 'f32' and 'bf16'}}
  %0 = nn.attention %q, %k, %q {heads = 2 : i64} : tensor<2x4x8xf32>, tensor<2x4x8xbf16>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  return
}

// -----

func.func @attention_value_element_type(%q: tensor<2x4x8xf32>, %v: tensor<2x4x8xf16>) {
  // expected-error@+1 {{'nn.attention' op expected query and value to have the same element type, found 'f32' and 'f16'}}
  %0 = nn.attention %q, %q, %v {heads = 2 : i64} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf16> -> tensor<2x4x8xf32>
  return
}

// -----

func.func @attention_rank(%q: tensor<2x2x4x4xf32>, %k: tensor<2x4x8xf32>) {
  // expected-error@+1 {{'nn.attention' op expected 3-D query, key and value (batch x sequence x dimension), found shapes [2x2x4x4], [2x4x8] and [2x4x8]}}
  %0 = nn.attention %q, %k, %k {heads = 2 : i64} : tensor<2x2x4x4xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x2x4x4xf32>
  return
}

// -----

func.func @attention_value_rank(%q: tensor<4x8xf32>) {
  // expected-error@+1 {{'nn.attention' op expected 3-D query, key and value (batch x sequence x dimension), found shapes [4x8], [4x8] and [4x8]}}
  %0 = nn.attention %q, %q, %q {heads = 1 : i64} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @attention_batch(%q: tensor<2x4x8xf32>, %k: tensor<3x4x8xf32>) {
  // expected-error@+1 {{'nn.attention' op expected query, key and value to agree on batch, found shapes [2x4x8], [3x4x8] and [3x4x8]}}
  %0 = nn.attention %q, %k, %k {heads = 2 : i64} : tensor<2x4x8xf32>, tensor<3x4x8xf32>, tensor<3x4x8xf32> -> tensor<2x4x8xf32>
  return
}

// -----

func.func @attention_dimension(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x16xf32>) {
  // expected-error@+1 {{'nn.attention' op expected key and value of the same shape, found [2x4x8] and [2x4x16]}}
  %0 = nn.attention %q, %k, %v {heads = 2 : i64} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x16xf32> -> tensor<2x4x8xf32>
  return
}

// -----

func.func @attention_key_value_length(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x5x8xf32>) {
  // expected-error@+1 {{'nn.attention' op expected key and value of the same shape, found [2x6x8] and [2x5x8]}}
  %0 = nn.attention %q, %k, %v {heads = 2 : i64} : tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x5x8xf32> -> tensor<2x4x8xf32>
  return
}

// -----

func.func @attention_heads_not_divisor(%q: tensor<2x4x8xf32>) {
  // expected-error@+1 {{'nn.attention' op expected a head count that divides the dimension 8, found 3}}
  %0 = nn.attention %q, %q, %q {heads = 3 : i64} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  return
}

// -----

func.func @attention_heads_zero(%q: tensor<2x4x8xf32>) {
  // expected-error@+1 {{'nn.attention' op expected a head count that divides the dimension 8, found 0}}
  %0 = nn.attention %q, %q, %q {heads = 0 : i64} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  return
}

// -----

func.func @attention_heads_negative(%q: tensor<2x4x8xf32>) {
  // expected-error@+1 {{'nn.attention' op expected a head count that divides the dimension 8, found -2}}
  %0 = nn.attention %q, %q, %q {heads = -2 : i64} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  return
}

// -----

func.func @attention_key_dimension(%q: tensor<2x4x8xf32>, %k: tensor<2x4x16xf32>) {
  // expected-error@+1 {{'nn.attention' op expected key and value of dimension 8 (2 key and value heads of 4), found 16}}
  %0 = nn.attention %q, %k, %k {heads = 2 : i64} : tensor<2x4x8xf32>, tensor<2x4x16xf32>, tensor<2x4x16xf32> -> tensor<2x4x8xf32>
  return
}

// -----

func.func @attention_kv_heads_not_divisor(%q: tensor<2x4x12xf32>, %k: tensor<2x4x6xf32>) {
  // expected-error@+1 {{'nn.attention' op expected kv_heads to divide the head count 6, found 4}}
  %0 = nn.attention %q, %k, %k {heads = 6 : i64, kv_heads = 4 : i64} : tensor<2x4x12xf32>, tensor<2x4x6xf32>, tensor<2x4x6xf32> -> tensor<2x4x12xf32>
  return
}

// -----

func.func @attention_kv_heads_zero(%q: tensor<2x4x8xf32>) {
  // expected-error@+1 {{'nn.attention' op expected kv_heads to divide the head count 2, found 0}}
  %0 = nn.attention %q, %q, %q {heads = 2 : i64, kv_heads = 0 : i64} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  return
}

// -----

func.func @attention_kv_heads_width(%q: tensor<2x4x8xf32>) {
  // expected-error@+1 {{'nn.attention' op expected key and value of dimension 4 (1 key and value heads of 4), found 8}}
  %0 = nn.attention %q, %q, %q {heads = 2 : i64, kv_heads = 1 : i64} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  return
}

// -----

func.func @attention_grad_kv_heads_cotangent(%q: tensor<2x4x8xf32>, %k: tensor<2x4x4xf32>, %lse: tensor<2x2x4xf32>) {
  // expected-error@+2 {{'nn.attention_grad' op expected a cotangent of the query's type 'tensor<2x4x8xf32>', found 'tensor<2x4x4xf32>'}}
  // expected-error@+1 {{'nn.attention_grad' op failed to infer returned types}}
  %0:3 = nn.attention_grad %q, %k, %k, %q, %lse, %k {heads = 2 : i64, kv_heads = 1 : i64} : tensor<2x4x8xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4x8xf32>, tensor<2x2x4xf32>, tensor<2x4x4xf32> -> tensor<2x4x8xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>
  return
}

// -----

func.func @attention_causal_lengths(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>) {
  // expected-error@+1 {{'nn.attention' op causal attention needs query and key of the same sequence length, found 4 and 6}}
  %0 = nn.attention %q, %k, %k {causal, heads = 2 : i64} : tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32> -> tensor<2x4x8xf32>
  return
}

// -----

func.func @attention_scale_zero(%q: tensor<2x4x8xf32>) {
  // expected-error@+1 {{'nn.attention' op expected a positive finite scale, found 0.000000e+00}}
  %0 = nn.attention %q, %q, %q {heads = 2 : i64, scale = 0.0 : f64} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  return
}

// -----

func.func @attention_scale_negative(%q: tensor<2x4x8xf32>) {
  // expected-error@+1 {{'nn.attention' op expected a positive finite scale, found -5.000000e-01}}
  %0 = nn.attention %q, %q, %q {heads = 2 : i64, scale = -0.5 : f64} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  return
}

// -----

func.func @attention_scale_nan(%q: tensor<2x4x8xf32>) {
  // expected-error@+1 {{'nn.attention' op expected a positive finite scale, found nan}}
  %0 = nn.attention %q, %q, %q {heads = 2 : i64, scale = 0x7FF8000000000000 : f64} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  return
}

// -----

func.func @attention_wrong_result(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>) {
  // expected-error@+1 {{'nn.attention' op expected a result of the query's type 'tensor<2x4x8xf32>', found 'tensor<2x6x8xf32>'}}
  %0 = nn.attention %q, %k, %k {heads = 2 : i64} : tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32> -> tensor<2x6x8xf32>
  return
}

// -----

func.func @attention_missing_heads(%q: tensor<2x4x8xf32>) {
  // expected-error@+1 {{'nn.attention' op requires attribute 'heads'}}
  %0 = nn.attention %q, %q, %q {causal} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  return
}

// -----

func.func @cross_entropy_rank0_logits(%l: tensor<f32>, %t: tensor<i32>) {
  // expected-error@+2 {{'nn.cross_entropy' op expected logits of rank >= 1, found a rank-0 tensor}}
  // expected-error@+1 {{'nn.cross_entropy' op failed to infer returned types}}
  %0 = nn.cross_entropy %l, %t : tensor<f32>, tensor<i32> -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_targets_shape(%l: tensor<8x16x256xf32>, %t: tensor<8x256xi32>) {
  // expected-error@+2 {{'nn.cross_entropy' op expected targets of shape [8x16] (the logits without the class dimension), found [8x256]}}
  // expected-error@+1 {{'nn.cross_entropy' op failed to infer returned types}}
  %0 = nn.cross_entropy %l, %t : tensor<8x16x256xf32>, tensor<8x256xi32> -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_targets_rank(%l: tensor<10xf32>, %t: tensor<1xi64>) {
  // expected-error@+2 {{'nn.cross_entropy' op expected targets of shape [] (the logits without the class dimension), found [1]}}
  // expected-error@+1 {{'nn.cross_entropy' op failed to infer returned types}}
  %0 = nn.cross_entropy %l, %t : tensor<10xf32>, tensor<1xi64> -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_result_not_scalar(%l: tensor<4x10xf32>, %t: tensor<4xi32>) {
  // expected-error@+2 {{'nn.cross_entropy' op inferred type(s) 'tensor<f32>' are incompatible with return type(s) of operation 'tensor<4xf32>'}}
  // expected-error@+1 {{'nn.cross_entropy' op failed to infer returned types}}
  %0 = nn.cross_entropy %l, %t : tensor<4x10xf32>, tensor<4xi32> -> tensor<4xf32>
  return
}

// -----

func.func @cross_entropy_float_targets(%l: tensor<4x10xf32>, %t: tensor<4xf32>) {
  // expected-error@+1 {{'nn.cross_entropy' op operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4xf32>'}}
  %0 = nn.cross_entropy %l, %t : tensor<4x10xf32>, tensor<4xf32> -> tensor<f32>
  return
}

// -----

func.func @attention_grad_cotangent(%q: tensor<2x4x8xf32>, %dy: tensor<2x4x4xf32>, %lse: tensor<2x2x4xf32>) {
  // expected-error@+2 {{'nn.attention_grad' op expected a cotangent of the query's type 'tensor<2x4x8xf32>', found 'tensor<2x4x4xf32>'}}
  // expected-error@+1 {{'nn.attention_grad' op failed to infer returned types}}
  %dq, %dk, %dv = nn.attention_grad %q, %q, %q, %q, %lse, %dy {heads = 2 : i64} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x2x4xf32>, tensor<2x4x4xf32> -> tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
  return
}

// -----

func.func @attention_grad_heads(%q: tensor<2x4x8xf32>, %lse: tensor<2x3x4xf32>) {
  // expected-error@+2 {{'nn.attention_grad' op expected a head count that divides the dimension 8, found 3}}
  // expected-error@+1 {{'nn.attention_grad' op failed to infer returned types}}
  %dq, %dk, %dv = nn.attention_grad %q, %q, %q, %q, %lse, %q {heads = 3 : i64} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x3x4xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
  return
}

// -----

func.func @attention_grad_output(%q: tensor<2x4x8xf32>, %y: tensor<2x4x4xf32>, %lse: tensor<2x2x4xf32>) {
  // expected-error@+2 {{'nn.attention_grad' op expected an output of the query's type 'tensor<2x4x8xf32>', found 'tensor<2x4x4xf32>'}}
  // expected-error@+1 {{'nn.attention_grad' op failed to infer returned types}}
  %dq, %dk, %dv = nn.attention_grad %q, %q, %q, %y, %lse, %q {heads = 2 : i64} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x4xf32>, tensor<2x2x4xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
  return
}

// -----

func.func @attention_grad_lse_heads(%q: tensor<2x4x8xf32>, %lse: tensor<2x4x4xf32>) {
  // expected-error@+2 {{'nn.attention_grad' op expected a log-sum-exp operand of type 'tensor<2x2x4xf32>' (batch x heads x query length, f32), found 'tensor<2x4x4xf32>'}}
  // expected-error@+1 {{'nn.attention_grad' op failed to infer returned types}}
  %dq, %dk, %dv = nn.attention_grad %q, %q, %q, %q, %lse, %q {heads = 2 : i64} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x4xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
  return
}

// -----

func.func @attention_grad_lse_type(%q: tensor<2x4x8xbf16>, %lse: tensor<2x2x4xbf16>) {
  // expected-error@+2 {{'nn.attention_grad' op expected a log-sum-exp operand of type 'tensor<2x2x4xf32>' (batch x heads x query length, f32), found 'tensor<2x2x4xbf16>'}}
  // expected-error@+1 {{'nn.attention_grad' op failed to infer returned types}}
  %dq, %dk, %dv = nn.attention_grad %q, %q, %q, %q, %lse, %q {heads = 2 : i64} : tensor<2x4x8xbf16>, tensor<2x4x8xbf16>, tensor<2x4x8xbf16>, tensor<2x4x8xbf16>, tensor<2x2x4xbf16>, tensor<2x4x8xbf16> -> tensor<2x4x8xbf16>, tensor<2x4x8xbf16>, tensor<2x4x8xbf16>
  return
}

// -----

func.func @attention_lse(%q: tensor<2x4x8xbf16>) {
  // expected-error@+1 {{'nn.attention' op expected a log-sum-exp result of type 'tensor<2x2x4xf32>' (batch x heads x query length, f32), found 'tensor<2x4x2xf32>'}}
  %y, %lse = nn.attention %q, %q, %q {heads = 2 : i64} : tensor<2x4x8xbf16>, tensor<2x4x8xbf16>, tensor<2x4x8xbf16> -> tensor<2x4x8xbf16>, tensor<2x4x2xf32>
  return
}

// -----

func.func @attention_result(%q: tensor<2x4x8xf32>) {
  // expected-error@+1 {{'nn.attention' op expected a result of the query's type 'tensor<2x4x8xf32>', found 'tensor<2x4x8xbf16>'}}
  %y = nn.attention %q, %q, %q {heads = 2 : i64} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xbf16>
  return
}

// -----

func.func @layer_norm_grad_cotangent(%x: tensor<4x32xf32>, %w: tensor<32xf32>, %dy: tensor<4x16xf32>) {
  // expected-error@+1 {{'nn.layer_norm_grad' op expected a cotangent of the input's type 'tensor<4x32xf32>', found 'tensor<4x16xf32>'}}
  %0:2 = nn.layer_norm_grad %x, %w, %dy {epsilon = 1.0e-05 : f64} : tensor<4x32xf32>, tensor<32xf32>, tensor<4x16xf32>
  return
}

// -----

func.func @layer_norm_grad_weight(%x: tensor<4x32xf32>, %w: tensor<16xf32>, %dy: tensor<4x32xf32>) {
  // expected-error@+1 {{'nn.layer_norm_grad' op expected weight of shape [32] (the input's last dimension), found [16]}}
  %0:2 = nn.layer_norm_grad %x, %w, %dy {epsilon = 1.0e-05 : f64} : tensor<4x32xf32>, tensor<16xf32>, tensor<4x32xf32>
  return
}

// -----

func.func @rms_norm_grad_rank0(%x: tensor<f32>, %w: tensor<1xf32>) {
  // expected-error@+1 {{'nn.rms_norm_grad' op expected an input of rank >= 1, found a rank-0 tensor}}
  %0:2 = nn.rms_norm_grad %x, %w, %x {epsilon = 1.0e-05 : f64} : tensor<f32>, tensor<1xf32>, tensor<f32>
  return
}

// -----

func.func @rms_norm_grad_epsilon(%x: tensor<4x32xf32>, %w: tensor<32xf32>) {
  // expected-error@+1 {{'nn.rms_norm_grad' op expected a positive finite epsilon, found 0.000000e+00}}
  %0:2 = nn.rms_norm_grad %x, %w, %x {epsilon = 0.0 : f64} : tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xf32>
  return
}

// -----

func.func @layer_norm_grad_epsilon(%x: tensor<4x32xf32>, %w: tensor<32xf32>) {
  // expected-error@+1 {{'nn.layer_norm_grad' op expected a positive finite epsilon, found -1.000000e+00}}
  %0:2 = nn.layer_norm_grad %x, %w, %x {epsilon = -1.0 : f64} : tensor<4x32xf32>, tensor<32xf32>, tensor<4x32xf32>
  return
}

// -----

func.func @cross_entropy_classes_zero(%l: tensor<8x384xf32>, %t: tensor<8xi32>) {
  // expected-error@+2 {{'nn.cross_entropy' op expected classes in [1, 384] (the logits' last dimension), found 0}}
  // expected-error@+1 {{'nn.cross_entropy' op failed to infer returned types}}
  %0 = nn.cross_entropy %l, %t {classes = 0 : i64} : tensor<8x384xf32>, tensor<8xi32> -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_classes_too_many(%l: tensor<8x384xf32>, %t: tensor<8xi32>) {
  // expected-error@+2 {{'nn.cross_entropy' op expected classes in [1, 384] (the logits' last dimension), found 385}}
  // expected-error@+1 {{'nn.cross_entropy' op failed to infer returned types}}
  %0 = nn.cross_entropy %l, %t {classes = 385 : i64} : tensor<8x384xf32>, tensor<8xi32> -> tensor<f32>
  return
}
