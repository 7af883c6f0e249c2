// Each rank sends, runs, then receives what the other sent: this only
// works with buffered sends. Under rendezvous semantics both sends wait
// for a receive that is never posted, so the step must fail (not hang)
// naming both ranks.

mpmd.program @step stages 2 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd
      (%x: tensor<2xf32> {mpmd.input = 0 : i64}) -> tensor<2xf32> {
    mpmd.yield %x : tensor<2xf32>
  }
  mpmd.fragment @h0 stage 0 chunk 0 kind fwd
      (%x: tensor<2xf32> {mpmd.input = 0 : i64}) -> tensor<2xf32> {
    mpmd.yield %x : tensor<2xf32>
  }
  mpmd.fragment @g0 stage 0 chunk 0 kind step_epilogue (%v: tensor<2xf32>)
      -> (tensor<2xf32> {mpmd.output = 0 : i64}) {
    mpmd.yield %v : tensor<2xf32>
  }
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd
      (%x: tensor<2xf32> {mpmd.input = 0 : i64}) -> tensor<2xf32> {
    mpmd.yield %x : tensor<2xf32>
  }
  mpmd.fragment @h1 stage 1 chunk 0 kind fwd
      (%x: tensor<2xf32> {mpmd.input = 0 : i64}) -> tensor<2xf32> {
    mpmd.yield %x : tensor<2xf32>
  }
  mpmd.fragment @g1 stage 1 chunk 0 kind step_epilogue (%v: tensor<2xf32>)
      -> (tensor<2xf32> {mpmd.output = 1 : i64}) {
    mpmd.yield %v : tensor<2xf32>
  }
  mpmd.transfer @f1[0] -> @g0[0] : tensor<2xf32>
  mpmd.transfer @f0[0] -> @g1[0] : tensor<2xf32>
  mpmd.rank 0 {
    mpmd.run @f0 microbatch 0
    mpmd.send @f0[0] microbatch 0 to 1 channel 0 : tensor<2xf32> wire f32
    mpmd.run @h0 microbatch 0
    mpmd.recv @f1[0] microbatch 0 from 1 channel 1 : tensor<2xf32> wire f32
    mpmd.run @g0
  }
  mpmd.rank 1 {
    mpmd.run @f1 microbatch 0
    mpmd.send @f1[0] microbatch 0 to 0 channel 1 : tensor<2xf32> wire f32
    mpmd.run @h1 microbatch 0
    mpmd.recv @f0[0] microbatch 0 from 0 channel 0 : tensor<2xf32> wire f32
    mpmd.run @g1
  }
}
