// mpmd-memory: per-rank peak memory of scheduled programs, with the byte
// counts worked out by hand below (docs/mpmd.md, "Memory analysis").
//
// 1. The 2-stage MLP of example-2stage.mlir, 1F1B over m = 2, as written
//    there (f32: 4 bytes per element; actions numbered from 0).
//
// Rank 0: parameters @w0 8x16 = 512 (read by @s0.fwd, not only by the
// optimizer). Stash of one microbatch: @s0.fwd[1] (z, 4x16 = 256, read by
// @s0.bwd) + the input slice x (4x8 = 128, read again by @s0.bwd) = 384;
// microbatch 0 is stashed from action 0 to 5, microbatch 1 from 2 to 7:
// 2 in flight, stash 768. @s0.bwd[0] (dw0, 512) is summed into one
// accumulation buffer of 512 from its first production (action 5) to the
// optimizer run (8): gradients 512, not 2 x 512. Temporaries: @s0.bwd holds
// %mask (256) and %dz (256) at once = 512; @s0.opt %lr (4) + %step (512) =
// 516. A sent slot stays until the runtime waits for its send, before the
// rank's next send, receive or collective: microbatch 1's h (@s0.fwd[0],
// 256), sent at 3 in one group with the receive at 4, until 5 (the receive
// at 6 is the next post). Peak at @s0.bwd microbatch 0 (action 5): both
// stashes 768 + received dh 256 + h in flight 256 + dw0 512 + buffer 512 +
// temporaries 512 = 2816, plus the parameters: 3328.
//
// Rank 1: parameters @w1 16x4 = 256. Stash per microbatch: the received h
// (@s0.fwd[0], 256, read by @s1.bwd) + y (@s1.fwd[1], 4x4 = 64) = 320; the
// h of microbatch 1 arrives (action 2) before microbatch 0's backward (3)
// but is counted as stash only from its forward (5): 1 in flight. Buffer
// for dw1: 256. Temporaries: @s1.bwd holds %dy (64) and %w1t (256) = 320.
// Peak at @s1.bwd microbatch 0 (action 3): h of microbatches 0 and 1 (512)
// + y (64) + dh (256) + dw1 (256) + buffer (256) + temporaries 320 = 1664,
// plus the parameters: 1920. (Microbatch 0's dh, sent at 4, stays until
// the send at 7; at @s1.bwd microbatch 1 (6) its 256 bytes take the place
// of microbatch 0's h, so the peak stays.)
// RUN: tandem-opt %S/example-2stage.mlir --mpmd-memory -o /dev/null 2>&1 | FileCheck %s --check-prefix=MLP
// MLP: remark: rank 0: peak 3328 bytes; parameters 512, copies 0, gradients 512, optimizer state 0, stash 768 (2 x 384 in flight), temporaries 516
// MLP: remark: rank 1: peak 1920 bytes; parameters 256, copies 0, gradients 256, optimizer state 0, stash 320 (1 x 320 in flight), temporaries 320
//
// mpmd-simulate ends each rank's remark with the same peak.
// RUN: tandem-opt %S/example-2stage.mlir --mpmd-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=SIM
// SIM: remark: rank 0: busy 6, idle 3, bubble 0.333333, peak in-flight microbatches 2, peak memory 3328 bytes
// SIM: remark: rank 1: busy 6, idle 3, bubble 0.333333, peak in-flight microbatches 1, peak memory 1920 bytes
//
// 2. The same program with its rank lists removed, rescheduled over m = 4:
//    1F1B keeps at most p - r microbatches on rank r (2 x 384 on rank 0,
//    1 x 320 on rank 1), GPipe all 4 on every rank (4 x 384, 4 x 320). The
//    buffers stay one per gradient however many microbatches there are.
// RUN: sed -e '/mpmd.rank [01] {/,/^  }/d' -e 's/microbatches 2/microbatches 4/' %S/example-2stage.mlir | tandem-opt --mpmd-schedule=schedule=1f1b --mpmd-lower-transfers --mpmd-memory -o /dev/null 2>&1 | FileCheck %s --check-prefix=1F1B
// 1F1B: remark: rank 0: {{.*}} gradients 512, optimizer state 0, stash 768 (2 x 384 in flight)
// 1F1B: remark: rank 1: {{.*}} gradients 256, optimizer state 0, stash 320 (1 x 320 in flight)
// RUN: sed -e '/mpmd.rank [01] {/,/^  }/d' -e 's/microbatches 2/microbatches 4/' %S/example-2stage.mlir | tandem-opt --mpmd-schedule=schedule=gpipe --mpmd-lower-transfers --mpmd-memory -o /dev/null 2>&1 | FileCheck %s --check-prefix=GPIPE
// GPIPE: remark: rank 0: {{.*}} gradients 512, optimizer state 0, stash 1536 (4 x 384 in flight)
// GPIPE: remark: rank 1: {{.*}} gradients 256, optimizer state 0, stash 1280 (4 x 320 in flight)
//
// 3. A tied weight (below): json= writes the same table.
// RUN: tandem-opt %s --mpmd-memory=json=%t.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=TIED
// RUN: FileCheck %s --check-prefix=JSON < %t.json
//
// 4. The same without sends and receives: a value another rank produces
//    arrives at its first reader, and nothing is in flight: rank 0's peak
//    loses the activation it sent (32), rank 1's does not change.
// RUN: sed -e '/mpmd.send\|mpmd.recv/d' %s | tandem-opt --mpmd-memory -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOXFER
// NOXFER: remark: rank 0: peak 352 bytes; parameters 64, copies 64, gradients 64, optimizer state 64, stash 32 (1 x 32 in flight), temporaries 32
// NOXFER: remark: rank 1: peak 192 bytes;
//
// 5. A json= file that cannot be written.
// RUN: not tandem-opt %S/example-2stage.mlir --mpmd-memory=json=%t.missing/dir/x.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOFILE
// NOFILE: error: mpmd-memory cannot write '{{.*}}x.json'

