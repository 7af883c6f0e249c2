// Rank 1 runs @g before receiving the slot it needs. The step fails with
// that error, at the run's location, and rank 0, waiting in its send for a
// receive that never comes, is stopped rather than left hanging.

mpmd.program @step stages 2 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @f stage 0 chunk 0 kind fwd
      (%x: tensor<2xf32> {mpmd.input = 0 : i64}) -> tensor<2xf32> {
    mpmd.yield %x : tensor<2xf32>
  }
  mpmd.fragment @g stage 1 chunk 0 kind fwd (%v: tensor<2xf32>)
      -> tensor<2xf32> {
    mpmd.yield %v : tensor<2xf32>
  }
  mpmd.transfer @f[0] -> @g[0] : tensor<2xf32>
  mpmd.rank 0 {
    mpmd.run @f microbatch 0
    mpmd.send @f[0] microbatch 0 to 1 channel 0 : tensor<2xf32> wire f32
  }
  mpmd.rank 1 {
    mpmd.run @g microbatch 0
    mpmd.recv @f[0] microbatch 0 from 0 channel 0 : tensor<2xf32> wire f32
  }
}
