// mpmd-memory on the tiny GPT (8 layers, one marker per layer) partitioned
// for 4 stages with m = 8 and AdamW: 1F1B keeps p - r microbatches stashed
// on rank r, GPipe all 8 on every rank, and the stash is that count times
// one microbatch's stash. memory_stash.py checks the stash against a count
// of its own (the forward values transfers carry into each stage's
// backward, plus the inputs the backward rereads) and the in-flight count
// against mpmd-simulate's.
//
// RUN: tandemc models gpt --config tiny --stage-every 1 -o %t.gpt.mlir
// RUN: tandem-opt %t.gpt.mlir --nn-autodiff --nn-optimizer="optimizer=adamw clip-norm=1.0" --mpmd-partition="stages=4 microbatches=8" -o %t.part.mlir
//
// RUN: tandem-opt %t.part.mlir --mpmd-schedule=schedule=1f1b --mpmd-lower-transfers -o %t.1f1b.mlir
// RUN: tandem-opt %t.1f1b.mlir --mpmd-memory=json=%t.1f1b.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=1F1B
// RUN: tandem-opt %t.1f1b.mlir --mpmd-simulate -o /dev/null 2> %t.1f1b.sim
// RUN: %python %S/Inputs/memory_stash.py %t.1f1b.mlir %t.1f1b.json %t.1f1b.sim 4,3,2,1
// 1F1B: remark: rank 0: {{.*}} stash {{[0-9]+}} (4 x [[S0:[0-9]+]] in flight)
// 1F1B: remark: rank 1: {{.*}} stash {{[0-9]+}} (3 x [[S1:[0-9]+]] in flight)
// 1F1B: remark: rank 2: {{.*}} stash {{[0-9]+}} (2 x [[S1]] in flight)
// 1F1B: remark: rank 3: {{.*}} stash {{[0-9]+}} (1 x [[S3:[0-9]+]] in flight)
//
// GPipe: the same bytes per microbatch, 8 of them on every rank; the
// parameters, optimizer state and gradient buffers do not depend on the
// schedule.
// RUN: tandem-opt %t.part.mlir --mpmd-schedule=schedule=gpipe --mpmd-lower-transfers -o %t.gpipe.mlir
// RUN: tandem-opt %t.gpipe.mlir --mpmd-memory=json=%t.gpipe.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=GPIPE
// RUN: tandem-opt %t.gpipe.mlir --mpmd-simulate -o /dev/null 2> %t.gpipe.sim
// RUN: %python %S/Inputs/memory_stash.py %t.gpipe.mlir %t.gpipe.json %t.gpipe.sim 8
// GPIPE-COUNT-4: (8 x {{[0-9]+}} in flight)
//
// The tied embedding: rank 0 holds its prologue's copy of @wte (256x32 f32
// = 32768 bytes) until it is sent, rank 3 the copy it receives. Every
// stage computes the optimizer's scalars from @opt.step itself, so rank 0
// also sends that step counter (4 bytes) from its prologue, and ranks 1-3
// each hold the copy they receive. Rank 3 sums the embedding's gradient
// from its reading (32768) besides its own parameters' gradients.
// RUN: FileCheck %s --check-prefix=TIED < %t.1f1b.json
// TIED: "parameterCopies": 32772,
// TIED: "rank": 0,
// TIED: "parameterCopies": 4,
// TIED: "rank": 1,
// TIED: "parameterCopies": 4,
// TIED: "rank": 2,
// TIED: "gradients": 134660,
// TIED: "parameterCopies": 32772,
// TIED-NEXT: "parameters": 101888,
