// tandemc lower on the hand-written 2-stage pipeline: one C++ source,
// library and manifest per rank. The manifest lists the parameters a rank
// binds with their initializers, the step inputs, each fragment's entry
// point and bindings (a stash, a received activation, gradients summed over
// the microbatches into the optimizer), and the action list in order; the
// library exports exactly the symbols the manifest names.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: env TANDEM_CPU_CACHE=%t/cache tandemc lower %S/../../Dialect/MPMD/example-2stage.mlir -o %t/out 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --check-prefix=RANK0 --input-file=%t/out/rank0.json
// RUN: FileCheck %s --check-prefix=RANK1 --input-file=%t/out/rank1.json
// RUN: FileCheck %s --check-prefix=SRC1 --input-file=%t/out/rank1.cpp
// RUN: %python %S/Inputs/check_manifest.py %t/out 0 llvm-nm | FileCheck %s --check-prefix=SYMS0
// RUN: %python %S/Inputs/check_manifest.py %t/out 1 llvm-nm | FileCheck %s --check-prefix=SYMS1
// RUN: %python %S/Inputs/check_memory_plan.py %t/out 0 | FileCheck %s --check-prefix=PLAN0
// RUN: %python %S/Inputs/check_memory_plan.py %t/out 1 | FileCheck %s --check-prefix=PLAN1
//
// The split form gives the same files; the second lowering finds both
// libraries in the cache.
// RUN: tandem-opt %S/../../Dialect/MPMD/example-2stage.mlir --mpmd-split-programs | env TANDEM_CPU_CACHE=%t/cache tandemc lower -o %t/split 2>&1 | FileCheck %s --check-prefix=CACHED
// RUN: cmp %t/out/rank0.json %t/split/rank0.json
// RUN: cmp %t/out/rank1.json %t/split/rank1.json
// RUN: cmp %t/out/rank1.cpp %t/split/rank1.cpp

// REMARK: remark: tandemc lower: rank 0: {{.*}}out/rank0.so, {{.*}}out/rank0.json{{$}}
// REMARK: remark: tandemc lower: rank 1: {{.*}}out/rank1.so, {{.*}}out/rank1.json{{$}}
// CACHED: remark: tandemc lower: rank 0: {{.*}}split/rank0.so, {{.*}}split/rank0.json (cached library)
// CACHED: remark: tandemc lower: rank 1: {{.*}}split/rank1.so, {{.*}}split/rank1.json (cached library)

