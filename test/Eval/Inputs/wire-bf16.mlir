// An f32 value sent with wire type bf16: the sender rounds to bf16 and the
// receiver keeps f32, so stage 1 sees the input rounded through bf16
// (@through_bf16), not the input itself (@identity).

mpmd.program @wire stages 2 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @p stage 0 chunk 0 kind fwd
      (%x: tensor<1x64xf32> {mpmd.input = 0 : i64}) -> tensor<1x64xf32> {
    mpmd.yield %x : tensor<1x64xf32>
  }
  mpmd.fragment @out stage 1 chunk 0 kind step_epilogue
      (%v: tensor<1x64xf32>) -> (tensor<1x64xf32> {mpmd.output = 0 : i64}) {
    mpmd.yield %v : tensor<1x64xf32>
  }
  mpmd.transfer @p[0] -> @out[0] : tensor<1x64xf32>
  mpmd.rank 0 {
    mpmd.run @p microbatch 0
    mpmd.send @p[0] microbatch 0 to 1 channel 0 : tensor<1x64xf32> wire bf16
  }
  mpmd.rank 1 {
    mpmd.recv @p[0] microbatch 0 from 0 channel 0 : tensor<1x64xf32> wire bf16
    mpmd.run @out
  }
}

func.func @through_bf16(%x: tensor<1x64xf32>) -> tensor<1x64xf32> {
  %b = nn.cast %x : tensor<1x64xf32> to tensor<1x64xbf16>
  %f = nn.cast %b : tensor<1x64xbf16> to tensor<1x64xf32>
  return %f : tensor<1x64xf32>
}

func.func @identity(%x: tensor<1x64xf32>) -> tensor<1x64xf32> {
  return %x : tensor<1x64xf32>
}
