// RUN: tandem-opt %s | tandem-opt | FileCheck %s
// RUN: tandem-opt %s --mlir-print-op-generic | tandem-opt | FileCheck %s
//
// A hand-written 2-stage pipeline of a tiny MLP, loss = sum(y * y) with
// y = relu(x @ w0) @ w1, trained with SGD over 2 microbatches (1F1B):
//
//   stage 0: z = x @ w0, h = relu(z)            (fwd)   dz, dw0       (bwd)
//   stage 1: y = h @ w1, loss = sum(y * y)      (fwd)   dh, dw1       (bwd)
//   each stage: w <- w - 0.1 * sum over microbatches of dw   (optimizer)
//
// Activations travel 0 -> 1 on channel 0, gradients 1 -> 0 on channel 1.
// Rank 1 posts the receive of microbatch 1's activation before its backward
// of microbatch 0, where the activation arrives (as mpmd-lower-transfers
// places it): rank 0 sends it right away instead of waiting for that
// backward, then waits for microbatch 0's gradient. Under rendezvous
// semantics rank 1 must not send that gradient before receiving the
// activation while rank 0 sends the activation first: both ranks would wait
// in a send.

nn.parameter @w0 : tensor<8x16xf32> = normal(0.1)
nn.parameter @w1 : tensor<16x4xf32> = normal(0.1)

