// mpmd-schedule on small programs (Inputs/chain-*.mlir: a chain of virtual
// stages with fwd, bwd or bwd_input/bwd_weight, optimizer fragments, a step
// prologue on stage 0 and a step epilogue on the last stage), the microbatch
// count set with sed. Prologues open a rank's list; optimizers, then
// epilogues close it.

// RUN: sed 's/microbatches 4/microbatches 2/' %S/Inputs/chain-2x1.mlir | tandem-opt --mpmd-schedule=schedule=gpipe | FileCheck %s --check-prefix=GPIPE
// RUN: sed 's/microbatches 4/microbatches 4/' %S/Inputs/chain-4x1.mlir | tandem-opt --mpmd-schedule=schedule=1f1b | FileCheck %s --check-prefix=ONEF
// RUN: sed 's/microbatches 4/microbatches 3/' %S/Inputs/chain-2x1-split.mlir | tandem-opt --mpmd-schedule=schedule=zb-h1 | FileCheck %s --check-prefix=ZB
// RUN: sed 's/microbatches 4/microbatches 2/' %S/Inputs/chain-2x1-split.mlir | tandem-opt --mpmd-schedule=schedule=1f1b | FileCheck %s --check-prefix=SPLIT
// RUN: tandem-opt %S/Inputs/chain-2x2.mlir --mpmd-schedule=schedule=interleaved-1f1b | FileCheck %s --check-prefix=INTER
// RUN: sed 's/microbatches 4/microbatches 2/' %S/Inputs/chain-2x2.mlir | tandem-opt --mpmd-schedule=schedule=gpipe | FileCheck %s --check-prefix=GPIPE2
// RUN: sed 's/microbatches 4/microbatches 2/; s/replicas 1/replicas 2/' %S/Inputs/chain-2x1.mlir | tandem-opt --mpmd-schedule=schedule=1f1b | FileCheck %s --check-prefix=REPL
// RUN: sed 's/microbatches 4/microbatches 2/' %S/Inputs/chain-2x1.mlir | tandem-opt --mpmd-schedule=schedule=%S/Inputs/user-2x1.sched | FileCheck %s --check-prefix=USER

// GPipe, 2 stages, m = 2: all forwards, then all backwards.
// GPIPE: mpmd.rank 0 {
// GPIPE-NEXT: mpmd.run @pro{{$}}
// GPIPE-NEXT: mpmd.run @f0 microbatch 0
// GPIPE-NEXT: mpmd.run @f0 microbatch 1
// GPIPE-NEXT: mpmd.run @b0 microbatch 0
// GPIPE-NEXT: mpmd.run @b0 microbatch 1
// GPIPE-NEXT: mpmd.run @o0{{$}}
// GPIPE-NEXT: }
// GPIPE: mpmd.rank 1 {
// GPIPE-NEXT: mpmd.run @f1 microbatch 0
// GPIPE-NEXT: mpmd.run @f1 microbatch 1
// GPIPE-NEXT: mpmd.run @b1 microbatch 0
// GPIPE-NEXT: mpmd.run @b1 microbatch 1
// GPIPE-NEXT: mpmd.run @o1{{$}}
// GPIPE-NEXT: mpmd.run @epi{{$}}
// GPIPE-NEXT: }