// Rank 0 owns @e (4x4 = 64, read by the prologue, the forward and the
// optimizer: a parameter) and @m.e (64, read only by the optimizer:
// optimizer state); its prologue's copy of @e (64) is held until it is sent
// (copies 64). Stash: the input slice x (2x4 = 32) read again by @s0.bwd.
// The activation y sent at 3 stays in flight to the end (no later send,
// receive or collective to wait before). Peak at @s0.bwd (action 5): x 32 +
// received dh 32 + y 32 + the gradient 64 + its buffer 64 + temporaries
// (%xt, 32) = 256, plus 128 persistent = 384. The
// optimizer's results update @e and @m.e in place and cost nothing more.
// Rank 1 binds no parameter; the copy of @e it receives from its owner
// (64) is a parameter copy, held until @s1.bwd, its last reader. Peak at
// @s1.bwd (action 3): copy 64 + stashed y 32 + dh 32 + temporaries (%et,
// 64) = 192.
// TIED: remark: rank 0: peak 384 bytes; parameters 64, copies 64, gradients 64, optimizer state 64, stash 32 (1 x 32 in flight), temporaries 32
// TIED: remark: rank 1: peak 192 bytes; parameters 0, copies 64, gradients 0, optimizer state 0, stash 32 (1 x 32 in flight), temporaries 64
// JSON: "program": "tied"
// JSON: "gradients": 64,
// JSON-NEXT: "optimizerState": 64,
// JSON-NEXT: "parameterCopies": 64,
// JSON-NEXT: "parameters": 64,
// JSON-NEXT: "peak": 384,
// JSON-NEXT: "peakInFlight": 1,
// JSON-NEXT: "rank": 0,
// JSON-NEXT: "stash": 32,
// JSON-NEXT: "stashPerMicrobatch": 32,
// JSON-NEXT: "temporaries": 32
// JSON: "peak": 192,

nn.parameter @e : tensor<4x4xf32> = normal(0.1)
nn.parameter @m.e : tensor<4x4xf32> = zeros

