// A byte-level bigram model (embedding, projection, cross-entropy) trained
// with SGD three ways with the same math in the same op order: @train_step
// over the full batch of 4 x 3 tokens, and program @step on two stages (2
// microbatches of 2 x 3: the embedding on stage 0, the projection and loss
// on stage 1). The step loss is the mean of the microbatch losses, so each
// microbatch's loss gradient is 0.5. @forward is the held-out loss.

nn.parameter @wte : tensor<256x4xf32> = normal(0.5)
nn.parameter @wout : tensor<4x256xf32> = normal(0.5)

func.func @forward(%tokens: tensor<4x3xi32>, %targets: tensor<4x3xi32>) -> tensor<f32> {
  %wte = nn.param @wte : tensor<256x4xf32>
  %wout = nn.param @wout : tensor<4x256xf32>
  %e = nn.embedding %wte, %tokens : tensor<256x4xf32>, tensor<4x3xi32> -> tensor<4x3x4xf32>
  %logits = nn.matmul %e, %wout : tensor<4x3x4xf32>, tensor<4x256xf32> -> tensor<4x3x256xf32>
  %loss = nn.cross_entropy %logits, %targets : tensor<4x3x256xf32>, tensor<4x3xi32> -> tensor<f32>
  return %loss : tensor<f32>
}

func.func @train_step(%tokens: tensor<4x3xi32>, %targets: tensor<4x3xi32>)
    -> (tensor<f32>, tensor<256x4xf32>, tensor<4x256xf32>)
    attributes {nn.updates = [@wte, @wout]} {
  %wte = nn.param @wte : tensor<256x4xf32>
  %wout = nn.param @wout : tensor<4x256xf32>
  %half = nn.constant dense<0.5> : tensor<f32>
  %tok0 = nn.slice %tokens [0, 0] to [2, 3] step [1, 1] : tensor<4x3xi32> -> tensor<2x3xi32>
  %tgt0 = nn.slice %targets [0, 0] to [2, 3] step [1, 1] : tensor<4x3xi32> -> tensor<2x3xi32>
  %e0 = nn.embedding %wte, %tok0 : tensor<256x4xf32>, tensor<2x3xi32> -> tensor<2x3x4xf32>
  %logits0 = nn.matmul %e0, %wout : tensor<2x3x4xf32>, tensor<4x256xf32> -> tensor<2x3x256xf32>
  %loss0 = nn.cross_entropy %logits0, %tgt0 : tensor<2x3x256xf32>, tensor<2x3xi32> -> tensor<f32>
  %dlogits0 = nn.cross_entropy_grad %logits0, %tgt0, %half : tensor<2x3x256xf32>, tensor<2x3xi32>, tensor<f32> -> tensor<2x3x256xf32>
  %woutt0 = nn.transpose %wout, [1, 0] : tensor<4x256xf32> -> tensor<256x4xf32>
  %de0 = nn.matmul %dlogits0, %woutt0 : tensor<2x3x256xf32>, tensor<256x4xf32> -> tensor<2x3x4xf32>
  %e2_0 = nn.reshape %e0 : tensor<2x3x4xf32> to tensor<6x4xf32>
  %d2_0 = nn.reshape %dlogits0 : tensor<2x3x256xf32> to tensor<6x256xf32>
  %e2t0 = nn.transpose %e2_0, [1, 0] : tensor<6x4xf32> -> tensor<4x6xf32>
  %dwout0 = nn.matmul %e2t0, %d2_0 : tensor<4x6xf32>, tensor<6x256xf32> -> tensor<4x256xf32>
  %dwte0 = nn.embedding_grad %de0, %tok0 : tensor<2x3x4xf32>, tensor<2x3xi32> -> tensor<256x4xf32>
  %tok1 = nn.slice %tokens [2, 0] to [4, 3] step [1, 1] : tensor<4x3xi32> -> tensor<2x3xi32>
  %tgt1 = nn.slice %targets [2, 0] to [4, 3] step [1, 1] : tensor<4x3xi32> -> tensor<2x3xi32>
  %e1 = nn.embedding %wte, %tok1 : tensor<256x4xf32>, tensor<2x3xi32> -> tensor<2x3x4xf32>
  %logits1 = nn.matmul %e1, %wout : tensor<2x3x4xf32>, tensor<4x256xf32> -> tensor<2x3x256xf32>
  %loss1 = nn.cross_entropy %logits1, %tgt1 : tensor<2x3x256xf32>, tensor<2x3xi32> -> tensor<f32>
  %dlogits1 = nn.cross_entropy_grad %logits1, %tgt1, %half : tensor<2x3x256xf32>, tensor<2x3xi32>, tensor<f32> -> tensor<2x3x256xf32>
  %woutt1 = nn.transpose %wout, [1, 0] : tensor<4x256xf32> -> tensor<256x4xf32>
  %de1 = nn.matmul %dlogits1, %woutt1 : tensor<2x3x256xf32>, tensor<256x4xf32> -> tensor<2x3x4xf32>
  %e2_1 = nn.reshape %e1 : tensor<2x3x4xf32> to tensor<6x4xf32>
  %d2_1 = nn.reshape %dlogits1 : tensor<2x3x256xf32> to tensor<6x256xf32>
  %e2t1 = nn.transpose %e2_1, [1, 0] : tensor<6x4xf32> -> tensor<4x6xf32>
  %dwout1 = nn.matmul %e2t1, %d2_1 : tensor<4x6xf32>, tensor<6x256xf32> -> tensor<4x256xf32>
  %dwte1 = nn.embedding_grad %de1, %tok1 : tensor<2x3x4xf32>, tensor<2x3xi32> -> tensor<256x4xf32>
  %lsum = nn.add %loss0, %loss1 : tensor<f32>, tensor<f32> -> tensor<f32>
  %loss = nn.mul %lsum, %half : tensor<f32>, tensor<f32> -> tensor<f32>
  %gwte = nn.add %dwte0, %dwte1 : tensor<256x4xf32>, tensor<256x4xf32> -> tensor<256x4xf32>
  %gwout = nn.add %dwout0, %dwout1 : tensor<4x256xf32>, tensor<4x256xf32> -> tensor<4x256xf32>
  %lr = nn.constant dense<0.5> : tensor<f32>
  %swte = nn.mul %gwte, %lr : tensor<256x4xf32>, tensor<f32> -> tensor<256x4xf32>
  %nwte = nn.sub %wte, %swte : tensor<256x4xf32>, tensor<256x4xf32> -> tensor<256x4xf32>
  %swout = nn.mul %gwout, %lr : tensor<4x256xf32>, tensor<f32> -> tensor<4x256xf32>
  %nwout = nn.sub %wout, %swout : tensor<4x256xf32>, tensor<4x256xf32> -> tensor<4x256xf32>
  return %loss, %nwte, %nwout : tensor<f32>, tensor<256x4xf32>, tensor<4x256xf32>
}

