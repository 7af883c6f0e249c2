// RUN: tandem-opt %s -split-input-file --allow-unregistered-dialect --mpmd-simulate="device=%S/Inputs/toy-device.json" -verify-diagnostics -o /dev/null
//
// Options that the cost model sets cannot be given with device=.
// RUN: not tandem-opt %S/Inputs/chain-2x1.mlir --mpmd-schedule --mpmd-simulate="device=cpu f=2" 2>&1 | FileCheck %s --check-prefix=CONFLICT
// CONFLICT: error: mpmd-simulate: option f cannot be combined with device=: the cost model gives durations, payloads and links
// RUN: not tandem-opt %S/Inputs/chain-2x1.mlir --mpmd-schedule --mpmd-simulate="device=cpu bandwidth=1" 2>&1 | FileCheck %s --check-prefix=CONFLICT-LINK
// CONFLICT-LINK: error: mpmd-simulate: option bandwidth cannot be combined with device=
//
// A name that is neither a file nor a shipped description lists the known
// ones.
// RUN: not tandem-opt %S/Inputs/chain-2x1.mlir --mpmd-schedule --mpmd-simulate="device=tpu" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: mpmd-simulate: unknown device 'tpu': not a file, and no description in [{{.*}}share/tandem/devices] has that name or alias (known: cpu-2core (cpu), h100-sxm (h100), h200-sxm (h200))
//
// A description with a missing field, and a file that cannot be read.
// RUN: echo '{"name": "x", "peak_flops": {"f32": 1}, "launch_overhead": 0, "link": {"bandwidth": 1, "latency": 0}}' > %t.json
// RUN: not tandem-opt %S/Inputs/chain-2x1.mlir --mpmd-schedule --mpmd-simulate="device=%t.json" 2>&1 | FileCheck %s --check-prefix=FIELD
// FIELD: error: mpmd-simulate: {{.*}}.json: missing field 'memory_bandwidth'
// RUN: not tandem-opt %S/Inputs/chain-2x1.mlir --mpmd-schedule --mpmd-simulate="device=%t.missing.json" 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: mpmd-simulate: cannot read device description '{{.*}}.missing.json'

// An op the cost model has no rule for is named at its location.
mpmd.program @norule stages 2 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> (tensor<4xf32>) {
    // expected-error @below {{mpmd-simulate: no cost rule for op 'test.mystery'}}
    %y = "test.mystery"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    mpmd.yield %y : tensor<4xf32>
  }
  mpmd.rank 0 {
    mpmd.run @f0 microbatch 0
  }
}

// -----

// The toy device has no bf16 peak for a bf16 matmul.
mpmd.program @nopeak stages 2 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4x4xbf16> {mpmd.input = 0 : i64}) -> (tensor<4x4xbf16>) {
    // expected-error @below {{mpmd-simulate: device 'toy' has no peak_flops for bf16}}
    %y = nn.matmul %x, %x : tensor<4x4xbf16>, tensor<4x4xbf16> -> tensor<4x4xbf16>
    mpmd.yield %y : tensor<4x4xbf16>
  }
  mpmd.rank 0 {
    mpmd.run @f0 microbatch 0
  }
}

// -----

// A declaration (what mpmd-split-programs leaves of another rank's
// fragments) has no ops to cost.
mpmd.program @declared stages 2 chunks 1 replicas 1 microbatches 1 {
  // expected-error @below {{'mpmd.fragment' op has no body for mpmd-simulate's cost model (device=toy); simulate before mpmd-split-programs}}
  mpmd.fragment @f1 stage 1 chunk 0 kind fwd () -> (tensor<4xf32>) attributes {mpmd.remote}
  mpmd.fragment @f0 stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> (tensor<4xf32>) {
    mpmd.yield %x : tensor<4xf32>
  }
  mpmd.rank 0 {
    mpmd.run @f0 microbatch 0
  }
}
