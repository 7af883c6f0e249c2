// 2 stages, 1 chunk(s), bwd fragments.
nn.parameter @w0 : tensor<4x4xf32> = normal(0.1)
nn.parameter @w1 : tensor<4x4xf32> = normal(0.1)
mpmd.program @step stages 2 chunks 1 replicas 1 microbatches 4 {
  mpmd.fragment @pro stage 0 chunk 0 kind step_prologue (%w: tensor<4x4xf32> {mpmd.param = @w0}) -> (tensor<4x4xf32>) {
    %c = nn.neg %w : tensor<4x4xf32>
    mpmd.yield %c : tensor<4x4xf32>
  }
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4x4xf32> {mpmd.input = 0 : i64}, %w: tensor<4x4xf32> {mpmd.param = @w0}) -> (tensor<4x4xf32>) {
    %h = nn.add %x, %w : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    mpmd.yield %h : tensor<4x4xf32>
  }
  mpmd.fragment @b0 stage 0 chunk 0 kind bwd (%g: tensor<4x4xf32>, %a: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
    %d = nn.add %g, %a : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    mpmd.yield %d, %a : tensor<4x4xf32>, tensor<4x4xf32>
  }
  mpmd.fragment @o0 stage 0 chunk 0 kind optimizer (%g: tensor<4x4xf32>, %w: tensor<4x4xf32> {mpmd.param = @w0}, %t: tensor<4x4xf32>) -> (tensor<4x4xf32>) {
    %n = nn.sub %w, %g : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    mpmd.yield %n : tensor<4x4xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> (tensor<4x4xf32>) {
    %h = nn.add %x, %w : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    mpmd.yield %h : tensor<4x4xf32>
  }
  mpmd.fragment @b1 stage 1 chunk 0 kind bwd (%g: tensor<4x4xf32>, %a: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
    %d = nn.add %g, %a : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    mpmd.yield %d, %a : tensor<4x4xf32>, tensor<4x4xf32>
  }
  mpmd.fragment @o1 stage 1 chunk 0 kind optimizer (%g: tensor<4x4xf32>, %w: tensor<4x4xf32> {mpmd.param = @w1}) -> (tensor<4x4xf32>) {
    %n = nn.sub %w, %g : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    mpmd.yield %n : tensor<4x4xf32>
  }
  mpmd.fragment @epi stage 1 chunk 0 kind step_epilogue (%n: tensor<4x4xf32>) -> (tensor<4x4xf32>) {
    mpmd.yield %n : tensor<4x4xf32>
  }
  mpmd.transfer @b1[0] -> @b0[0] : tensor<4x4xf32>
  mpmd.transfer @f0[0] -> @b0[1] : tensor<4x4xf32>
  mpmd.transfer @b0[1] -> @o0[0] : tensor<4x4xf32>
  mpmd.transfer @f0[0] -> @f1[0] : tensor<4x4xf32>
  mpmd.transfer @pro[0] -> @f1[1] : tensor<4x4xf32>
  mpmd.transfer @f1[0] -> @b1[0] : tensor<4x4xf32>
  mpmd.transfer @f1[0] -> @b1[1] : tensor<4x4xf32>
  mpmd.transfer @b1[1] -> @o1[0] : tensor<4x4xf32>
  mpmd.transfer @b1[1] -> @o0[2] : tensor<4x4xf32>
  mpmd.transfer @o1[0] -> @epi[0] : tensor<4x4xf32>
}