// 1F1B, 4 stages, m = 4: rank r warms up with 3 - r forwards.
// ONEF: mpmd.rank 0 {
// ONEF-NEXT: mpmd.run @pro{{$}}
// ONEF-NEXT: mpmd.run @f0 microbatch 0
// ONEF-NEXT: mpmd.run @f0 microbatch 1
// ONEF-NEXT: mpmd.run @f0 microbatch 2
// ONEF-NEXT: mpmd.run @f0 microbatch 3
// ONEF-NEXT: mpmd.run @b0 microbatch 0
// ONEF-NEXT: mpmd.run @b0 microbatch 1
// ONEF-NEXT: mpmd.run @b0 microbatch 2
// ONEF-NEXT: mpmd.run @b0 microbatch 3
// ONEF-NEXT: mpmd.run @o0{{$}}
// ONEF-NEXT: }
// ONEF: mpmd.rank 1 {
// ONEF-NEXT: mpmd.run @f1 microbatch 0
// ONEF-NEXT: mpmd.run @f1 microbatch 1
// ONEF-NEXT: mpmd.run @f1 microbatch 2
// ONEF-NEXT: mpmd.run @b1 microbatch 0
// ONEF-NEXT: mpmd.run @f1 microbatch 3
// ONEF-NEXT: mpmd.run @b1 microbatch 1
// ONEF-NEXT: mpmd.run @b1 microbatch 2
// ONEF-NEXT: mpmd.run @b1 microbatch 3
// ONEF-NEXT: mpmd.run @o1{{$}}
// ONEF-NEXT: }
// ONEF: mpmd.rank 2 {
// ONEF-NEXT: mpmd.run @f2 microbatch 0
// ONEF-NEXT: mpmd.run @f2 microbatch 1
// ONEF-NEXT: mpmd.run @b2 microbatch 0
// ONEF-NEXT: mpmd.run @f2 microbatch 2
// ONEF-NEXT: mpmd.run @b2 microbatch 1
// ONEF-NEXT: mpmd.run @f2 microbatch 3
// ONEF-NEXT: mpmd.run @b2 microbatch 2
// ONEF-NEXT: mpmd.run @b2 microbatch 3
// ONEF-NEXT: mpmd.run @o2{{$}}
// ONEF-NEXT: }
// ONEF: mpmd.rank 3 {
// ONEF-NEXT: mpmd.run @f3 microbatch 0
// ONEF-NEXT: mpmd.run @b3 microbatch 0
// ONEF-NEXT: mpmd.run @f3 microbatch 1
// ONEF-NEXT: mpmd.run @b3 microbatch 1
// ONEF-NEXT: mpmd.run @f3 microbatch 2
// ONEF-NEXT: mpmd.run @b3 microbatch 2
// ONEF-NEXT: mpmd.run @f3 microbatch 3
// ONEF-NEXT: mpmd.run @b3 microbatch 3
// ONEF-NEXT: mpmd.run @o3{{$}}
// ONEF-NEXT: mpmd.run @epi{{$}}
// ONEF-NEXT: }

// ZB-H1, 2 stages, m = 3: BI on the critical path, BW deferred (rank 1).
// ZB: mpmd.rank 0 {
// ZB-NEXT: mpmd.run @pro{{$}}
// ZB-NEXT: mpmd.run @f0 microbatch 0
// ZB-NEXT: mpmd.run @f0 microbatch 1
// ZB-NEXT: mpmd.run @bi0 microbatch 0
// ZB-NEXT: mpmd.run @bw0 microbatch 0
// ZB-NEXT: mpmd.run @f0 microbatch 2
// ZB-NEXT: mpmd.run @bi0 microbatch 1
// ZB-NEXT: mpmd.run @bw0 microbatch 1
// ZB-NEXT: mpmd.run @bi0 microbatch 2
// ZB-NEXT: mpmd.run @bw0 microbatch 2
// ZB-NEXT: mpmd.run @o0{{$}}
// ZB-NEXT: }
// ZB: mpmd.rank 1 {
// ZB-NEXT: mpmd.run @f1 microbatch 0
// ZB-NEXT: mpmd.run @bi1 microbatch 0
// ZB-NEXT: mpmd.run @f1 microbatch 1
// ZB-NEXT: mpmd.run @bi1 microbatch 1
// ZB-NEXT: mpmd.run @bw1 microbatch 0
// ZB-NEXT: mpmd.run @f1 microbatch 2
// ZB-NEXT: mpmd.run @bi1 microbatch 2
// ZB-NEXT: mpmd.run @bw1 microbatch 1
// ZB-NEXT: mpmd.run @bw1 microbatch 2
// ZB-NEXT: mpmd.run @o1{{$}}
// ZB-NEXT: mpmd.run @epi{{$}}
// ZB-NEXT: }

