// What each step input feeds decides how token data fills it: the ids of
// an nn.embedding are the tokens, the targets of an nn.cross_entropy or the
// ids of an nn.one_hot (the JAX importer's take_along_axis) the targets.
// The uses are found through the reshapes that only move the ids, and the
// vocabulary bounds both the manifest and tandem-eval's generated ids.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: tandemc %s --emit=verified --stages 1 --microbatches 2 -o %t/verified.mlir
// RUN: env TANDEM_CPU_CACHE=%t/cache tandemc lower %t/verified.mlir -o %t/out
// RUN: FileCheck %s --input-file=%t/out/rank0.json
// RUN: tandem-eval %s --save-inputs %t/inputs.safetensors
// RUN: %python -c "import json, struct, sys; raw = open(sys.argv[1], 'rb').read(); n = struct.unpack('<Q', raw[:8])[0]; head = json.loads(raw[8:8 + n]); ids = {k: struct.unpack('<8i', raw[8 + n + v['data_offsets'][0]:8 + n + v['data_offsets'][1]]) for k, v in head.items() if k != '__metadata__'}; print('tokens below', max(ids['input.0']) + 1 <= 16, 'targets below', max(ids['input.1']) + 1 <= 12)" %t/inputs.safetensors | FileCheck %s --check-prefix=EVAL

// CHECK:      "inputs": [
// CHECK-NEXT:   {"index":0,"dtype":"i32",{{.*}}"role":"tokens","vocabulary":16,
// CHECK-NEXT:   {"index":1,"dtype":"i32",{{.*}}"role":"targets","vocabulary":12,
// EVAL: tokens below True targets below True

module {
  nn.parameter @embed : tensor<16x8xf32> = normal(1.0)
  nn.parameter @head : tensor<8x12xf32> = normal(1.0)
  func.func @forward(%tokens: tensor<2x4xi32>, %targets: tensor<2x4xi32>) -> tensor<f32> {
    %t = nn.reshape %tokens : tensor<2x4xi32> to tensor<2x4x1xi32>
    %ids = nn.reshape %t : tensor<2x4x1xi32> to tensor<2x4xi32>
    %table = nn.param @embed : tensor<16x8xf32>
    %x = nn.embedding %table, %ids : tensor<16x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
    %w = nn.param @head : tensor<8x12xf32>
    %logits = nn.matmul %x, %w : tensor<2x4x8xf32>, tensor<8x12xf32> -> tensor<2x4x12xf32>
    %logp = nn.log_softmax %logits {axis = 2 : i64} : tensor<2x4x12xf32>
    %y = nn.reshape %targets : tensor<2x4xi32> to tensor<8xi32>
    %y2 = nn.reshape %y : tensor<8xi32> to tensor<2x4xi32>
    %hot = nn.one_hot %y2 {classes = 12 : i64} : tensor<2x4xi32> -> tensor<2x4x12xf32>
    %picked = nn.mul %hot, %logp : tensor<2x4x12xf32>, tensor<2x4x12xf32> -> tensor<2x4x12xf32>
    %sum = nn.reduce_sum %picked [0, 1, 2] : tensor<2x4x12xf32> -> tensor<f32>
    %loss = nn.neg %sum : tensor<f32>
    return %loss : tensor<f32>
  }
}
