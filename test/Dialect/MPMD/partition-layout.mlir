// RUN: tandem-opt %s -split-input-file --mpmd-partition="function=f stages=3 microbatches=2" | FileCheck %s --check-prefix=UNEVEN
// RUN: tandem-opt %s -split-input-file --mpmd-partition="function=f stages=2 chunks=2 microbatches=2" | FileCheck %s --check-prefix=CHUNKS
// RUN: tandem-opt %s -split-input-file --mpmd-partition="function=f stages=2 chunks=2 microbatches=2" --mpmd-schedule=schedule=interleaved-1f1b --mpmd-lower-transfers --mpmd-verify -o /dev/null

// How forward ops are placed: the markers cut the function into segments
// (4 here), which are dealt to the S·v virtual stages in order, segment j to
// virtual stage floor(j·S·v / 4), so earlier stages take the extra
// segments. Virtual stage q is stage q mod S, chunk q / S. A forward-only
// function still gets a (empty) backward fragment per position, so every
// schedule finds what it runs; its loss is averaged over microbatches.

// UNEVEN: mpmd.fragment @s0.fwd stage 0 chunk 0 kind fwd
// UNEVEN-NEXT: nn.relu
// UNEVEN-NEXT: nn.stage_end
// UNEVEN-NEXT: nn.tanh
// UNEVEN-NEXT: nn.stage_end
// UNEVEN-NEXT: mpmd.yield
// UNEVEN: mpmd.fragment @s1.fwd stage 1 chunk 0 kind fwd
// UNEVEN-NEXT: nn.exp
// UNEVEN-NEXT: nn.stage_end
// UNEVEN-NEXT: mpmd.yield
// UNEVEN: mpmd.fragment @s2.fwd stage 2 chunk 0 kind fwd
// UNEVEN-NEXT: nn.neg
// UNEVEN-NEXT: nn.reduce_sum
// UNEVEN-NEXT: mpmd.yield
// UNEVEN: mpmd.fragment @s2.bwd stage 2 chunk 0 kind bwd () {
// UNEVEN: mpmd.fragment @s2.step0 stage 2 chunk 0 kind step_epilogue (%[[L:.*]]: tensor<f32>) -> (tensor<f32> {mpmd.output = 0 : i64})
// UNEVEN: nn.div %[[L]]
// UNEVEN: mpmd.transfer @s2.fwd[0] -> @s2.step0[0] : tensor<f32>

// CHUNKS: mpmd.program @pipeline stages 2 chunks 2 replicas 1 microbatches 2
// CHUNKS: mpmd.fragment @s0.c0.fwd stage 0 chunk 0 kind fwd
// CHUNKS-NEXT: nn.relu
// CHUNKS: mpmd.fragment @s1.c0.fwd stage 1 chunk 0 kind fwd
// CHUNKS-NEXT: nn.tanh
// CHUNKS: mpmd.fragment @s0.c1.fwd stage 0 chunk 1 kind fwd
// CHUNKS-NEXT: nn.exp
// CHUNKS: mpmd.fragment @s1.c1.fwd stage 1 chunk 1 kind fwd
// CHUNKS-NEXT: nn.neg
// CHUNKS: mpmd.fragment @s1.c1.bwd stage 1 chunk 1 kind bwd
// CHUNKS: mpmd.fragment @s0.c1.bwd stage 0 chunk 1 kind bwd
// CHUNKS: mpmd.fragment @s1.c0.bwd stage 1 chunk 0 kind bwd
// CHUNKS: mpmd.fragment @s0.c0.bwd stage 0 chunk 0 kind bwd
// CHUNKS: mpmd.transfer @s0.c0.fwd[0] -> @s1.c0.fwd[0]
// CHUNKS: mpmd.transfer @s1.c0.fwd[0] -> @s0.c1.fwd[0]
// CHUNKS: mpmd.transfer @s0.c1.fwd[0] -> @s1.c1.fwd[0]
func.func @f(%x: tensor<2x4xf32>) -> tensor<f32> {
  %a = nn.relu %x : tensor<2x4xf32>
  %a1 = nn.stage_end %a : tensor<2x4xf32>
  %b = nn.tanh %a1 : tensor<2x4xf32>
  %b1 = nn.stage_end %b : tensor<2x4xf32>
  %c = nn.exp %b1 : tensor<2x4xf32>
  %c1 = nn.stage_end %c : tensor<2x4xf32>
  %d = nn.neg %c1 : tensor<2x4xf32>
  %l = nn.reduce_sum %d [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A user's partitioning pass writes `mpmd.stage` (a virtual stage) on
// forward ops instead; markers are then plain identities. Ops without an
// annotation follow their inputs. A skip connection (%a into stage 2) is
// a transfer from stage 0 to stage 2.
// UNEVEN: nn.exp %{{.*}} {mpmd.stage = 1 : i64}
// UNEVEN: mpmd.fragment @s0.fwd
// UNEVEN-NEXT: nn.relu
// UNEVEN-NEXT: nn.stage_end
// UNEVEN-NEXT: nn.tanh
// UNEVEN-NEXT: mpmd.yield
// UNEVEN: mpmd.fragment @s1.fwd
// UNEVEN-NEXT: nn.exp
// UNEVEN-NEXT: mpmd.yield
// UNEVEN: mpmd.fragment @s2.fwd
// UNEVEN-NEXT: nn.add
// UNEVEN: mpmd.transfer @s0.fwd[{{[0-9]+}}] -> @s2.fwd[{{[0-9]+}}] : tensor<2x4xf32>
func.func @f(%x: tensor<2x4xf32>) -> tensor<f32> {
  %a = nn.relu %x : tensor<2x4xf32>
  %a1 = nn.stage_end %a : tensor<2x4xf32>
  %b = nn.tanh %a1 : tensor<2x4xf32>
  %c = nn.exp %b {mpmd.stage = 1 : i64} : tensor<2x4xf32>
  %d = nn.add %c, %a {mpmd.stage = 2 : i64} : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %l = nn.reduce_sum %d [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// An annotation on a parameter read places the parameter: @w lives on stage
// 1 (its update runs there), and stage 0, which reads it, receives it from
// stage 1's prologue once per step.
// UNEVEN: nn.param @w {mpmd.stage = 1 : i64}
// UNEVEN: mpmd.fragment @s1.prologue stage 1 chunk 0 kind step_prologue (%{{.*}}: tensor<4x4xf32> {mpmd.param = @w}) -> tensor<4x4xf32>
// UNEVEN: mpmd.fragment @s0.fwd stage 0 chunk 0 kind fwd (%{{.*}}: tensor<2x4xf32> {mpmd.input = 0 : i64}, %{{.*}}: tensor<4x4xf32>)
// UNEVEN: mpmd.transfer @s1.prologue[0] -> @s0.fwd[1] : tensor<4x4xf32>
nn.parameter @w : tensor<4x4xf32> = zeros
func.func @f(%x: tensor<2x4xf32>) -> tensor<f32> {
  %w = nn.param @w {mpmd.stage = 1 : i64} : tensor<4x4xf32>
  %a = nn.matmul %x, %w {mpmd.stage = 0 : i64} : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %b = nn.tanh %a {mpmd.stage = 2 : i64} : tensor<2x4xf32>
  %l = nn.reduce_sum %b [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