// A schedule with full backwards (B) on a program with only split ones:
// B runs bwd_input, then bwd_weight.
// SPLIT: mpmd.rank 0 {
// SPLIT-NEXT: mpmd.run @pro{{$}}
// SPLIT-NEXT: mpmd.run @f0 microbatch 0
// SPLIT-NEXT: mpmd.run @f0 microbatch 1
// SPLIT-NEXT: mpmd.run @bi0 microbatch 0
// SPLIT-NEXT: mpmd.run @bw0 microbatch 0
// SPLIT-NEXT: mpmd.run @bi0 microbatch 1
// SPLIT-NEXT: mpmd.run @bw0 microbatch 1
// SPLIT-NEXT: mpmd.run @o0{{$}}
// SPLIT-NEXT: }
// SPLIT: mpmd.rank 1 {
// SPLIT-NEXT: mpmd.run @f1 microbatch 0
// SPLIT-NEXT: mpmd.run @bi1 microbatch 0
// SPLIT-NEXT: mpmd.run @bw1 microbatch 0
// SPLIT-NEXT: mpmd.run @f1 microbatch 1
// SPLIT-NEXT: mpmd.run @bi1 microbatch 1
// SPLIT-NEXT: mpmd.run @bw1 microbatch 1
// SPLIT-NEXT: mpmd.run @o1{{$}}
// SPLIT-NEXT: mpmd.run @epi{{$}}
// SPLIT-NEXT: }

// Interleaved 1F1B, 2 stages x 2 chunks, m = 4: virtual stage c*2 + s is
// chunk c of stage s (@f2 is chunk 1 of stage 0); groups of 2 microbatches
// per chunk.
// INTER: mpmd.rank 0 {
// INTER-NEXT: mpmd.run @pro{{$}}
// INTER-NEXT: mpmd.run @f0 microbatch 0
// INTER-NEXT: mpmd.run @f0 microbatch 1
// INTER-NEXT: mpmd.run @f2 microbatch 0
// INTER-NEXT: mpmd.run @f2 microbatch 1
// INTER-NEXT: mpmd.run @f0 microbatch 2
// INTER-NEXT: mpmd.run @b2 microbatch 0
// INTER-NEXT: mpmd.run @f0 microbatch 3
// INTER-NEXT: mpmd.run @b2 microbatch 1
// INTER-NEXT: mpmd.run @f2 microbatch 2
// INTER-NEXT: mpmd.run @b0 microbatch 0
// INTER-NEXT: mpmd.run @f2 microbatch 3
// INTER-NEXT: mpmd.run @b0 microbatch 1
// INTER-NEXT: mpmd.run @b2 microbatch 2
// INTER-NEXT: mpmd.run @b2 microbatch 3
// INTER-NEXT: mpmd.run @b0 microbatch 2
// INTER-NEXT: mpmd.run @b0 microbatch 3
// INTER-NEXT: mpmd.run @o0{{$}}
// INTER-NEXT: mpmd.run @o2{{$}}
// INTER-NEXT: }
// INTER: mpmd.rank 1 {
// INTER-NEXT: mpmd.run @f1 microbatch 0
// INTER-NEXT: mpmd.run @f1 microbatch 1
// INTER-NEXT: mpmd.run @f3 microbatch 0
// INTER-NEXT: mpmd.run @b3 microbatch 0
// INTER-NEXT: mpmd.run @f3 microbatch 1
// INTER-NEXT: mpmd.run @b3 microbatch 1
// INTER-NEXT: mpmd.run @f1 microbatch 2
// INTER-NEXT: mpmd.run @b1 microbatch 0
// INTER-NEXT: mpmd.run @f1 microbatch 3
// INTER-NEXT: mpmd.run @b1 microbatch 1
// INTER-NEXT: mpmd.run @f3 microbatch 2
// INTER-NEXT: mpmd.run @b3 microbatch 2
// INTER-NEXT: mpmd.run @f3 microbatch 3
// INTER-NEXT: mpmd.run @b3 microbatch 3
// INTER-NEXT: mpmd.run @b1 microbatch 2
// INTER-NEXT: mpmd.run @b1 microbatch 3
// INTER-NEXT: mpmd.run @o1{{$}}
// INTER-NEXT: mpmd.run @o3{{$}}
// INTER-NEXT: mpmd.run @epi{{$}}
// INTER-NEXT: }