mpmd.program @step stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @s0.fwd stage 0 chunk 0 kind fwd
      (%tok: tensor<2x3xi32> {mpmd.input = 0 : i64},
       %wte: tensor<256x4xf32> {mpmd.param = @wte}) -> tensor<2x3x4xf32> {
    %e = nn.embedding %wte, %tok : tensor<256x4xf32>, tensor<2x3xi32> -> tensor<2x3x4xf32>
    mpmd.yield %e : tensor<2x3x4xf32>
  }
  mpmd.fragment @s1.fwd stage 1 chunk 0 kind fwd
      (%e: tensor<2x3x4xf32>, %tgt: tensor<2x3xi32> {mpmd.input = 1 : i64},
       %wout: tensor<4x256xf32> {mpmd.param = @wout})
      -> (tensor<f32>, tensor<2x3x256xf32>) {
    %logits = nn.matmul %e, %wout : tensor<2x3x4xf32>, tensor<4x256xf32> -> tensor<2x3x256xf32>
    %loss = nn.cross_entropy %logits, %tgt : tensor<2x3x256xf32>, tensor<2x3xi32> -> tensor<f32>
    mpmd.yield %loss, %logits : tensor<f32>, tensor<2x3x256xf32>
  }
  mpmd.fragment @s1.bwd stage 1 chunk 0 kind bwd
      (%logits: tensor<2x3x256xf32>, %e: tensor<2x3x4xf32>,
       %tgt: tensor<2x3xi32> {mpmd.input = 1 : i64},
       %wout: tensor<4x256xf32> {mpmd.param = @wout})
      -> (tensor<2x3x4xf32>, tensor<4x256xf32>) {
    %half = nn.constant dense<0.5> : tensor<f32>
    %dlogits = nn.cross_entropy_grad %logits, %tgt, %half : tensor<2x3x256xf32>, tensor<2x3xi32>, tensor<f32> -> tensor<2x3x256xf32>
    %woutt = nn.transpose %wout, [1, 0] : tensor<4x256xf32> -> tensor<256x4xf32>
    %de = nn.matmul %dlogits, %woutt : tensor<2x3x256xf32>, tensor<256x4xf32> -> tensor<2x3x4xf32>
    %e2 = nn.reshape %e : tensor<2x3x4xf32> to tensor<6x4xf32>
    %d2 = nn.reshape %dlogits : tensor<2x3x256xf32> to tensor<6x256xf32>
    %e2t = nn.transpose %e2, [1, 0] : tensor<6x4xf32> -> tensor<4x6xf32>
    %dwout = nn.matmul %e2t, %d2 : tensor<4x6xf32>, tensor<6x256xf32> -> tensor<4x256xf32>
    mpmd.yield %de, %dwout : tensor<2x3x4xf32>, tensor<4x256xf32>
  }
  mpmd.fragment @s0.bwd stage 0 chunk 0 kind bwd
      (%de: tensor<2x3x4xf32>, %tok: tensor<2x3xi32> {mpmd.input = 0 : i64})
      -> tensor<256x4xf32> {
    %dwte = nn.embedding_grad %de, %tok : tensor<2x3x4xf32>, tensor<2x3xi32> -> tensor<256x4xf32>
    mpmd.yield %dwte : tensor<256x4xf32>
  }
  mpmd.fragment @s0.opt stage 0 chunk 0 kind optimizer
      (%g: tensor<256x4xf32>, %w: tensor<256x4xf32> {mpmd.param = @wte})
      -> (tensor<256x4xf32> {mpmd.update = @wte}) {
    %lr = nn.constant dense<0.5> : tensor<f32>
    %s = nn.mul %g, %lr : tensor<256x4xf32>, tensor<f32> -> tensor<256x4xf32>
    %new = nn.sub %w, %s : tensor<256x4xf32>, tensor<256x4xf32> -> tensor<256x4xf32>
    mpmd.yield %new : tensor<256x4xf32>
  }
  mpmd.fragment @s1.opt stage 1 chunk 0 kind optimizer
      (%g: tensor<4x256xf32>, %w: tensor<4x256xf32> {mpmd.param = @wout})
      -> (tensor<4x256xf32> {mpmd.update = @wout}) {
    %lr = nn.constant dense<0.5> : tensor<f32>
    %s = nn.mul %g, %lr : tensor<4x256xf32>, tensor<f32> -> tensor<4x256xf32>
    %new = nn.sub %w, %s : tensor<4x256xf32>, tensor<4x256xf32> -> tensor<4x256xf32>
    mpmd.yield %new : tensor<4x256xf32>
  }
  mpmd.fragment @s1.loss stage 1 chunk 0 kind step_epilogue (%l: tensor<f32>)
      -> (tensor<f32> {mpmd.output = 0 : i64}) {
    %half = nn.constant dense<0.5> : tensor<f32>
    %loss = nn.mul %l, %half : tensor<f32>, tensor<f32> -> tensor<f32>
    mpmd.yield %loss : tensor<f32>
  }
  mpmd.transfer @s0.fwd[0] -> @s1.fwd[0] : tensor<2x3x4xf32>
  mpmd.transfer @s0.fwd[0] -> @s1.bwd[1] : tensor<2x3x4xf32>
  mpmd.transfer @s1.fwd[1] -> @s1.bwd[0] : tensor<2x3x256xf32>
  mpmd.transfer @s1.bwd[0] -> @s0.bwd[0] : tensor<2x3x4xf32>
  mpmd.transfer @s0.bwd[0] -> @s0.opt[0] : tensor<256x4xf32>
  mpmd.transfer @s1.bwd[1] -> @s1.opt[0] : tensor<4x256xf32>
  mpmd.transfer @s1.fwd[0] -> @s1.loss[0] : tensor<f32>

  // 1F1B, as `tandem-opt --mpmd-schedule --mpmd-lower-transfers` emits it.
  mpmd.rank 0 {
    mpmd.run @s0.fwd microbatch 0
    mpmd.send @s0.fwd[0] microbatch 0 to 1 channel 0 : tensor<2x3x4xf32> wire f32
    mpmd.run @s0.fwd microbatch 1
    mpmd.recv @s1.bwd[0] microbatch 0 from 1 channel 1 : tensor<2x3x4xf32> wire f32
    mpmd.send @s0.fwd[0] microbatch 1 to 1 channel 0 : tensor<2x3x4xf32> wire f32
    mpmd.run @s0.bwd microbatch 0
    mpmd.recv @s1.bwd[0] microbatch 1 from 1 channel 1 : tensor<2x3x4xf32> wire f32
    mpmd.run @s0.bwd microbatch 1
    mpmd.run @s0.opt
  }
  mpmd.rank 1 {
    mpmd.recv @s0.fwd[0] microbatch 0 from 0 channel 0 : tensor<2x3x4xf32> wire f32
    mpmd.run @s1.fwd microbatch 0
    mpmd.run @s1.bwd microbatch 0
    mpmd.send @s1.bwd[0] microbatch 0 to 0 channel 1 : tensor<2x3x4xf32> wire f32
    mpmd.recv @s0.fwd[0] microbatch 1 from 0 channel 0 : tensor<2x3x4xf32> wire f32
    mpmd.run @s1.fwd microbatch 1
    mpmd.run @s1.bwd microbatch 1
    mpmd.send @s1.bwd[0] microbatch 1 to 0 channel 1 : tensor<2x3x4xf32> wire f32
    mpmd.run @s1.opt
    mpmd.run @s1.loss
  }
}
