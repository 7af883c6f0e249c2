// mpmd-memory's diagnostics.
// RUN: tandem-opt %s -split-input-file --mpmd-memory -verify-diagnostics -o /dev/null

// A program that is not scheduled yet has nothing to walk.
// expected-error @below {{'mpmd.program' op has no mpmd.rank action lists; the memory analysis needs a scheduled program (run mpmd-schedule first)}}
mpmd.program @unscheduled stages 1 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @f stage 0 chunk 0 kind fwd
      (%x: tensor<2xf32> {mpmd.input = 0 : i64}) -> tensor<2xf32> {
    mpmd.yield %x : tensor<2xf32>
  }
}