// GPipe with 2 chunks: forwards chunk by chunk, backwards last chunk first.
// GPIPE2: mpmd.rank 0 {
// GPIPE2-NEXT: mpmd.run @pro{{$}}
// GPIPE2-NEXT: mpmd.run @f0 microbatch 0
// GPIPE2-NEXT: mpmd.run @f0 microbatch 1
// GPIPE2-NEXT: mpmd.run @f2 microbatch 0
// GPIPE2-NEXT: mpmd.run @f2 microbatch 1
// GPIPE2-NEXT: mpmd.run @b2 microbatch 0
// GPIPE2-NEXT: mpmd.run @b2 microbatch 1
// GPIPE2-NEXT: mpmd.run @b0 microbatch 0
// GPIPE2-NEXT: mpmd.run @b0 microbatch 1
// GPIPE2-NEXT: mpmd.run @o0{{$}}
// GPIPE2-NEXT: mpmd.run @o2{{$}}
// GPIPE2-NEXT: }
// GPIPE2: mpmd.rank 1 {
// GPIPE2-NEXT: mpmd.run @f1 microbatch 0
// GPIPE2-NEXT: mpmd.run @f1 microbatch 1
// GPIPE2-NEXT: mpmd.run @f3 microbatch 0
// GPIPE2-NEXT: mpmd.run @f3 microbatch 1
// GPIPE2-NEXT: mpmd.run @b3 microbatch 0
// GPIPE2-NEXT: mpmd.run @b3 microbatch 1
// GPIPE2-NEXT: mpmd.run @b1 microbatch 0
// GPIPE2-NEXT: mpmd.run @b1 microbatch 1
// GPIPE2-NEXT: mpmd.run @o1{{$}}
// GPIPE2-NEXT: mpmd.run @o3{{$}}
// GPIPE2-NEXT: mpmd.run @epi{{$}}
// GPIPE2-NEXT: }

// Two replicas: ranks 2 and 3 run stages 0 and 1 like ranks 0 and 1.
// REPL: mpmd.rank 0 {
// REPL-NEXT: mpmd.run @pro{{$}}
// REPL-NEXT: mpmd.run @f0 microbatch 0
// REPL-NEXT: mpmd.run @f0 microbatch 1
// REPL-NEXT: mpmd.run @b0 microbatch 0
// REPL-NEXT: mpmd.run @b0 microbatch 1
// REPL-NEXT: mpmd.run @o0{{$}}
// REPL-NEXT: }
// REPL: mpmd.rank 1 {
// REPL-NEXT: mpmd.run @f1 microbatch 0
// REPL-NEXT: mpmd.run @b1 microbatch 0
// REPL-NEXT: mpmd.run @f1 microbatch 1
// REPL-NEXT: mpmd.run @b1 microbatch 1
// REPL-NEXT: mpmd.run @o1{{$}}
// REPL-NEXT: mpmd.run @epi{{$}}
// REPL-NEXT: }
// REPL: mpmd.rank 2 {
// REPL-NEXT: mpmd.run @pro{{$}}
// REPL-NEXT: mpmd.run @f0 microbatch 0
// REPL-NEXT: mpmd.run @f0 microbatch 1
// REPL-NEXT: mpmd.run @b0 microbatch 0
// REPL-NEXT: mpmd.run @b0 microbatch 1
// REPL-NEXT: mpmd.run @o0{{$}}
// REPL-NEXT: }
// REPL: mpmd.rank 3 {
// REPL-NEXT: mpmd.run @f1 microbatch 0
// REPL-NEXT: mpmd.run @b1 microbatch 0
// REPL-NEXT: mpmd.run @f1 microbatch 1
// REPL-NEXT: mpmd.run @b1 microbatch 1
// REPL-NEXT: mpmd.run @o1{{$}}
// REPL-NEXT: mpmd.run @epi{{$}}
// REPL-NEXT: }

// A user table (Inputs/user-2x1.sched).
// USER: mpmd.rank 0 {
// USER-NEXT: mpmd.run @pro{{$}}
// USER-NEXT: mpmd.run @f0 microbatch 0
// USER-NEXT: mpmd.run @f0 microbatch 1
// USER-NEXT: mpmd.run @b0 microbatch 0
// USER-NEXT: mpmd.run @b0 microbatch 1
// USER-NEXT: mpmd.run @o0{{$}}
// USER-NEXT: }
// USER: mpmd.rank 1 {
// USER-NEXT: mpmd.run @f1 microbatch 0
// USER-NEXT: mpmd.run @b1 microbatch 0
// USER-NEXT: mpmd.run @f1 microbatch 1
// USER-NEXT: mpmd.run @b1 microbatch 1
// USER-NEXT: mpmd.run @o1{{$}}
// USER-NEXT: mpmd.run @epi{{$}}
// USER-NEXT: }
