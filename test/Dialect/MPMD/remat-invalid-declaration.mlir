// RUN: tandem-opt %s --mpmd-remat=policy=full -verify-diagnostics

// A rank's part of a split program names fragments of other ranks by
// declarations; mpmd-remat needs every fragment's body (it runs before
// mpmd-split-programs).
mpmd.program @split stages 2 chunks 1 replicas 1 microbatches 1 {
  // expected-error @below {{'mpmd.fragment' op is a declaration: mpmd-remat runs on the whole program, before mpmd-split-programs}}
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd () -> tensor<4x4xf32> attributes {mpmd.remote}
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd (%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
    mpmd.yield %x : tensor<4x4xf32>
  }
  mpmd.transfer @f0[0] -> @f1[0] : tensor<4x4xf32>
  mpmd.rank 1 {
    mpmd.run @f1 microbatch 0
  }
}