// CHECK-LABEL: mpmd.program @mlp stages 2 chunks 1 replicas 1 microbatches 2 {
mpmd.program @mlp stages 2 chunks 1 replicas 1 microbatches 2 {
  // CHECK-NEXT: mpmd.fragment @s0.fwd stage 0 chunk 0 kind fwd (%{{.*}}: tensor<4x8xf32> {mpmd.input = 0 : i64}, %{{.*}}: tensor<8x16xf32> {mpmd.param = @w0}) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  mpmd.fragment @s0.fwd stage 0 chunk 0 kind fwd
      (%x: tensor<4x8xf32> {mpmd.input = 0 : i64},
       %w0: tensor<8x16xf32> {mpmd.param = @w0})
      -> (tensor<4x16xf32>, tensor<4x16xf32>) {
    %z = nn.matmul %x, %w0 : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
    %h = nn.relu %z : tensor<4x16xf32>
    mpmd.yield %h, %z : tensor<4x16xf32>, tensor<4x16xf32>
  }
  // CHECK: mpmd.fragment @s1.fwd stage 1 chunk 0 kind fwd (%{{.*}}: tensor<4x16xf32>, %{{.*}}: tensor<16x4xf32> {mpmd.param = @w1}) -> (tensor<f32>, tensor<4x4xf32>) {
  mpmd.fragment @s1.fwd stage 1 chunk 0 kind fwd
      (%h: tensor<4x16xf32>, %w1: tensor<16x4xf32> {mpmd.param = @w1})
      -> (tensor<f32>, tensor<4x4xf32>) {
    %y = nn.matmul %h, %w1 : tensor<4x16xf32>, tensor<16x4xf32> -> tensor<4x4xf32>
    %yy = nn.mul %y, %y : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    %loss = nn.reduce_sum %yy [0, 1] : tensor<4x4xf32> -> tensor<f32>
    mpmd.yield %loss, %y : tensor<f32>, tensor<4x4xf32>
  }
  // CHECK: mpmd.fragment @s1.bwd stage 1 chunk 0 kind bwd
  mpmd.fragment @s1.bwd stage 1 chunk 0 kind bwd
      (%y: tensor<4x4xf32>, %h: tensor<4x16xf32>,
       %w1: tensor<16x4xf32> {mpmd.param = @w1})
      -> (tensor<4x16xf32>, tensor<16x4xf32>) {
    %dy = nn.add %y, %y : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    %w1t = nn.transpose %w1, [1, 0] : tensor<16x4xf32> -> tensor<4x16xf32>
    %dh = nn.matmul %dy, %w1t : tensor<4x4xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
    %ht = nn.transpose %h, [1, 0] : tensor<4x16xf32> -> tensor<16x4xf32>
    %dw1 = nn.matmul %ht, %dy : tensor<16x4xf32>, tensor<4x4xf32> -> tensor<16x4xf32>
    mpmd.yield %dh, %dw1 : tensor<4x16xf32>, tensor<16x4xf32>
  }
  // CHECK: mpmd.fragment @s0.bwd stage 0 chunk 0 kind bwd
  mpmd.fragment @s0.bwd stage 0 chunk 0 kind bwd
      (%dh: tensor<4x16xf32>, %z: tensor<4x16xf32>,
       %x: tensor<4x8xf32> {mpmd.input = 0 : i64}) -> tensor<8x16xf32> {
    %zero = nn.constant dense<0.0> : tensor<f32>
    %mask = nn.greater_equal %z, %zero : tensor<4x16xf32>, tensor<f32> -> tensor<4x16xf32>
    %dz = nn.mul %dh, %mask : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
    %xt = nn.transpose %x, [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
    %dw0 = nn.matmul %xt, %dz : tensor<8x4xf32>, tensor<4x16xf32> -> tensor<8x16xf32>
    mpmd.yield %dw0 : tensor<8x16xf32>
  }
  // CHECK: mpmd.fragment @s0.opt stage 0 chunk 0 kind optimizer
  mpmd.fragment @s0.opt stage 0 chunk 0 kind optimizer
      (%g: tensor<8x16xf32>, %w0: tensor<8x16xf32> {mpmd.param = @w0})
      -> tensor<8x16xf32> {
    %lr = nn.constant dense<0.1> : tensor<f32>
    %step = nn.mul %g, %lr : tensor<8x16xf32>, tensor<f32> -> tensor<8x16xf32>
    %new = nn.sub %w0, %step : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
    mpmd.yield %new : tensor<8x16xf32>
  }
  // CHECK: mpmd.fragment @s1.opt stage 1 chunk 0 kind optimizer
  mpmd.fragment @s1.opt stage 1 chunk 0 kind optimizer
      (%g: tensor<16x4xf32>, %w1: tensor<16x4xf32> {mpmd.param = @w1})
      -> tensor<16x4xf32> {
    %lr = nn.constant dense<0.1> : tensor<f32>
    %step = nn.mul %g, %lr : tensor<16x4xf32>, tensor<f32> -> tensor<16x4xf32>
    %new = nn.sub %w1, %step : tensor<16x4xf32>, tensor<16x4xf32> -> tensor<16x4xf32>
    mpmd.yield %new : tensor<16x4xf32>
  }

  // Cross-stage edges (sent), same-stage edges (stashed), and per-microbatch
  // gradients summed in microbatch order into the once-per-step optimizers.
  // CHECK: mpmd.transfer @s0.fwd[0] -> @s1.fwd[0] : tensor<4x16xf32>
  // CHECK-NEXT: mpmd.transfer @s0.fwd[0] -> @s1.bwd[1] : tensor<4x16xf32>
  // CHECK-NEXT: mpmd.transfer @s1.fwd[1] -> @s1.bwd[0] : tensor<4x4xf32>
  // CHECK-NEXT: mpmd.transfer @s1.bwd[0] -> @s0.bwd[0] : tensor<4x16xf32>
  // CHECK-NEXT: mpmd.transfer @s0.fwd[1] -> @s0.bwd[1] : tensor<4x16xf32>
  // CHECK-NEXT: mpmd.transfer @s0.bwd[0] -> @s0.opt[0] : tensor<8x16xf32>
  // CHECK-NEXT: mpmd.transfer @s1.bwd[1] -> @s1.opt[0] : tensor<16x4xf32>
  mpmd.transfer @s0.fwd[0] -> @s1.fwd[0] : tensor<4x16xf32>
  mpmd.transfer @s0.fwd[0] -> @s1.bwd[1] : tensor<4x16xf32>
  mpmd.transfer @s1.fwd[1] -> @s1.bwd[0] : tensor<4x4xf32>
  mpmd.transfer @s1.bwd[0] -> @s0.bwd[0] : tensor<4x16xf32>
  mpmd.transfer @s0.fwd[1] -> @s0.bwd[1] : tensor<4x16xf32>
  mpmd.transfer @s0.bwd[0] -> @s0.opt[0] : tensor<8x16xf32>
  mpmd.transfer @s1.bwd[1] -> @s1.opt[0] : tensor<16x4xf32>

  // 1F1B, m = 2: rank 0 warms up with one forward.
  // CHECK: mpmd.rank 0 {
  // CHECK-NEXT: mpmd.run @s0.fwd microbatch 0
  // CHECK-NEXT: mpmd.send @s0.fwd[0] microbatch 0 to 1 channel 0 : tensor<4x16xf32> wire f32
  // CHECK-NEXT: mpmd.run @s0.fwd microbatch 1
  // CHECK-NEXT: mpmd.send @s0.fwd[0] microbatch 1 to 1 channel 0 : tensor<4x16xf32> wire f32
  // CHECK-NEXT: mpmd.recv @s1.bwd[0] microbatch 0 from 1 channel 1 : tensor<4x16xf32> wire f32
  // CHECK-NEXT: mpmd.run @s0.bwd microbatch 0
  // CHECK-NEXT: mpmd.recv @s1.bwd[0] microbatch 1 from 1 channel 1 : tensor<4x16xf32> wire f32
  // CHECK-NEXT: mpmd.run @s0.bwd microbatch 1
  // CHECK-NEXT: mpmd.run @s0.opt{{$}}
  // CHECK-NEXT: }
  mpmd.rank 0 {
    mpmd.run @s0.fwd microbatch 0
    mpmd.send @s0.fwd[0] microbatch 0 to 1 channel 0 : tensor<4x16xf32> wire f32
    mpmd.run @s0.fwd microbatch 1
    mpmd.send @s0.fwd[0] microbatch 1 to 1 channel 0 : tensor<4x16xf32> wire f32
    mpmd.recv @s1.bwd[0] microbatch 0 from 1 channel 1 : tensor<4x16xf32> wire f32
    mpmd.run @s0.bwd microbatch 0
    mpmd.recv @s1.bwd[0] microbatch 1 from 1 channel 1 : tensor<4x16xf32> wire f32
    mpmd.run @s0.bwd microbatch 1
    mpmd.run @s0.opt
  }
  // CHECK: mpmd.rank 1 {
  // CHECK-NEXT: mpmd.recv @s0.fwd[0] microbatch 0 from 0 channel 0 : tensor<4x16xf32> wire f32
  // CHECK-NEXT: mpmd.run @s1.fwd microbatch 0
  // CHECK-NEXT: mpmd.recv @s0.fwd[0] microbatch 1 from 0 channel 0 : tensor<4x16xf32> wire f32
  // CHECK-NEXT: mpmd.run @s1.bwd microbatch 0
  // CHECK-NEXT: mpmd.send @s1.bwd[0] microbatch 0 to 0 channel 1 : tensor<4x16xf32> wire f32
  // CHECK-NEXT: mpmd.run @s1.fwd microbatch 1
  // CHECK-NEXT: mpmd.run @s1.bwd microbatch 1
  // CHECK-NEXT: mpmd.send @s1.bwd[0] microbatch 1 to 0 channel 1 : tensor<4x16xf32> wire f32
  // CHECK-NEXT: mpmd.run @s1.opt{{$}}
  // CHECK-NEXT: }
  mpmd.rank 1 {
    mpmd.recv @s0.fwd[0] microbatch 0 from 0 channel 0 : tensor<4x16xf32> wire f32
    mpmd.run @s1.fwd microbatch 0
    mpmd.recv @s0.fwd[0] microbatch 1 from 0 channel 0 : tensor<4x16xf32> wire f32
    mpmd.run @s1.bwd microbatch 0
    mpmd.send @s1.bwd[0] microbatch 0 to 0 channel 1 : tensor<4x16xf32> wire f32
    mpmd.run @s1.fwd microbatch 1
    mpmd.run @s1.bwd microbatch 1
    mpmd.send @s1.bwd[0] microbatch 1 to 0 channel 1 : tensor<4x16xf32> wire f32
    mpmd.run @s1.opt
  }
}