// RANK0:      "format": "tandem-rank-v2",
// RANK0-NEXT: "program": "mlp",
// RANK0-NEXT: "library": "rank0.so",
// RANK0-NEXT: "source": "rank0.cpp",
// RANK0-NEXT: "target": {
// RANK0-NEXT:   "kind": "cpu",
// RANK0-NEXT:   "arch": "{{[a-z0-9-]+}}",
// RANK0-NEXT:   "features": [{{.*}}],
// RANK0-NEXT:   "alignment": 64
// RANK0-NEXT: },
// RANK0-NEXT: "grid": {
// RANK0-NEXT:   "stages": 2,
// RANK0-NEXT:   "chunks": 1,
// RANK0-NEXT:   "replicas": 1,
// RANK0-NEXT:   "microbatches": 2,
// RANK0-NEXT:   "rank": 0,
// RANK0-NEXT:   "stage": 0,
// RANK0-NEXT:   "replica": 0
// RANK0-NEXT: },
// RANK0-NEXT: "parameters": [
// RANK0-NEXT:   {"name":"w0","dtype":"f32","shape":[8,16],"bytes":512,"init":{"kind":"normal","a":0.1,"b":0},"updated":false,"space":"host"}
// RANK0-NEXT: ],
// RANK0-NEXT: "inputs": [
// RANK0-NEXT:   {"index":0,"dtype":"f32","microbatch_shape":[4,8],"step_shape":[8,8],"microbatch_bytes":128,"role":"other","space":"host"}
// RANK0-NEXT: ],
// RANK0-NEXT: "outputs": [],
// RANK0-NEXT: "fragments": [
// RANK0-NEXT:   {
// RANK0-NEXT:     "name": "s0.fwd",
// RANK0-NEXT:     "symbol": "[[FWD0:tandem_fwd_[0-9a-f]+]]",
// RANK0-NEXT:     "scratch_symbol": "[[FWD0]]_scratch_bytes",
// RANK0-NEXT:     "kind": "fwd",
// RANK0-NEXT:     "per_microbatch": true,
// RANK0-NEXT:     "stage": 0,
// RANK0-NEXT:     "chunk": 0,
// RANK0-NEXT:     "scratch_bytes": 0,
// RANK0-NEXT:     "arguments": [
// RANK0-NEXT:       {"dtype":"f32","shape":[4,8],"bytes":128,"input":0},
// RANK0-NEXT:       {"dtype":"f32","shape":[8,16],"bytes":512,"param":"w0"}
// RANK0-NEXT:     ],
// RANK0-NEXT:     "results": [
// RANK0-NEXT:       {"dtype":"f32","shape":[4,16],"bytes":256},
// RANK0-NEXT:       {"dtype":"f32","shape":[4,16],"bytes":256}
// RANK0-NEXT:     ]
// RANK0-NEXT:   },
// RANK0:          "name": "s0.bwd",
// RANK0:          "arguments": [
// RANK0-NEXT:       {"dtype":"f32","shape":[4,16],"bytes":256,"slot":{"fragment":"s1.bwd","result":0},"rule":"same_microbatch","local":false},
// RANK0-NEXT:       {"dtype":"f32","shape":[4,16],"bytes":256,"slot":{"fragment":"s0.fwd","result":1},"rule":"same_microbatch","local":true},
// RANK0-NEXT:       {"dtype":"f32","shape":[4,8],"bytes":128,"input":0}
// RANK0-NEXT:     ],
// RANK0:          "name": "s0.opt",
// RANK0:          "kind": "optimizer",
// RANK0-NEXT:     "per_microbatch": false,
// RANK0:          "arguments": [
// RANK0-NEXT:       {"dtype":"f32","shape":[8,16],"bytes":512,"slot":{"fragment":"s0.bwd","result":0},"rule":"sum_microbatches","local":true,"accumulated_by":"runtime"},
// RANK0-NEXT:       {"dtype":"f32","shape":[8,16],"bytes":512,"param":"w0"}
// RANK0-NEXT:     ],
// RANK0:      "actions": [
// RANK0-NEXT:   {"op":"run","fragment":"s0.fwd","microbatch":0},
// RANK0-NEXT:   {"op":"send","slot":{"fragment":"s0.fwd","result":0,"microbatch":0},"peer":1,"channel":0,"sequence":0,"dtype":"f32","shape":[4,16],"bytes":256,"wire":"f32"},
// RANK0-NEXT:   {"op":"run","fragment":"s0.fwd","microbatch":1},
// RANK0-NEXT:   {"op":"send","slot":{"fragment":"s0.fwd","result":0,"microbatch":1},"peer":1,"channel":0,"sequence":1,"dtype":"f32","shape":[4,16],"bytes":256,"wire":"f32"},
// RANK0-NEXT:   {"op":"recv","slot":{"fragment":"s1.bwd","result":0,"microbatch":0},"peer":1,"channel":1,"sequence":0,"dtype":"f32","shape":[4,16],"bytes":256,"wire":"f32"},
// RANK0-NEXT:   {"op":"run","fragment":"s0.bwd","microbatch":0},
// RANK0-NEXT:   {"op":"recv","slot":{"fragment":"s1.bwd","result":0,"microbatch":1},"peer":1,"channel":1,"sequence":1,"dtype":"f32","shape":[4,16],"bytes":256,"wire":"f32"},
// RANK0-NEXT:   {"op":"run","fragment":"s0.bwd","microbatch":1},
// RANK0-NEXT:   {"op":"run","fragment":"s0.opt"}
// RANK0-NEXT: ],

