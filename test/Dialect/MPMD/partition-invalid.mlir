// RUN: tandem-opt %s -split-input-file -verify-diagnostics --mpmd-partition="function=f stages=2 microbatches=2"
// RUN: not tandem-opt %s -split-input-file --mpmd-partition="function=f stages=0" 2>&1 | FileCheck %s --check-prefix=GRID
// RUN: not tandem-opt %s -split-input-file --mpmd-partition="function=nope" 2>&1 | FileCheck %s --check-prefix=NOFN
// RUN: not tandem-opt %s -split-input-file --mpmd-partition="function=f program=f" 2>&1 | FileCheck %s --check-prefix=TAKEN
// RUN: not tandem-opt %s -split-input-file --mpmd-partition="function=f stages=4 chunks=2" 2>&1 | FileCheck %s --check-prefix=FEW

// Every diagnostic of mpmd-partition.

// GRID: error: mpmd-partition: stages, chunks and microbatches must be at least 1, found stages=0 chunks=1 microbatches=1
// NOFN: error: mpmd-partition: no function @nope to partition
// TAKEN: error: mpmd-partition: the module already has a symbol @f
// FEW: error: mpmd-partition: the nn.stage_end markers cut @f into 2 stage(s), fewer than the 8 virtual stages (4 stages x 2 chunks) requested; add markers or use fewer stages

