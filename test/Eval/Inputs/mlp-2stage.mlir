// The 2-stage MLP of test/Dialect/MPMD/example-2stage.mlir (1F1B over 2
// microbatches, SGD), with the step's bindings: the optimizers' results
// update @w0 and @w1, and a step epilogue returns the summed loss as step
// output 0.

nn.parameter @w0 : tensor<8x16xf32> = normal(0.1)
nn.parameter @w1 : tensor<16x4xf32> = normal(0.1)

mpmd.program @mlp stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @s0.fwd stage 0 chunk 0 kind fwd
      (%x: tensor<4x8xf32> {mpmd.input = 0 : i64},
       %w0: tensor<8x16xf32> {mpmd.param = @w0})
      -> (tensor<4x16xf32>, tensor<4x16xf32>) {
    %z = nn.matmul %x, %w0 : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
    %h = nn.relu %z : tensor<4x16xf32>
    mpmd.yield %h, %z : tensor<4x16xf32>, tensor<4x16xf32>
  }
  mpmd.fragment @s1.fwd stage 1 chunk 0 kind fwd
      (%h: tensor<4x16xf32>, %w1: tensor<16x4xf32> {mpmd.param = @w1})
      -> (tensor<f32>, tensor<4x4xf32>) {
    %y = nn.matmul %h, %w1 : tensor<4x16xf32>, tensor<16x4xf32> -> tensor<4x4xf32>
    %yy = nn.mul %y, %y : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    %loss = nn.reduce_sum %yy [0, 1] : tensor<4x4xf32> -> tensor<f32>
    mpmd.yield %loss, %y : tensor<f32>, tensor<4x4xf32>
  }
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
  mpmd.fragment @s0.opt stage 0 chunk 0 kind optimizer
      (%g: tensor<8x16xf32>, %w0: tensor<8x16xf32> {mpmd.param = @w0})
      -> (tensor<8x16xf32> {mpmd.update = @w0}) {
    %lr = nn.constant dense<0.1> : tensor<f32>
    %step = nn.mul %g, %lr : tensor<8x16xf32>, tensor<f32> -> tensor<8x16xf32>
    %new = nn.sub %w0, %step : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
    mpmd.yield %new : tensor<8x16xf32>
  }
  mpmd.fragment @s1.opt stage 1 chunk 0 kind optimizer
      (%g: tensor<16x4xf32>, %w1: tensor<16x4xf32> {mpmd.param = @w1})
      -> (tensor<16x4xf32> {mpmd.update = @w1}) {
    %lr = nn.constant dense<0.1> : tensor<f32>
    %step = nn.mul %g, %lr : tensor<16x4xf32>, tensor<f32> -> tensor<16x4xf32>
    %new = nn.sub %w1, %step : tensor<16x4xf32>, tensor<16x4xf32> -> tensor<16x4xf32>
    mpmd.yield %new : tensor<16x4xf32>
  }
  // The step's loss: the microbatches' losses summed in microbatch order.
  mpmd.fragment @s1.loss stage 1 chunk 0 kind step_epilogue
      (%l: tensor<f32>) -> (tensor<f32> {mpmd.output = 0 : i64}) {
    mpmd.yield %l : tensor<f32>
  }

  // Cross-stage edges (sent), same-stage edges (stashed), and per-microbatch
  // gradients summed in microbatch order into the once-per-step optimizers.
  mpmd.transfer @s0.fwd[0] -> @s1.fwd[0] : tensor<4x16xf32>
  mpmd.transfer @s0.fwd[0] -> @s1.bwd[1] : tensor<4x16xf32>
  mpmd.transfer @s1.fwd[1] -> @s1.bwd[0] : tensor<4x4xf32>
  mpmd.transfer @s1.bwd[0] -> @s0.bwd[0] : tensor<4x16xf32>
  mpmd.transfer @s0.fwd[1] -> @s0.bwd[1] : tensor<4x16xf32>
  mpmd.transfer @s0.bwd[0] -> @s0.opt[0] : tensor<8x16xf32>
  mpmd.transfer @s1.bwd[1] -> @s1.opt[0] : tensor<16x4xf32>
  mpmd.transfer @s1.fwd[0] -> @s1.loss[0] : tensor<f32>

  // 1F1B, m = 2: rank 0 warms up with one forward.
  mpmd.rank 0 {
    mpmd.run @s0.fwd microbatch 0
    mpmd.send @s0.fwd[0] microbatch 0 to 1 channel 0 : tensor<4x16xf32> wire f32
    mpmd.run @s0.fwd microbatch 1
    mpmd.recv @s1.bwd[0] microbatch 0 from 1 channel 1 : tensor<4x16xf32> wire f32
    mpmd.send @s0.fwd[0] microbatch 1 to 1 channel 0 : tensor<4x16xf32> wire f32
    mpmd.run @s0.bwd microbatch 0
    mpmd.recv @s1.bwd[0] microbatch 1 from 1 channel 1 : tensor<4x16xf32> wire f32
    mpmd.run @s0.bwd microbatch 1
    mpmd.run @s0.opt
  }
  mpmd.rank 1 {
    mpmd.recv @s0.fwd[0] microbatch 0 from 0 channel 0 : tensor<4x16xf32> wire f32
    mpmd.run @s1.fwd microbatch 0
    mpmd.run @s1.bwd microbatch 0
    mpmd.send @s1.bwd[0] microbatch 0 to 0 channel 1 : tensor<4x16xf32> wire f32
    mpmd.recv @s0.fwd[0] microbatch 1 from 0 channel 0 : tensor<4x16xf32> wire f32
    mpmd.run @s1.fwd microbatch 1
    mpmd.run @s1.bwd microbatch 1
    mpmd.send @s1.bwd[0] microbatch 1 to 0 channel 1 : tensor<4x16xf32> wire f32
    mpmd.run @s1.opt
    mpmd.run @s1.loss
  }
}
