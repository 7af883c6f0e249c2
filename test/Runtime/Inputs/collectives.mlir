// A hand-written 3-rank program of collectives (test/Runtime/collectives.test):
// each rank squares its parameter (p0..p2), the squares are summed over
// group [2, 0, 1] in place on every rank, rank 1's doubled parameter is
// broadcast to all, and each rank steps its parameter by sum * broadcast;
// rank 0 outputs the sum's total as the loss.

nn.parameter @w0 : tensor<4xf32> = normal(1.0)
nn.parameter @w1 : tensor<4xf32> = normal(1.0)
nn.parameter @w2 : tensor<4xf32> = normal(1.0)

mpmd.program @coll stages 3 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @p0 stage 0 chunk 0 kind step_prologue
      (%w: tensor<4xf32> {mpmd.param = @w0}) -> tensor<4xf32> {
    %v = nn.mul %w, %w : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    mpmd.yield %v : tensor<4xf32>
  }
  mpmd.fragment @p1 stage 1 chunk 0 kind step_prologue
      (%w: tensor<4xf32> {mpmd.param = @w1}) -> (tensor<4xf32>, tensor<4xf32>) {
    %v = nn.mul %w, %w : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %c = nn.add %w, %w : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    mpmd.yield %v, %c : tensor<4xf32>, tensor<4xf32>
  }
  mpmd.fragment @p2 stage 2 chunk 0 kind step_prologue
      (%w: tensor<4xf32> {mpmd.param = @w2}) -> tensor<4xf32> {
    %v = nn.mul %w, %w : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    mpmd.yield %v : tensor<4xf32>
  }
  mpmd.fragment @u0 stage 0 chunk 0 kind optimizer
      (%s: tensor<4xf32>, %c: tensor<4xf32>, %w: tensor<4xf32> {mpmd.param = @w0})
      -> (tensor<4xf32> {mpmd.update = @w0}, tensor<f32> {mpmd.output = 0 : i64}) {
    %lr = nn.constant dense<0.01> : tensor<f32>
    %sc = nn.mul %s, %c : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %step = nn.mul %sc, %lr : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
    %new = nn.sub %w, %step : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %loss = nn.reduce_sum %s [0] : tensor<4xf32> -> tensor<f32>
    mpmd.yield %new, %loss : tensor<4xf32>, tensor<f32>
  }
  mpmd.fragment @u1 stage 1 chunk 0 kind optimizer
      (%s: tensor<4xf32>, %c: tensor<4xf32>, %w: tensor<4xf32> {mpmd.param = @w1})
      -> (tensor<4xf32> {mpmd.update = @w1}) {
    %lr = nn.constant dense<0.01> : tensor<f32>
    %sc = nn.mul %s, %c : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %step = nn.mul %sc, %lr : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
    %new = nn.sub %w, %step : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    mpmd.yield %new : tensor<4xf32>
  }
  mpmd.fragment @u2 stage 2 chunk 0 kind optimizer
      (%s: tensor<4xf32>, %c: tensor<4xf32>, %w: tensor<4xf32> {mpmd.param = @w2})
      -> (tensor<4xf32> {mpmd.update = @w2}) {
    %lr = nn.constant dense<0.01> : tensor<f32>
    %sc = nn.mul %s, %c : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %step = nn.mul %sc, %lr : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
    %new = nn.sub %w, %step : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    mpmd.yield %new : tensor<4xf32>
  }
  mpmd.transfer @p0[0] -> @u0[0] : tensor<4xf32>
  mpmd.transfer @p1[0] -> @u1[0] : tensor<4xf32>
  mpmd.transfer @p2[0] -> @u2[0] : tensor<4xf32>
  mpmd.transfer @p1[1] -> @u0[1] : tensor<4xf32>
  mpmd.transfer @p1[1] -> @u1[1] : tensor<4xf32>
  mpmd.transfer @p1[1] -> @u2[1] : tensor<4xf32>
  mpmd.rank 0 {
    mpmd.run @p0
    mpmd.all_reduce sum @p0[0] group [2, 0, 1] : tensor<4xf32>
    mpmd.broadcast @p1[1] root 1 group [0, 1, 2] : tensor<4xf32>
    mpmd.run @u0
  }
  mpmd.rank 1 {
    mpmd.run @p1
    mpmd.all_reduce sum @p1[0] group [2, 0, 1] : tensor<4xf32>
    mpmd.broadcast @p1[1] root 1 group [0, 1, 2] : tensor<4xf32>
    mpmd.run @u1
  }
  mpmd.rank 2 {
    mpmd.run @p2
    mpmd.all_reduce sum @p2[0] group [2, 0, 1] : tensor<4xf32>
    mpmd.broadcast @p1[1] root 1 group [0, 1, 2] : tensor<4xf32>
    mpmd.run @u2
  }
}
