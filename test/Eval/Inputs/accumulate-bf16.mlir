// Gradient accumulation order: stage 0 passes each of 3 microbatches of a
// bf16 input to stage 1, whose once-per-step fragment receives their sum.
// The sum runs in increasing microbatch order, rounded to bf16 after each
// add: @in_order computes exactly that over the full batch; @reversed adds
// the same rows in the opposite order, which rounds differently.

mpmd.program @acc stages 2 chunks 1 replicas 1 microbatches 3 {
  mpmd.fragment @g stage 0 chunk 0 kind fwd
      (%x: tensor<1x64xbf16> {mpmd.input = 0 : i64}) -> tensor<1x64xbf16> {
    mpmd.yield %x : tensor<1x64xbf16>
  }
  mpmd.fragment @sum stage 1 chunk 0 kind step_epilogue
      (%s: tensor<1x64xbf16>) -> (tensor<1x64xbf16> {mpmd.output = 0 : i64}) {
    mpmd.yield %s : tensor<1x64xbf16>
  }
  mpmd.transfer @g[0] -> @sum[0] : tensor<1x64xbf16>
  mpmd.rank 0 {
    mpmd.run @g microbatch 0
    mpmd.send @g[0] microbatch 0 to 1 channel 0 : tensor<1x64xbf16> wire bf16
    mpmd.run @g microbatch 1
    mpmd.send @g[0] microbatch 1 to 1 channel 0 : tensor<1x64xbf16> wire bf16
    mpmd.run @g microbatch 2
    mpmd.send @g[0] microbatch 2 to 1 channel 0 : tensor<1x64xbf16> wire bf16
  }
  mpmd.rank 1 {
    // All three received in one group before the sum.
    mpmd.recv @g[0] microbatch 0 from 0 channel 0 : tensor<1x64xbf16> wire bf16
    mpmd.recv @g[0] microbatch 1 from 0 channel 0 : tensor<1x64xbf16> wire bf16
    mpmd.recv @g[0] microbatch 2 from 0 channel 0 : tensor<1x64xbf16> wire bf16
    mpmd.run @sum
  }
}

func.func @in_order(%x: tensor<3x64xbf16>) -> tensor<1x64xbf16> {
  %x0 = nn.slice %x [0, 0] to [1, 64] step [1, 1] : tensor<3x64xbf16> -> tensor<1x64xbf16>
  %x1 = nn.slice %x [1, 0] to [2, 64] step [1, 1] : tensor<3x64xbf16> -> tensor<1x64xbf16>
  %x2 = nn.slice %x [2, 0] to [3, 64] step [1, 1] : tensor<3x64xbf16> -> tensor<1x64xbf16>
  %a = nn.add %x0, %x1 : tensor<1x64xbf16>, tensor<1x64xbf16> -> tensor<1x64xbf16>
  %b = nn.add %a, %x2 : tensor<1x64xbf16>, tensor<1x64xbf16> -> tensor<1x64xbf16>
  return %b : tensor<1x64xbf16>
}

func.func @reversed(%x: tensor<3x64xbf16>) -> tensor<1x64xbf16> {
  %x0 = nn.slice %x [0, 0] to [1, 64] step [1, 1] : tensor<3x64xbf16> -> tensor<1x64xbf16>
  %x1 = nn.slice %x [1, 0] to [2, 64] step [1, 1] : tensor<3x64xbf16> -> tensor<1x64xbf16>
  %x2 = nn.slice %x [2, 0] to [3, 64] step [1, 1] : tensor<3x64xbf16> -> tensor<1x64xbf16>
  %a = nn.add %x2, %x1 : tensor<1x64xbf16>, tensor<1x64xbf16> -> tensor<1x64xbf16>
  %b = nn.add %a, %x0 : tensor<1x64xbf16>, tensor<1x64xbf16> -> tensor<1x64xbf16>
  return %b : tensor<1x64xbf16>
}
