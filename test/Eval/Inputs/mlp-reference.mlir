// The math of mlp-2stage.mlir as one function over the full batch, in the
// same op order: each microbatch's forward and backward on its rows, the
// losses and gradients summed in microbatch order, then SGD. Results: the
// summed loss and the new @w0 and @w1.

nn.parameter @w0 : tensor<8x16xf32> = normal(0.1)
nn.parameter @w1 : tensor<16x4xf32> = normal(0.1)

func.func @step(%x: tensor<8x8xf32>)
    -> (tensor<f32>, tensor<8x16xf32>, tensor<16x4xf32>) {
  %w0 = nn.param @w0 : tensor<8x16xf32>
  %w1 = nn.param @w1 : tensor<16x4xf32>
  %zero = nn.constant dense<0.0> : tensor<f32>
  // Microbatch 0: rows 0..3.
  %x0 = nn.slice %x [0, 0] to [4, 8] step [1, 1] : tensor<8x8xf32> -> tensor<4x8xf32>
  %z0 = nn.matmul %x0, %w0 : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %h0 = nn.relu %z0 : tensor<4x16xf32>
  %y0 = nn.matmul %h0, %w1 : tensor<4x16xf32>, tensor<16x4xf32> -> tensor<4x4xf32>
  %yy0 = nn.mul %y0, %y0 : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %loss0 = nn.reduce_sum %yy0 [0, 1] : tensor<4x4xf32> -> tensor<f32>
  %dy0 = nn.add %y0, %y0 : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %w1t0 = nn.transpose %w1, [1, 0] : tensor<16x4xf32> -> tensor<4x16xf32>
  %dh0 = nn.matmul %dy0, %w1t0 : tensor<4x4xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  %ht0 = nn.transpose %h0, [1, 0] : tensor<4x16xf32> -> tensor<16x4xf32>
  %dw1_0 = nn.matmul %ht0, %dy0 : tensor<16x4xf32>, tensor<4x4xf32> -> tensor<16x4xf32>
  %mask0 = nn.greater_equal %z0, %zero : tensor<4x16xf32>, tensor<f32> -> tensor<4x16xf32>
  %dz0 = nn.mul %dh0, %mask0 : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  %xt0 = nn.transpose %x0, [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %dw0_0 = nn.matmul %xt0, %dz0 : tensor<8x4xf32>, tensor<4x16xf32> -> tensor<8x16xf32>
  // Microbatch 1: rows 4..7.
  %x1 = nn.slice %x [4, 0] to [8, 8] step [1, 1] : tensor<8x8xf32> -> tensor<4x8xf32>
  %z1 = nn.matmul %x1, %w0 : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %h1 = nn.relu %z1 : tensor<4x16xf32>
  %y1 = nn.matmul %h1, %w1 : tensor<4x16xf32>, tensor<16x4xf32> -> tensor<4x4xf32>
  %yy1 = nn.mul %y1, %y1 : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %loss1 = nn.reduce_sum %yy1 [0, 1] : tensor<4x4xf32> -> tensor<f32>
  %dy1 = nn.add %y1, %y1 : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %w1t1 = nn.transpose %w1, [1, 0] : tensor<16x4xf32> -> tensor<4x16xf32>
  %dh1 = nn.matmul %dy1, %w1t1 : tensor<4x4xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  %ht1 = nn.transpose %h1, [1, 0] : tensor<4x16xf32> -> tensor<16x4xf32>
  %dw1_1 = nn.matmul %ht1, %dy1 : tensor<16x4xf32>, tensor<4x4xf32> -> tensor<16x4xf32>
  %mask1 = nn.greater_equal %z1, %zero : tensor<4x16xf32>, tensor<f32> -> tensor<4x16xf32>
  %dz1 = nn.mul %dh1, %mask1 : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  %xt1 = nn.transpose %x1, [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %dw0_1 = nn.matmul %xt1, %dz1 : tensor<8x4xf32>, tensor<4x16xf32> -> tensor<8x16xf32>
  %loss = nn.add %loss0, %loss1 : tensor<f32>, tensor<f32> -> tensor<f32>
  %dw0 = nn.add %dw0_0, %dw0_1 : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  %dw1 = nn.add %dw1_0, %dw1_1 : tensor<16x4xf32>, tensor<16x4xf32> -> tensor<16x4xf32>
  %lr = nn.constant dense<0.1> : tensor<f32>
  %s0 = nn.mul %dw0, %lr : tensor<8x16xf32>, tensor<f32> -> tensor<8x16xf32>
  %nw0 = nn.sub %w0, %s0 : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  %s1 = nn.mul %dw1, %lr : tensor<16x4xf32>, tensor<f32> -> tensor<16x4xf32>
  %nw1 = nn.sub %w1, %s1 : tensor<16x4xf32>, tensor<16x4xf32> -> tensor<16x4xf32>
  return %loss, %nw0, %nw1 : tensor<f32>, tensor<8x16xf32>, tensor<16x4xf32>
}