mpmd.program @tied stages 2 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @s0.prologue stage 0 chunk 0 kind step_prologue
      (%e: tensor<4x4xf32> {mpmd.param = @e}) -> tensor<4x4xf32> {
    mpmd.yield %e : tensor<4x4xf32>
  }
  mpmd.fragment @s0.fwd stage 0 chunk 0 kind fwd
      (%x: tensor<2x4xf32> {mpmd.input = 0 : i64},
       %e: tensor<4x4xf32> {mpmd.param = @e}) -> tensor<2x4xf32> {
    %h = nn.matmul %x, %e : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    mpmd.yield %h : tensor<2x4xf32>
  }
  mpmd.fragment @s1.fwd stage 1 chunk 0 kind fwd
      (%h: tensor<2x4xf32>, %e: tensor<4x4xf32>)
      -> (tensor<f32>, tensor<2x4xf32>) {
    %y = nn.matmul %h, %e : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    %l = nn.reduce_sum %y [0, 1] : tensor<2x4xf32> -> tensor<f32>
    mpmd.yield %l, %y : tensor<f32>, tensor<2x4xf32>
  }
  mpmd.fragment @s1.bwd stage 1 chunk 0 kind bwd
      (%y: tensor<2x4xf32>, %e: tensor<4x4xf32>) -> tensor<2x4xf32> {
    %et = nn.transpose %e, [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
    %dh = nn.matmul %y, %et : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    mpmd.yield %dh : tensor<2x4xf32>
  }
  mpmd.fragment @s0.bwd stage 0 chunk 0 kind bwd
      (%dh: tensor<2x4xf32>, %x: tensor<2x4xf32> {mpmd.input = 0 : i64})
      -> tensor<4x4xf32> {
    %xt = nn.transpose %x, [1, 0] : tensor<2x4xf32> -> tensor<4x2xf32>
    %g = nn.matmul %xt, %dh : tensor<4x2xf32>, tensor<2x4xf32> -> tensor<4x4xf32>
    mpmd.yield %g : tensor<4x4xf32>
  }
  mpmd.fragment @s0.opt stage 0 chunk 0 kind optimizer
      (%g: tensor<4x4xf32>, %e: tensor<4x4xf32> {mpmd.param = @e},
       %m: tensor<4x4xf32> {mpmd.param = @m.e})
      -> (tensor<4x4xf32> {mpmd.update = @e},
          tensor<4x4xf32> {mpmd.update = @m.e}) {
    %m2 = nn.add %m, %g : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    %e2 = nn.sub %e, %m2 : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    mpmd.yield %e2, %m2 : tensor<4x4xf32>, tensor<4x4xf32>
  }
  mpmd.transfer @s0.prologue[0] -> @s1.fwd[1] : tensor<4x4xf32>
  mpmd.transfer @s0.prologue[0] -> @s1.bwd[1] : tensor<4x4xf32>
  mpmd.transfer @s0.fwd[0] -> @s1.fwd[0] : tensor<2x4xf32>
  mpmd.transfer @s1.fwd[1] -> @s1.bwd[0] : tensor<2x4xf32>
  mpmd.transfer @s1.bwd[0] -> @s0.bwd[0] : tensor<2x4xf32>
  mpmd.transfer @s0.bwd[0] -> @s0.opt[0] : tensor<4x4xf32>
  mpmd.rank 0 {
    mpmd.run @s0.prologue
    mpmd.send @s0.prologue[0] to 1 channel 0 : tensor<4x4xf32> wire f32
    mpmd.run @s0.fwd microbatch 0
    mpmd.send @s0.fwd[0] microbatch 0 to 1 channel 1 : tensor<2x4xf32> wire f32
    mpmd.recv @s1.bwd[0] microbatch 0 from 1 channel 2 : tensor<2x4xf32> wire f32
    mpmd.run @s0.bwd microbatch 0
    mpmd.run @s0.opt
  }
  mpmd.rank 1 {
    mpmd.recv @s0.prologue[0] from 0 channel 0 : tensor<4x4xf32> wire f32
    mpmd.recv @s0.fwd[0] microbatch 0 from 0 channel 1 : tensor<2x4xf32> wire f32
    mpmd.run @s1.fwd microbatch 0
    mpmd.run @s1.bwd microbatch 0
    mpmd.send @s1.bwd[0] microbatch 0 to 0 channel 2 : tensor<2x4xf32> wire f32
  }
}