func.func @f(%x: tensor<2x4xf32>) -> tensor<f32> {
  %a = nn.relu %x : tensor<2x4xf32>
  %a1 = nn.stage_end %a : tensor<2x4xf32>
  %l = nn.reduce_sum %a1 [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// expected-error@+1 {{mpmd-partition: @f must have a body of one block (found a declaration or several blocks)}}
func.func private @f(%x: tensor<2x4xf32>) -> tensor<f32>

// -----

// expected-error@+1 {{mpmd-partition: input #0 of @f is 'tensor<f32>'; expected a statically shaped tensor with a batch dimension (the function's inputs are one microbatch)}}
func.func @f(%x: tensor<f32>) -> tensor<f32> {
  %y = nn.neg %x : tensor<f32>
  return %y : tensor<f32>
}

// -----

nn.parameter @w : tensor<4xf32> = zeros
// expected-error@+1 {{mpmd-partition: 'nn.updates' of @f names 1 parameters for 1 results (expected the loss, then one result per name)}}
func.func @f(%x: tensor<2x4xf32>) -> tensor<f32> attributes {nn.updates = [@w]} {
  %l = nn.reduce_sum %x [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// expected-error@+1 {{mpmd-partition: 'nn.updates' entry @w does not name an nn.parameter}}
func.func @f(%x: tensor<2x4xf32>) -> (tensor<f32>, tensor<4xf32>) attributes {nn.updates = [@w]} {
  %l = nn.reduce_sum %x [0, 1] : tensor<2x4xf32> -> tensor<f32>
  %c = nn.constant dense<0.0> : tensor<4xf32>
  return %l, %c : tensor<f32>, tensor<4xf32>
}

// -----

func.func @f(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-note@+1 {{computed here}}
  %s = nn.reduce_sum %x [0, 1] {nn.optimizer} : tensor<2x4xf32> -> tensor<f32>
  // expected-error@+1 {{mpmd-partition: this op runs once per microbatch but uses a value computed once per step}}
  %y = nn.mul %x, %s : tensor<2x4xf32>, tensor<f32> -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

func.func @f(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-note@+1 {{computed here}}
  %g = nn.neg %x {nn.grad = #nn.grad<B, of = 0>} : tensor<2x4xf32>
  // expected-error@+1 {{mpmd-partition: this forward op uses a gradient (a value of the backward pass)}}
  %y = nn.relu %g : tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

func.func @f(%x: tensor<2x4xf32>) -> tensor<f32> {
  // expected-error@+1 {{mpmd-partition: uses input #0 of the function once per step (inputs are per microbatch)}}
  %s = nn.reduce_sum %x [0, 1] {nn.optimizer} : tensor<2x4xf32> -> tensor<f32>
  return %s : tensor<f32>
}

// -----

func.func @f(%x: tensor<2x4xf32>, %t: tensor<2xi32>) -> tensor<2xi32> {
  %y = nn.reduce_max %x [1] : tensor<2x4xf32> -> tensor<2xf32>
  %i = nn.cast %t : tensor<2xi32> to tensor<2xi32>
  // expected-error@+1 {{mpmd-partition: needs the per-microbatch value of type 'tensor<2xi32>' once per step, but only floating-point values can be averaged over microbatches}}
  return %i : tensor<2xi32>
}

// -----

func.func @f(%x: tensor<2x4xf32>) -> tensor<f32> {
  %a = nn.relu %x : tensor<2x4xf32>
  // expected-error@+1 {{mpmd-partition: 'mpmd.stage' = 2 is not a virtual stage of the grid (expected [0, 2))}}
  %b = nn.tanh %a {mpmd.stage = 2 : i64} : tensor<2x4xf32>
  %l = nn.reduce_sum %b [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func @f(%x: tensor<2x4xf32>) -> tensor<f32> {
  %a = nn.relu %x {mpmd.stage = 1 : i64} : tensor<2x4xf32>
  // expected-error@+1 {{mpmd-partition: 'mpmd.stage' places this op on virtual stage 0, but it uses a value from virtual stage 1 (forward values only flow to later stages)}}
  %b = nn.tanh %a {mpmd.stage = 0 : i64} : tensor<2x4xf32>
  %l = nn.reduce_sum %b [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Two markers side by side: they do not cut the graph into a chain.
func.func @f(%x: tensor<2x4xf32>) -> tensor<f32> {
  %a = nn.relu %x : tensor<2x4xf32>
  %b = nn.tanh %x : tensor<2x4xf32>
  // expected-note@+1 {{the other marker}}
  %a1 = nn.stage_end %a : tensor<2x4xf32>
  // expected-error@+1 {{mpmd-partition: the nn.stage_end markers do not cut the graph into a chain: this marker and another one both end segment 0 (one marker per stage boundary, each after the last)}}
  %b1 = nn.stage_end %b : tensor<2x4xf32>
  %c = nn.add %a1, %b1 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %l = nn.reduce_sum %c [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A backward op on the later stage (of = 3) reading a gradient from the
// earlier one (of = 1).
func.func @f(%x: tensor<2x4xf32>) -> tensor<f32> {
  %a = nn.relu %x {nn.id = 1 : i64} : tensor<2x4xf32>
  %a1 = nn.stage_end %a {nn.id = 2 : i64} : tensor<2x4xf32>
  %b = nn.tanh %a1 {nn.id = 3 : i64} : tensor<2x4xf32>
  %g0 = nn.neg %b {nn.grad = #nn.grad<B, of = 1>} : tensor<2x4xf32>
  // expected-error@+1 {{mpmd-partition: this backward op runs on virtual stage 1 but uses a gradient computed on the earlier virtual stage 0 (backward values only flow to earlier stages)}}
  %g1 = nn.neg %g0 {nn.grad = #nn.grad<B, of = 3>} : tensor<2x4xf32>
  %l = nn.reduce_sum %g1 [0, 1] {nn.grad = #nn.grad<B, of = 1>} : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func @f(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{mpmd-partition: returns input #0 of the function unchanged; a step result must be computed}}
  return %x : tensor<2x4xf32>
}

// -----

// A user's pass places a parameter by annotating its reads; two reads on
// different stages make the placement ambiguous.
nn.parameter @w : tensor<4x4xf32> = zeros
func.func @f(%x: tensor<2x4xf32>) -> tensor<f32> {
  // expected-note@+1 {{the other read}}
  %w0 = nn.param @w {mpmd.stage = 0 : i64} : tensor<4x4xf32>
  %a = nn.matmul %x, %w0 {mpmd.stage = 0 : i64} : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  // expected-error@+1 {{mpmd-partition: the placement of parameter @w is ambiguous: this read places it on stage 1, another one on stage 0}}
  %w1 = nn.param @w {mpmd.stage = 1 : i64} : tensor<4x4xf32>
  %b = nn.matmul %a, %w1 {mpmd.stage = 1 : i64} : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %l = nn.reduce_sum %b [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

nn.parameter @w : tensor<4x4xf32> = zeros
func.func @f(%x: tensor<2x4xf32>) -> tensor<f32> {
  // expected-error@+1 {{mpmd-partition: 'mpmd.stage' = 5 is not a virtual stage of the grid (expected [0, 2))}}
  %w0 = nn.param @w {mpmd.stage = 5 : i64} : tensor<4x4xf32>
  %a = nn.matmul %x, %w0 : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %l = nn.reduce_sum %a [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
