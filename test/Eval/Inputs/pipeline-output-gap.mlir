// Step outputs must be numbered 0..n-1: this program has only output 1.

mpmd.program @step stages 1 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @f stage 0 chunk 0 kind fwd
      (%x: tensor<2xf32> {mpmd.input = 0 : i64}) -> tensor<2xf32> {
    mpmd.yield %x : tensor<2xf32>
  }
  mpmd.fragment @g stage 0 chunk 0 kind step_epilogue (%v: tensor<2xf32>)
      -> (tensor<2xf32> {mpmd.output = 1 : i64}) {
    mpmd.yield %v : tensor<2xf32>
  }
  mpmd.transfer @f[0] -> @g[0] : tensor<2xf32>
  mpmd.rank 0 {
    mpmd.run @f microbatch 0
    mpmd.run @f microbatch 1
    mpmd.run @g
  }
}