// The memory plan: one arena, each buffer live from the action defining it
// to its last reader (docs/memory-plan.md). A sent slot lives until the
// rank waits for its send, before its next post (docs/pipeline-eval.md,
// "Posting and waiting"): the send at 1 until 2, the send at 3 (one group
// with the receive at 4) until 5, over microbatch 0's backward; the
// stashed s0.fwd[1] lives until its backward; each microbatch's gradient
// only during its backward, which adds it to s0.opt's sum (the accumulator,
// live from the first backward at 5 to s0.opt at 8); s0.opt's result, which
// nothing reads here, only during its run. With only 2 microbatches the sum
// costs more than it saves: the arena peaks at 5, where the sum, the stash
// of microbatch 1 and its send in flight are live together. Both gradients
// and s0.opt's result reuse microbatch 0's activation's bytes at offset 0.
// RANK0-NEXT: "memory": {
// RANK0-NEXT:   "space": "host",
// RANK0-NEXT:   "alignment": 64,
// RANK0-NEXT:   "arena_bytes": 2432,
// RANK0-NEXT:   "naive_bytes": 4352,
// RANK0-NEXT:   "buffers": [
// RANK0-NEXT:     {"kind":"slot","fragment":"s0.fwd","result":0,"microbatch":0,"offset":0,"bytes":256,"first":0,"last":2},
// RANK0-NEXT:     {"kind":"slot","fragment":"s0.fwd","result":1,"microbatch":0,"offset":1408,"bytes":256,"first":0,"last":5},
// RANK0-NEXT:     {"kind":"slot","fragment":"s0.fwd","result":0,"microbatch":1,"offset":1664,"bytes":256,"first":2,"last":5},
// RANK0-NEXT:     {"kind":"slot","fragment":"s0.fwd","result":1,"microbatch":1,"offset":1920,"bytes":256,"first":2,"last":7},
// RANK0-NEXT:     {"kind":"slot","fragment":"s1.bwd","result":0,"microbatch":0,"offset":2176,"bytes":256,"first":3,"last":5},
// RANK0-NEXT:     {"kind":"scratch","action":5,"offset":1024,"bytes":384,"first":5,"last":5},
// RANK0-NEXT:     {"kind":"slot","fragment":"s0.bwd","result":0,"microbatch":0,"offset":0,"bytes":512,"first":5,"last":5},
// RANK0-NEXT:     {"kind":"slot","fragment":"s1.bwd","result":0,"microbatch":1,"offset":1408,"bytes":256,"first":6,"last":7},
// RANK0-NEXT:     {"kind":"scratch","action":7,"offset":1024,"bytes":384,"first":7,"last":7},
// RANK0-NEXT:     {"kind":"slot","fragment":"s0.bwd","result":0,"microbatch":1,"offset":0,"bytes":512,"first":7,"last":7},
// RANK0-NEXT:     {"kind":"accumulator","action":8,"argument":0,"offset":512,"bytes":512,"first":5,"last":8},
// RANK0-NEXT:     {"kind":"slot","fragment":"s0.opt","result":0,"offset":0,"bytes":512,"first":8,"last":8}
// RANK0-NEXT:   ]
// RANK0-NEXT: },
// mpmd-memory's analysis of the rank, for tandem-run's summary (the numbers
// of its remark in docs/mpmd.md, "Memory analysis").
// RANK0-NEXT: "predicted_memory": {
// RANK0-NEXT:   "analysis": "mpmd-memory",
// RANK0-NEXT:   "peak_bytes": 3328,
// RANK0-NEXT:   "parameters": 512,
// RANK0-NEXT:   "parameter_copies": 0,
// RANK0-NEXT:   "optimizer_state": 0,
// RANK0-NEXT:   "gradients": 512,
// RANK0-NEXT:   "stash": 768,
// RANK0-NEXT:   "stash_per_microbatch": 384,
// RANK0-NEXT:   "peak_in_flight": 2,
// RANK0-NEXT:   "temporaries": 516
// RANK0-NEXT: }
// RANK0-NEXT: }

// RANK1:      "rank": 1,
// RANK1-NEXT: "stage": 1,
// RANK1:      "parameters": [
// RANK1-NEXT:   {"name":"w1","dtype":"f32","shape":[16,4],"bytes":256,"init":{"kind":"normal","a":0.1,"b":0},"updated":false,"space":"host"}
// RANK1-NEXT: ],
// RANK1-NEXT: "inputs": [],
// RANK1:          "name": "s1.fwd",
// RANK1:          "arguments": [
// RANK1-NEXT:       {"dtype":"f32","shape":[4,16],"bytes":256,"slot":{"fragment":"s0.fwd","result":0},"rule":"same_microbatch","local":false},
// RANK1:          "results": [
// RANK1-NEXT:       {"dtype":"f32","shape":[],"bytes":4},
// RANK1:      "actions": [
// RANK1-NEXT:   {"op":"recv","slot":{"fragment":"s0.fwd","result":0,"microbatch":0},"peer":0,"channel":0,"sequence":0,
// RANK1-NEXT:   {"op":"run","fragment":"s1.fwd","microbatch":0},
// RANK1-NEXT:   {"op":"recv","slot":{"fragment":"s0.fwd","result":0,"microbatch":1},"peer":0,"channel":0,"sequence":1,
// RANK1-NEXT:   {"op":"run","fragment":"s1.bwd","microbatch":0},
// RANK1-NEXT:   {"op":"send","slot":{"fragment":"s1.bwd","result":0,"microbatch":0},"peer":0,"channel":1,"sequence":0,
// RANK1-NEXT:   {"op":"run","fragment":"s1.fwd","microbatch":1},
// RANK1-NEXT:   {"op":"run","fragment":"s1.bwd","microbatch":1},
// RANK1-NEXT:   {"op":"send","slot":{"fragment":"s1.bwd","result":0,"microbatch":1},"peer":0,"channel":1,"sequence":1,
// RANK1-NEXT:   {"op":"run","fragment":"s1.opt"}
// RANK1-NEXT: ]

// Only the rank's own fragments are in its source, named by kind and code.
// SRC1-COUNT-3: extern "C" int tandem_{{fwd|bwd|optimizer}}_{{[0-9a-f]+}}(
// SRC1-NOT: extern "C" int

// PLAN0: rank 0: arena 2432, naive 4352, stash 2
// PLAN1: rank 1: arena {{[0-9]+}}, naive {{[0-9]+}}, stash {{[0-9]+}}

// SYMS0: rank 0: 3 fragments, 1 parameters, 9 actions, symbols ok
// SYMS1: rank 1: 3 fragments, 1 parameters, 9 actions, symbols ok
