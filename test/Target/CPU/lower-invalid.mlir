// RUN: rm -rf %t
// RUN: env TANDEM_CPU_CACHE=%t.cache tandemc lower %s -o %t -split-input-file -verify-diagnostics
// RUN: not tandemc lower %s -split-input-file 2>&1 | FileCheck %s --check-prefix=NODIR
// RUN: not tandemc lower %s -o %t --target none 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: env TANDEM_CPU_CACHE=%t.cache not tandemc lower %S/../../Dialect/MPMD/example-2stage.mlir -o %t --target cpu --cpu-arch=-O0 2>&1 | FileCheck %s --check-prefix=ARCH

// NODIR: error: no output directory given: -o DIR
// NONE: error: --target none writes no code: give a target, e.g. --target cpu
// ARCH: error: tandemc lower: rank 0: invalid CPU architecture '-O0' (--cpu-arch or TANDEM_CPU_ARCH

// expected-error @below {{tandemc lower: no mpmd.program in the module (expected a scheduled, lowered program: run mpmd-schedule, mpmd-lower-transfers and mpmd-verify before tandemc lower)}}
module {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// Not scheduled: no action lists.
nn.parameter @w : tensor<4x4xf32> = zeros
// expected-error @below {{tandemc lower: program @p has no mpmd.rank action lists (expected a scheduled, lowered program: run mpmd-schedule, mpmd-lower-transfers and mpmd-verify before tandemc lower)}}
mpmd.program @p stages 1 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @f stage 0 chunk 0 kind fwd
      (%w: tensor<4x4xf32> {mpmd.param = @w}) -> tensor<4x4xf32> {
    mpmd.yield %w : tensor<4x4xf32>
  }
}

// -----

// Scheduled, but the cross-stage transfer was not lowered to send/recv.
mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @a stage 0 chunk 0 kind fwd
      (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @b stage 1 chunk 0 kind fwd (%x: tensor<4xf32>) -> tensor<4xf32> {
    %y = nn.exp %x : tensor<4xf32>
    mpmd.yield %y : tensor<4xf32>
  }
  // expected-error @below {{tandemc lower: transfer crosses from stage 0 to stage 1, but no rank has an mpmd.send, mpmd.recv or mpmd.broadcast (expected a scheduled, lowered program}}
  mpmd.transfer @a[0] -> @b[0] : tensor<4xf32>
  mpmd.rank 0 {
    mpmd.run @a microbatch 0
  }
  mpmd.rank 1 {
    mpmd.run @b microbatch 0
  }
}

// -----

// Lowered for microbatch 0 only: rank 1 never receives microbatch 1.
mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @a stage 0 chunk 0 kind fwd
      (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @b stage 1 chunk 0 kind fwd (%x: tensor<4xf32>) -> tensor<4xf32> {
    %y = nn.exp %x : tensor<4xf32>
    mpmd.yield %y : tensor<4xf32>
  }
  mpmd.transfer @a[0] -> @b[0] : tensor<4xf32>
  mpmd.rank 0 {
    mpmd.run @a microbatch 0
    mpmd.send @a[0] microbatch 0 to 1 channel 0 : tensor<4xf32> wire f32
    mpmd.run @a microbatch 1
  }
  mpmd.rank 1 {
    mpmd.recv @a[0] microbatch 0 from 0 channel 0 : tensor<4xf32> wire f32
    mpmd.run @b microbatch 0
    // expected-error @below {{tandemc lower: rank 1 runs @b (argument 0 reads @a[0] microbatch 1), but neither produces nor receives that slot before (expected a scheduled, lowered program}}
    mpmd.run @b microbatch 1
  }
}

// -----

// A gradient accumulation needs every microbatch's slot before the step run.
mpmd.program @p stages 1 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @g stage 0 chunk 0 kind bwd
      (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.fragment @o stage 0 chunk 0 kind optimizer (%g: tensor<4xf32>) -> tensor<4xf32> {
    mpmd.yield %g : tensor<4xf32>
  }
  mpmd.transfer @g[0] -> @o[0] : tensor<4xf32>
  mpmd.rank 0 {
    mpmd.run @g microbatch 0
    // expected-error @below {{tandemc lower: rank 0 runs @o (argument 0 reads @g[0] microbatch 1), but neither produces nor receives that slot before}}
    mpmd.run @o
    mpmd.run @g microbatch 1
  }
}

// -----

// Types the emitter does not handle are its errors, at the op.
nn.parameter @w : tensor<4xf8E4M3FN> = zeros
mpmd.program @p stages 1 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @f stage 0 chunk 0 kind fwd
      (%w: tensor<4xf8E4M3FN> {mpmd.param = @w}) -> tensor<4xf8E4M3FN> {
    // expected-error @below {{'nn.exp' on 'f8E4M3FN' is not supported by the CPU emitter yet}}
    %y = nn.exp %w : tensor<4xf8E4M3FN>
    mpmd.yield %y : tensor<4xf8E4M3FN>
  }
  mpmd.rank 0 {
    mpmd.run @f microbatch 0
  }
}
