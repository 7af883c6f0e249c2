#!/usr/bin/env bash
# The GPU check (docs/runtime.md, "The GPU check"; ../shared/gpu.md): what
# only a GPU can prove about the CUDA target's libraries and the runtime's
# CUDA device, as one prepared call on the GPU machine.
#
#   scripts/gpu-check.sh --prepare   here: compiles the tiny GPT's GPU
#                                    libraries and its emulated references
#                                    into build/gpu-carry and packs it into
#                                    build/gpu-carry.tar.xz (carry that)
#   scripts/gpu-check.sh --check     there: builds the runtime alone, runs
#                                    the libraries on GPU 0 and compares
#                                    them with the emulation (4 minutes)
#   scripts/gpu-check.sh --bench     there: GPT-2 124M training throughput
#                                    against PyTorch on the same GPU, in
#                                    the same run (5 minutes)
#   scripts/gpu-check.sh --all       there: both, sharing one runtime build
#                                    (with TANDEM_GPU_CHECK_SHORT=1: no
#                                    racecheck and no PyTorch f32; about
#                                    6 minutes)
#   scripts/gpu-check.sh --profile   there: the kernel screen, then bf16
#                                    GPT-2's step time and its kernels by
#                                    time (ncu), for a short call
#
# Both write their log and summary into $OUT (default build/gpu-check) as
# they go, every step under its own timeout, and keep bulky outputs (the
# runtime's build, fragment dumps) in $WORK, since only a few files come
# back from $OUT; without a GPU they stop before the first step that needs
# one and say so. Exit status: 0 when every step passed, else the number
# of failed steps; 3 when no GPU step could run (no carry, the runtime did
# not build, or no GPU).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The main build (scripts/test.sh's TANDEM_BUILD_DIR), here and on the GPU
# machine, where it holds only the carried archive.
BUILD="${TANDEM_BUILD_DIR:-$ROOT/build}"
CARRY="$BUILD/gpu-carry"
# TANDEM_GPU_CHECK_EMULATE=1: a rehearsal here, without a GPU. --prepare
# builds every library with --cuda-emulate into build/gpu-carry-emulated,
# and --check runs them on the fake CUDA driver and the fake NCCL of the
# main build (the steps that need the real GPU, its tools or the real
# libraries are skipped and say so): the script's plumbing, paths and
# comparisons run before a GPU call spends minutes on them.
EMULATE="${TANDEM_GPU_CHECK_EMULATE:-}"
[[ -n $EMULATE ]] && CARRY="$BUILD/gpu-carry-emulated"
DATA="$ROOT/data/corpus.txt"
MODEL="$ROOT/examples/tiny-gpt.mlir"
# Steps of the chained comparison (each runs once from the emulation's
# parameters after the step before it).
CHAIN=5
# The tiny GPT's pipelines besides S = 1, each bitwise S = 1's on the one
# GPU (across_stages): sN is 1F1B on N stages, zbN ZB-H1 on N stages.
PIPELINES="s1 s2 s4 zb2 zb4"
# The models whose every fragment call of one step is compared kernel by
# kernel with the emulation's (prepare, kernels).
DUMPS="dump dump-small dump-small-bf16 dump-gqa"
# The benchmark's model and step (bench/torch_gpt.py takes the same
# numbers): GPT-2 124M, 4 microbatches of 8 sequences of 1024 tokens.
BENCH_CONFIG=gpt2-124m BENCH_BATCH=8 BENCH_SEQ=1024 BENCH_MICROBATCHES=4
# Its layers and width, for the MFU (bench/gpt_configs.py).
BENCH_LAYERS=12 BENCH_WIDTH=768
# The pipeline machinery's cost with compute shared: the small GPT with 4
# stages on the one GPU against 1 stage, bf16, 1F1B, 8 microbatches of 8
# sequences of 256 tokens.
PIPE_CONFIG=small PIPE_BATCH=8 PIPE_SEQ=256 PIPE_MICROBATCHES=8
# The rehearsal's benchmark programs are the tiny GPT's (8 layers of 32, 2
# stages of 4; 4 of its layers on 4 stages), which the host runs in
# seconds: their steps, the MFU and the pipeline's cost run end to end,
# their figures meaning nothing.
if [[ -n $EMULATE ]]; then
  BENCH_CONFIG=tiny BENCH_BATCH=2 BENCH_SEQ=64 BENCH_LAYERS=8 BENCH_WIDTH=32
  PIPE_CONFIG=tiny PIPE_BATCH=2 PIPE_SEQ=64
fi

# gpu_build DIR MODEL ARGS...: MODEL compiled by tandemc for the GPU into
# DIR, its log beside it, keeping only what the GPU run reads (manifests,
# libraries, sources).
gpu_build() {
  local dir=$1 model=$2
  shift 2
  "$BUILD/bin/tandemc" "$model" -o "$dir" --target cuda ${EMULATE:+--cuda-emulate} "$@" \
    2>"$dir.tandemc.log" || return
  rm -rf "$dir"/*.mlir "$dir/eval"
}

# pipeline_args NAME: tandemc's stages and schedule for a PIPELINES name.
pipeline_args() {
  local schedule=1f1b
  [[ $1 == zb* ]] && schedule=zb-h1
  echo "--stages ${1//[!0-9]/} --schedule $schedule"
}

prepare() {
  set -e
  local bin="$BUILD/bin"
  [[ -x "$bin/tandemc" && -x "$bin/tandem-run" ]] ||
    { echo "gpu-check --prepare: build first (scripts/setup.sh)"; exit 1; }
  rm -rf "$CARRY"
  mkdir -p "$CARRY/include"
  # The runtime's one header-only dependency, which the GPU machine lacks,
  # and googletest's sources for the runtime's unit tests there.
  cp -r /usr/include/nlohmann "$CARRY/include/"
  mkdir -p "$CARRY/googletest/googletest"
  cp /usr/src/googletest/CMakeLists.txt "$CARRY/googletest/"
  cp -r /usr/src/googletest/googletest/{CMakeLists.txt,cmake,include,src} \
    "$CARRY/googletest/googletest/"
  export TANDEM_CUDA_CACHE="$BUILD/gpu-carry-cache"
  local p c
  for p in f32 bf16; do
    # The tiny GPT on 1, 2 and 4 stages under 1F1B and on 2 and 4 under
    # ZB-H1, 8 microbatches (across_stages), and the emulated S = 1.
    for c in $PIPELINES; do
      gpu_build "$CARRY/$p-$c" "$MODEL" $(pipeline_args "$c") --microbatches 8 --precision "$p"
    done
    "$bin/tandemc" "$MODEL" -o "$CARRY/$p-s1-emu" --stages 1 --microbatches 8 \
      --precision "$p" --target cuda --cuda-emulate 2>/dev/null
    # The emulation's chain: the parameters before each step, and each
    # step's loss from them.
    local k from
    mkdir -p "$CARRY/$p-chain"
    for ((k = 0; k < CHAIN; ++k)); do
      from=()
      ((k > 0)) && from=(--params "$CARRY/$p-chain/step$k.st")
      "$bin/tandem-run" "$CARRY/$p-s1-emu" --data "$DATA" --transport inproc \
        --threads 1 --first-step "$k" --steps 1 --seed 3 "${from[@]}" \
        --save-params "$CARRY/$p-chain/step$((k + 1)).st" | grep '^step' \
        >>"$CARRY/$p-chain/emu.log"
    done
    [[ $p == f32 ]] && index_inputs "$CARRY/f32-s1-emu"
    # The parameters step 0 starts from (tandem-run's seed), for the bf16
    # bound, which bounds each step's logits from its parameters.
    "$bin/tandem-eval" "$CARRY/$p-s1-emu/pipeline.mlir" --seed 3 \
      --save-params "$CARRY/$p-chain/step0.st" >/dev/null
    rm -rf "$CARRY/$p-s1-emu"
  done
  # The bf16 @forward (after nn-mixed-precision), whose narrow roundings
  # the bf16 chain's bound counts.
  "$bin/tandemc" "$MODEL" --precision bf16 --emit=precision -o "$CARRY/bf16-forward.mlir"
  # Every fragment call of one f32 step (2 microbatches, to travel light),
  # for the kernel-by-kernel screen: the tiny GPT, one layer of the
  # small one (1 microbatch) at sequence 150, whose heads of 64 give the
  # attention kernels their gpt2-124m shapes (tiles of 64, 32 and 16) and
  # several tiles and blocks per head, the same in bf16 (the tensor-core
  # attention and the bf16 GEMMs' epilogues), and random_graph.py's seed 9,
  # whose two attention blocks are grouped-query (4 query heads on 2 key
  # heads).
  "$bin/tandemc" models gpt --config small --layers 1 --batch 1 --seq 150 -o "$CARRY/small.mlir"
  python3 "$ROOT/scripts/random_graph.py" 9 -o "$CARRY/gqa.mlir"
  local name
  for name in $DUMPS; do
    local model=$MODEL m=2
    local precision=f32
    [[ $name == dump-small* ]] && model="$CARRY/small.mlir" m=1
    [[ $name == *-bf16 ]] && precision=bf16
    [[ $name == dump-gqa ]] && model="$CARRY/gqa.mlir" m=1
    gpu_build "$CARRY/$name" "$model" --stages 1 --microbatches "$m" --precision "$precision"
    "$bin/tandemc" "$model" -o "$CARRY/$name-emu" --stages 1 --microbatches "$m" \
      --precision "$precision" --target cuda --cuda-emulate 2>/dev/null
    TANDEM_DUMP_FRAGMENTS="$CARRY/$name-emu/calls" "$bin/tandem-run" "$CARRY/$name-emu" \
      --data "$DATA" --transport inproc --threads 1 --steps 1 --seed 3 >/dev/null
    mv "$CARRY/$name-emu/calls" "$CARRY/$name-calls"
    rm -rf "$CARRY/$name-emu"
  done
  # The small GPT's optimizer step is 24 MB of parameters and moments the
  # tiny one's screen covers already: only its forward and backward travel.
  # In bf16 the same, and its prologue too (the parameters' casts to bf16,
  # 5 MB; the bf16 chain and pipelines run them).
  rm -f "$CARRY"/dump-small-bf16-calls/*.step*.safetensors "$CARRY"/dump-small-bf16-calls/*.prologue.safetensors
  rm -f "$CARRY"/dump-small-calls/*.step*.safetensors
  rm -f "$CARRY"/*/step"$CHAIN".st
  prepare_bench
  pack_carry
}

# The benchmark's programs: S = 1 in both precisions, and bf16 with two
# stages on the one GPU; the pipeline's cost at S = 1 and 4.
prepare_bench() {
  "$bin/tandemc" models gpt --config "$BENCH_CONFIG" --batch "$BENCH_BATCH" \
    --seq "$BENCH_SEQ" --stage-every $((BENCH_LAYERS / 2)) -o "$CARRY/bench.mlir"
  for p in f32-s1 bf16-s1 bf16-s2; do
    gpu_build "$CARRY/bench-$p" "$CARRY/bench.mlir" --stages "${p#*-s}" \
      --microbatches "$BENCH_MICROBATCHES" --precision "${p%-s*}"
  done
  "$bin/tandemc" models gpt --config "$PIPE_CONFIG" --layers 4 --batch "$PIPE_BATCH" \
    --seq "$PIPE_SEQ" --stage-every 1 -o "$CARRY/pipe.mlir"
  for p in small-s1 small-s4; do
    gpu_build "$CARRY/bench-$p" "$CARRY/pipe.mlir" --stages "${p#*-s}" \
      --microbatches "$PIPE_MICROBATCHES" --precision bf16
  done
}

pack_carry() {
  # One archive travels: xz takes the folder from about 70 MiB to about
  # 35 (the manifests, sources and libraries shrink; the dumps' floats
  # hardly do), under the 64 MiB a call carries.
  rm -f "$CARRY.tar.xz"
  XZ_OPT="-T0" tar -C "$(dirname "$CARRY")" -cJf "$CARRY.tar.xz" "$(basename "$CARRY")"
  du -sh "$CARRY" "$CARRY.tar.xz"
  local bytes
  bytes=$(stat -c %s "$CARRY.tar.xz")
  ((bytes < 62 * 1024 * 1024)) ||
    { echo "gpu-check --prepare: $CARRY.tar.xz is over 62 MiB: it will not travel"; exit 1; }
  echo "gpu-check --prepare: carry ${CARRY#"$ROOT"/}.tar.xz (64 MiB at most travel)"
}

# The carried archive unpacked into $WORK, where the folder itself did not
# travel; CARRY then names the unpacked folder.
unpack_carry() {
  [[ -d "$CARRY" || ! -f "$CARRY.tar.xz" ]] && return 0
  mkdir -p "$WORK"
  rm -rf "${WORK:?}/$(basename "$CARRY")"
  # Python's lzma, since the GPU machine may have no xz.
  python3 - "$CARRY.tar.xz" "$WORK" <<'PY' || return 1
import sys, tarfile
with tarfile.open(sys.argv[1]) as archive:
    try:
        archive.extractall(sys.argv[2], filter="data")
    except TypeError:  # a Python without extraction filters
        archive.extractall(sys.argv[2])
PY
  CARRY="$WORK/$(basename "$CARRY")"
  echo "unpacked $(du -sh "$CARRY" | cut -f1) of $(basename "$CARRY").tar.xz into $CARRY" |
    tee -a "$OUT/log"
}

# index_inputs EMU: step inputs with a token and a target outside their
# ranges (docs/targets.md, "Index checks"), and the error the emulated
# build EMU gives for each, which the GPU's must equal (index_checks).
index_inputs() {
  local emu=$1 f
  "$BUILD/bin/tandem-eval" "$emu/pipeline.mlir" --program pipeline \
    --seed 7 --save-inputs "$CARRY/index-in.st" >/dev/null
  python3 "$ROOT/test/Target/CUDA/Inputs/set_ids.py" "$CARRY/index-in.st" \
    "$CARRY/index-token.st" input.0:9:3=300
  python3 "$ROOT/test/Target/CUDA/Inputs/set_ids.py" "$CARRY/index-in.st" \
    "$CARRY/index-target.st" input.1:12:5=-2
  rm "$CARRY/index-in.st"
  for f in token target; do
    ! "$BUILD/bin/tandem-run" "$emu" --transport inproc \
      --inputs "$CARRY/index-$f.st" 2>&1 | grep -o "run s0.*" >"$CARRY/index-$f.expected"
    [[ -s "$CARRY/index-$f.expected" ]]
  done
}

# --check ----------------------------------------------------------------

OUT="${OUT:-$BUILD/gpu-check}"
WORK="${TMPDIR:-/tmp}/tandem-gpu-check"
failures=0

# step NAME SECONDS COMMAND...: runs one step under its timeout, its output
# in the log, its verdict in the summary.
step() {
  local name=$1 seconds=$2
  shift 2
  echo "== $name" | tee -a "$OUT/log"
  local start=$SECONDS rc
  # The step's functions run in a child shell (exported below), so the
  # timeout can end it.
  timeout "$seconds" bash -c 'set -o pipefail; "$@"' step "$@" 2>&1 | tee -a "$OUT/log"
  rc=${PIPESTATUS[0]}
  local verdict=ok
  if [[ $rc -eq 124 ]]; then verdict="timed out after ${seconds}s"; fi
  if [[ $rc -ne 0 && $rc -ne 124 ]]; then verdict="failed ($rc)"; fi
  [[ $verdict == ok ]] || failures=$((failures + 1))
  echo "$name: $verdict ($((SECONDS - start)) s)" | tee -a "$OUT/summary"
  return "$rc"
}

versions() {
  uname -a
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  command -v nvcc >/dev/null && nvcc --version | tail -2
  cmake --version | head -1
  command -v mpirun >/dev/null && mpirun --version 2>&1 | head -1 || echo "no MPI"
  command -v compute-sanitizer >/dev/null || echo "no compute-sanitizer"
  command -v ncu >/dev/null && ncu --version | tail -1
  echo "TANDEM_CUDA_LIBRARY_PATH=${TANDEM_CUDA_LIBRARY_PATH:-}"
  if [[ -n "${TANDEM_CUDA_LIBRARY_PATH:-}" ]]; then
    ls -l "${TANDEM_CUDA_LIBRARY_PATH%%:*}"/libcublasLt.so.13 "${TANDEM_CUDA_LIBRARY_PATH%%:*}"/libcudart.so.13
  else
    echo "no CUDA 13 wheels in this Python's packages: the loader's path decides"
  fi
  return 0
}

# The CUDA 13 and NCCL wheels' folders of this machine's Python, if it has
# them, as one search path.
find_cuda_libraries() {
  local site folders=()
  for site in $(python3 -c 'import site, sys; print(" ".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null); do
    [[ -e "$site/nvidia/cu13/lib/libcublasLt.so.13" ]] && folders+=("$site/nvidia/cu13/lib")
    [[ -e "$site/nvidia/nccl/lib/libnccl.so.2" ]] && folders+=("$site/nvidia/nccl/lib")
  done
  local IFS=:
  echo "${folders[*]}"
}

build_runtime() {
  cmake -S "$ROOT/runtime" -B "$WORK/runtime" -G Ninja \
    -DTANDEM_JSON_INCLUDE_DIR="$CARRY/include" \
    -DTANDEM_GTEST_SOURCE_DIR="$CARRY/googletest" >/dev/null &&
    ninja -C "$WORK/runtime" bin/tandem-run
}

# The runtime's unit tests built alone and run on the GPU machine: the
# device conformance cases against the real driver too
# (TANDEM_TEST_REAL_CUDA), the transports (over MPI where it is there).
unit_tests() {
  ninja -C "$WORK/runtime" >/dev/null &&
    TANDEM_TEST_REAL_CUDA=1 ctest --test-dir "$WORK/runtime" -j 8 \
      --output-on-failure >"$WORK/unit-tests.log" 2>&1
  local rc=$?
  if ((rc == 0)); then
    grep -E "RealCuda|tests passed" "$WORK/unit-tests.log" | tail -8
  else
    tail -40 "$WORK/unit-tests.log"
  fi
  return "$rc"
}

# run_gpu DIR STEPS [ARGS...]: the step lines of a run with every rank a
# thread on GPU 0 (tandem-run --transport inproc: no MPI); the whole output,
# summary included, in $WORK/run-gpu.log.
run_gpu() {
  local dir=$1 steps=$2
  shift 2
  "$WORK/runtime/bin/tandem-run" "$dir" --data "$DATA" --steps "$steps" \
    --seed 3 --transport inproc --device cuda "$@" >"$WORK/run-gpu.log" ||
    { tail -20 "$WORK/run-gpu.log"; return 1; }
  grep '^step' "$WORK/run-gpu.log"
}

# The real NCCL (docs/runtime.md, "NCCL"): tandem-run with one rank over
# --transport nccl loads it, checks its version and forms and finalizes a
# communicator on the GPU, in a process it starts itself (--launcher local,
# no MPI), as a thread of its own process (--launcher threads) and, where
# tandem-run was built with MPI, under mpirun; the losses are bitwise those
# of the rank run in process. (Two ranks need two GPUs: NCCL refuses two
# ranks on one device, also as threads.)
nccl_one_rank() {
  local run runs=(inproc local threads) args
  ldd "$WORK/runtime/bin/tandem-run" | grep -q libmpi && runs+=(mpirun)
  for run in "${runs[@]}"; do
    case $run in
      inproc) args=(--transport inproc) ;;
      *) args=(--transport nccl --launcher "$run") ;;
    esac
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
      "$WORK/runtime/bin/tandem-run" "$CARRY/f32-s1" --data "$DATA" --steps 3 \
      --seed 3 --device cuda "${args[@]}" >"$WORK/nccl-$run.log" 2>&1 ||
      { tail -20 "$WORK/nccl-$run.log"; return 1; }
    grep '^step' "$WORK/nccl-$run.log" | cut -d' ' -f1-4 >"$WORK/nccl-$run.loss"
  done
  grep "transport NCCL" "$WORK/nccl-local.log"
  cat "$WORK/nccl-local.loss"
  for run in "${runs[@]:1}"; do
    diff "$WORK/nccl-inproc.loss" "$WORK/nccl-$run.loss" || return 1
  done
  echo "NCCL (${runs[*]:1}) bitwise equal to the in-process run over 3 steps"
  # A rank killed during step 1 while it holds the GPU and a communicator
  # (TANDEM_RUN_KILL, as test/Runtime/nccl-fake.test does on the fakes):
  # the launcher names it and the job fails instead of hanging.
  if TANDEM_RUN_KILL=0:1 timeout 60 "$WORK/runtime/bin/tandem-run" "$CARRY/f32-s1" \
    --data "$DATA" --steps 3 --seed 3 --device cuda --transport nccl \
    --launcher local >"$WORK/nccl-killed.log" 2>&1; then
    echo "a rank killed during step 1 did not fail the job"
    return 1
  fi
  grep "rank 0 died during step 1 (killed by signal 9" "$WORK/nccl-killed.log" ||
    { tail -5 "$WORK/nccl-killed.log"; return 1; }
}

# The experiment issue 16 asks for, reported and never failing: two
# processes sharing the one GPU over the real NCCL, each presenting a host
# of its own (TANDEM_NCCL_SHARE_GPU sets NCCL_HOSTID per rank) so that NCCL
# connects them over loopback sockets instead of refusing two ranks on one
# device. NCCL does not support it; nothing depends on it.
nccl_shared_gpu() {
  local log="$WORK/nccl-shared.log"
  if TANDEM_NCCL_SHARE_GPU=1 NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1 \
    timeout 50 "$WORK/runtime/bin/tandem-run" "$CARRY/f32-s2" --data "$DATA" \
    --steps 3 --seed 3 --device cuda --transport nccl --launcher local \
    --timeout 20 >"$log" 2>&1; then
    grep '^step' "$log" | cut -d' ' -f1-4 >"$WORK/nccl-shared.loss"
    if head -3 "$OUT/f32-s2.loss" | diff - "$WORK/nccl-shared.loss"; then
      echo "worked: 2 processes on one GPU over NCCL, 3 steps bitwise the in-process S = 2 run"
    else
      echo "ran, but the losses differ from the in-process S = 2 run"
    fi
  else
    echo "did not work (rc $?): NCCL refused or hung; the last lines:"
    tail -5 "$log"
  fi
  return 0
}

# Every step once from the emulation's parameters: each loss within the
# sum of the two implementations' bounds against the evaluator.
chain() { # PRECISION [unfused]
  local p=$1 k from log=$OUT/$1-chain-gpu.log
  # unfused: every f32 GEMM epilogue through the fallback cuBLASLt's
  # heuristic would take if it offered no fused algorithm (GemmPrelude.h).
  if [[ ${2:-} == unfused ]]; then
    log=$OUT/$p-unfused-chain-gpu.log
    export TANDEM_CUDA_UNFUSED_EPILOGUES=1
  fi
  : >"$log"
  for ((k = 0; k < CHAIN; ++k)); do
    from=()
    ((k > 0)) && from=(--params "$CARRY/$p-chain/step$k.st")
    run_gpu "$CARRY/$p-s1" 1 --first-step "$k" "${from[@]}" >>"$log" || return 1
  done
  unset TANDEM_CUDA_UNFUSED_EPILOGUES
  cat "$log"
  paste -d' ' <(cut -d' ' -f4 "$log") <(cut -d' ' -f4 "$CARRY/$p-chain/emu.log") |
    awk '{printf "step %d gpu %s emulation %s relative difference %.2e\n", NR - 1, $1, $2, ($1 - $2) / $2}'
  if [[ ${2:-} == unfused ]]; then
    cmp -s "$log" "$OUT/$p-chain-gpu.log" &&
      echo "(bitwise the fused epilogues' losses)" ||
      echo "(not bitwise the fused epilogues' losses, as expected of another order)"
  fi
  if [[ $p == f32 ]]; then
    python3 "$ROOT/test/Runtime/Inputs/compare_losses.py" "$log" \
      "$CARRY/$p-chain/emu.log" "cuda+cuda:$MODEL:forward"
  else
    # The f32 arithmetic's bound on the bf16 @forward plus the narrow
    # roundings' (docs/testing.md, "Tolerances": 64 sequences a step, 8
    # microbatches of 8), each step's logits bounded from its parameters.
    python3 "$ROOT/test/Runtime/Inputs/compare_losses.py" "$log" \
      "$CARRY/$p-chain/emu.log" "cuda+cuda:$CARRY/bf16-forward.mlir:forward" \
      --narrow 64 "$CARRY/$p-chain/step{}.st"
  fi
}

# The same losses with every rank of each pipeline on the one GPU (ranks as
# threads of one tandem-run, the rank main of MPI ranks): S = 2 and 4 under
# 1F1B, 2 and 4 under ZB-H1, each bitwise S = 1's over 10 steps; the S = 2
# run's summary; the S = 2 and ZB-H1 S = 4 runs' traces' device tracks
# (CUDA events) in the order the transports' events impose
# (test/Runtime/device-trace.test's checker).
across_stages() {
  local p=$1 c trace
  [[ ${PIPELINES:-} == "s1 "?* ]] || { echo "no pipelines to compare (PIPELINES)"; return 1; }
  run_gpu "$CARRY/$p-s1" 10 | cut -d' ' -f1-4 >"$OUT/$p-s1.loss" || return 1
  cat "$OUT/$p-s1.loss"
  for c in ${PIPELINES#s1 }; do
    trace=()
    [[ $c == s2 || $c == zb4 ]] && trace=(--trace "$WORK/$p-$c-trace.json")
    run_gpu "$CARRY/$p-$c" 10 "${trace[@]}" | cut -d' ' -f1-4 >"$OUT/$p-$c.loss" || return 1
    [[ $c == s2 ]] && grep -A2 '^summary' "$WORK/run-gpu.log"
    diff "$OUT/$p-s1.loss" "$OUT/$p-$c.loss" || return 1
    echo "$p $c ($(pipeline_args "$c")): bitwise S = 1's over 10 steps"
    if ((${#trace[@]})); then
      python3 "$ROOT/test/Runtime/Inputs/check_device_trace.py" \
        "$WORK/$p-$c-trace.json" "$CARRY/$p-$c" 10 || return 1
    fi
  done
}

# Resume on the GPU: S = 2 checkpointed after 3 steps and resumed for 3
# more gives the uninterrupted 6 steps' last 3 losses and its parameters,
# bitwise (checkpoints are written from and read into device memory).
resume() {
  rm -rf "$WORK/ckpt"
  run_gpu "$CARRY/f32-s2" 6 --save-params "$WORK/straight.st" | cut -d' ' -f1-4 >"$WORK/straight.loss" &&
    run_gpu "$CARRY/f32-s2" 3 --ckpt-dir "$WORK/ckpt" --ckpt-every 3 >/dev/null &&
    run_gpu "$CARRY/f32-s2" 3 --resume "$WORK/ckpt" --save-params "$WORK/resumed.st" |
    cut -d' ' -f1-4 >"$WORK/resumed.loss" &&
    tail -3 "$WORK/straight.loss" | diff - "$WORK/resumed.loss" &&
    cmp "$WORK/straight.st" "$WORK/resumed.st" &&
    cat "$WORK/resumed.loss" &&
    echo "resumed from step 3: the last 3 losses and the parameters bitwise the uninterrupted run's"
}

# Every fragment call of step 0 on the GPU against the emulation's dump.
kernels() {
  local name
  # (A step runs in a child shell: a variable begin() does not export
  # would leave nothing to compare, and an empty screen passes nothing.)
  [[ -n ${DUMPS:-} ]] || { echo "no models to screen (DUMPS)"; return 1; }
  # A bf16 run's results differ from its emulation's by bf16 roundings
  # (the tensor cores' and cuBLASLt's sums), 2^-9 each, compounding along
  # the step: its screen is 0.1, which a misplaced fragment or row (off by
  # the values' magnitude) still fails.
  for name in $DUMPS; do
    rm -rf "$WORK/$name-calls"
    echo "$name:"
    TANDEM_DUMP_FRAGMENTS="$WORK/$name-calls" run_gpu "$CARRY/$name" 1 >/dev/null &&
      # Only the calls the reference kept (--prepare drops the small GPT's
      # optimizer step).
      for call in "$WORK/$name-calls"/*; do
        [[ -e "$CARRY/$name-calls/${call##*/}" ]] || rm "$call"
      done &&
      python3 "$ROOT/scripts/compare-dumps.py" "$CARRY/$name-calls" "$WORK/$name-calls" \
        $([[ $name == *-bf16 ]] && echo 0.1) >"$WORK/$name-compare.log"
    local rc=$?
    # The problems and the verdict; every result's error stays in $WORK.
    grep -v "relative error" "$WORK/$name-compare.log"
    ((rc == 0)) || return 1
  done
}

# A token and a target outside their ranges fail the GPU's step with the
# emulation's error (op, location, run, position, value): the kernels'
# reports in the status word, read after the step's synchronization.
index_checks() {
  local f
  for f in token target; do
    if "$WORK/runtime/bin/tandem-run" "$CARRY/f32-s1" --inputs "$CARRY/index-$f.st" \
      --transport inproc --device cuda >"$WORK/index-$f.log" 2>&1; then
      echo "a $f outside its range did not fail the step"
      return 1
    fi
    grep -o "run s0.*" "$WORK/index-$f.log" | diff "$CARRY/index-$f.expected" - || return 1
    cat "$CARRY/index-$f.expected"
  done
  echo "the GPU's reports equal the emulation's"
}

# CUDA graphs (docs/runtime.md, "CUDA graphs"): every pipeline's segments
# captured once (step 1) and replayed: the losses bitwise S = 1's without
# graphs (across_stages's 10 steps), and the step times of S = 1 and of
# the last pipeline with and without graphs.
graphs() {
  local p c last
  for p in f32 bf16; do
    for c in $PIPELINES; do
      run_gpu "$CARRY/$p-$c" 10 --cuda-graphs >"$WORK/$p-$c-graphs.steps" || return 1
      cut -d' ' -f1-4 "$WORK/$p-$c-graphs.steps" | diff "$OUT/$p-s1.loss" - || return 1
      echo "$p $c: 10 steps with --cuda-graphs bitwise S = 1's without"
      last=$c
    done
    # The rehearsal's emulated steps take seconds, and their times mean
    # nothing.
    [[ -n $EMULATE ]] && continue
    for c in s1 $last; do
      run_gpu "$CARRY/$p-$c" 30 >"$WORK/$p-plain.steps" || return 1
      run_gpu "$CARRY/$p-$c" 30 --cuda-graphs >"$WORK/$p-graphs.steps" || return 1
      python3 - "$p $c" "$WORK/$p-plain.steps" "$WORK/$p-graphs.steps" <<'PY'
import statistics, sys
def median(path):
    return statistics.median(float(l.split()[5]) for l in list(open(path))[2:])
plain, graphs = median(sys.argv[2]), median(sys.argv[3])
print(f"{sys.argv[1]} step median: {plain * 1e3:.2f} ms without graphs, "
      f"{graphs * 1e3:.2f} ms with ({plain / graphs:.2f}x)")
PY
    done
  done
}

# Step times of the tiny GPT on the GPU (a first figure, not the benchmark).
timing() {
  local p
  for p in f32 bf16; do
    echo "$p, S = 1, 8 microbatches:"
    run_gpu "$CARRY/$p-s1" 30 | tail -3
  done
}

sanitizer() {
  if ! command -v compute-sanitizer >/dev/null; then
    echo "skipped: no compute-sanitizer"
    return 0
  fi
  local tool tools=(memcheck racecheck)
  [[ -n "${TANDEM_GPU_CHECK_SHORT:-}" ]] && tools=(memcheck)
  for tool in "${tools[@]}"; do
    compute-sanitizer --tool "$tool" --error-exitcode 9 \
      "$WORK/runtime/bin/tandem-run" "$CARRY/f32-s2" --data "$DATA" \
      --steps 1 --transport inproc --device cuda >"$WORK/sanitizer-$tool.log" 2>&1
    local rc=$?
    tail -3 "$WORK/sanitizer-$tool.log"
    if grep -qiE "not supported|unable to|permission" "$WORK/sanitizer-$tool.log" && [[ $rc -ne 9 ]]; then
      echo "$tool: skipped (the machine refused the sanitizer)"
    elif [[ $rc -ne 0 ]]; then
      return 1
    fi
  done
}

# The start both profiles share: the log, the versions, the runtime; fails
# when there is nothing to run on.
begin() {
  mkdir -p "$OUT" "$WORK"
  : >"$OUT/log"
  : >"$OUT/summary"
  unpack_carry
  [[ -d "$CARRY/f32-s1" ]] ||
    { echo "gpu-check: no ${CARRY#"$ROOT"/} (run --prepare here and carry ${CARRY#"$ROOT"/}.tar.xz)" | tee -a "$OUT/summary"; return 1; }
  [[ -n $EMULATE ]] && { use_fakes || return 1; }
  export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1 EMULATE ROOT CARRY DATA MODEL CHAIN OUT WORK PIPELINES DUMPS \
    BENCH_CONFIG BENCH_BATCH BENCH_SEQ BENCH_MICROBATCHES BENCH_LAYERS BENCH_WIDTH \
    PIPE_CONFIG PIPE_BATCH PIPE_SEQ PIPE_MICROBATCHES
  export -f versions find_cuda_libraries build_runtime unit_tests run_gpu chain \
    pipeline_args across_stages kernels timing sanitizer tandem_bench torch_bench profile \
    nccl_one_rank nccl_shared_gpu index_checks use_fakes skipped graphs resume device_peaks result_of mfu pipeline_cost
  # cuBLASLt's own error log (level 1: errors only), one file per process,
  # shown at the end: why a GEMM failed, next to the call the generated
  # code prints.
  export CUBLASLT_LOG_LEVEL="${CUBLASLT_LOG_LEVEL:-1}" CUBLASLT_LOG_FILE="$WORK/cublaslt-%i.log"
  # NCCL says why it failed (its warnings, in the step's log).
  export NCCL_DEBUG="${NCCL_DEBUG:-WARN}"
  rm -f "$WORK"/cublaslt-*.log
  local found
  found=$(find_cuda_libraries)
  export TANDEM_CUDA_LIBRARY_PATH="${found:+$found${TANDEM_CUDA_LIBRARY_PATH:+:}}${TANDEM_CUDA_LIBRARY_PATH:-}"
  step versions 30 versions
  # (The rehearsal builds on 2 cores, not 16.)
  step "runtime alone" "$([[ -n $EMULATE ]] && echo 600 || echo 120)" build_runtime || return 1
  [[ -n $EMULATE ]] && return 0
  if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "no GPU: stopped before the first step that needs one" | tee -a "$OUT/summary"
    return 1
  fi
}

# The rehearsal's GPU (TANDEM_GPU_CHECK_EMULATE): the main build's fake
# CUDA driver, which runs the emulated libraries' kernels on the host, and
# its fake NCCL.
use_fakes() {
  local driver nccl
  driver=$(find "$BUILD/unittests" -name libTandemFakeCudaDriver.so -print -quit 2>/dev/null)
  nccl=$(find "$BUILD/unittests" -name libTandemFakeNccl.so -print -quit 2>/dev/null)
  [[ -n $driver && -n $nccl ]] ||
    { echo "gpu-check: the rehearsal needs the main build's fakes (scripts/setup.sh)" | tee -a "$OUT/summary"; return 1; }
  mkdir -p "$WORK/fake-nccl"
  export TANDEM_CUDA_DRIVER=$driver TANDEM_NCCL_LIBRARY=$nccl \
    TANDEM_FAKE_NCCL_DIR="$WORK/fake-nccl" TANDEM_FAKE_NCCL_DEVICE_ONLY=1
  echo "rehearsal: the fake CUDA driver and NCCL, emulated libraries" | tee -a "$OUT/summary"
}

# skipped NAME WHY: a step the rehearsal cannot run, said in the summary.
skipped() {
  echo "$1: skipped in the rehearsal ($2)" | tee -a "$OUT/summary"
}

# run_profile STEPS...: the shared start, then each function of steps; the
# number of failed steps.
run_profile() {
  # No GPU step ran (no carry, no runtime, no GPU): not a pass.
  begin || return 3
  local steps
  for steps in "$@"; do
    "$steps"
  done
  if cat "$WORK"/cublaslt-*.log 2>/dev/null | grep -q .; then
    echo "== cuBLASLt's log (errors)" | tee -a "$OUT/log"
    cat "$WORK"/cublaslt-*.log | head -40 | tee -a "$OUT/log"
  fi
  echo "failures: $failures" | tee -a "$OUT/summary"
  return "$failures"
}

check_steps() {
  if [[ -n $EMULATE ]]; then
    skipped "runtime unit tests" "scripts/check-runtime-alone.sh runs them here"
  else
    step "runtime unit tests" 120 unit_tests
  fi
  step "f32 chain vs emulation" 60 chain f32
  step "bf16 chain vs emulation" 60 chain bf16
  step "f32 chain, GEMM epilogues unfused" 60 chain f32 unfused
  step "f32 pipelines vs S=1" 90 across_stages f32
  step "bf16 pipelines vs S=1" 90 across_stages bf16
  step "NCCL, one rank" 60 nccl_one_rank
  step "NCCL, two processes on one GPU (experiment)" 60 nccl_shared_gpu
  step "kernels vs emulation (f32, bf16)" 60 kernels
  step "index checks" 30 index_checks
  step "resume" 60 resume
  step "CUDA graphs" 90 graphs
  step "step times" 60 timing
  step "sanitizers" 120 sanitizer
}

# --bench ----------------------------------------------------------------

# Tandem's step time: the median of the steps after the first two (the
# first loads the libraries and plans the GEMMs).
tandem_bench() { # NAME [TOKENS PER STEP [--cuda-graphs]]: "tandem NAME[+graphs]"
  local name=$1 tokens=${2:-$((BENCH_MICROBATCHES * BENCH_BATCH * BENCH_SEQ))} label=$1
  local run=("$CARRY/bench-$name" 6)
  [[ ${3:-} == --cuda-graphs ]] && run+=(--cuda-graphs) && label=$name+graphs
  run_gpu "${run[@]}" | tee "$WORK/tandem-$label.log" || return 1
  python3 - "$label" "$tokens" "$WORK/tandem-$label.log" <<'PY' |
import statistics, sys
name, tokens, log = sys.argv[1], int(sys.argv[2]), sys.argv[3]
times = [float(l.split()[5]) for l in open(log) if l.startswith("step ")][2:]
m = statistics.median(times)
print(f"tandem {name} step_median {m:.5f} tokens/s {tokens / m:.0f}")
PY
    tee -a "$OUT/results"
}

torch_bench() { # PRECISION [--compile]
  # PyTorch's own cuBLASLt calls stay out of the log of Tandem's.
  env -u CUBLASLT_LOG_LEVEL -u CUBLASLT_LOG_FILE \
    python3 "$ROOT/bench/torch_gpt.py" --config "$BENCH_CONFIG" --batch "$BENCH_BATCH" \
    --seq "$BENCH_SEQ" --microbatches "$BENCH_MICROBATCHES" --precision "$@" --steps 6 \
    --corpus "$DATA" |
    tail -2 | tee -a "$WORK/torch.log" | tail -1 | tee -a "$OUT/results"
}

# The GPU's own ceilings in this run (bench/device_peaks.py): a bf16 GEMM of
# 8192^3 and a 256 MiB device copy.
device_peaks() {
  env -u CUBLASLT_LOG_LEVEL -u CUBLASLT_LOG_FILE \
    python3 "$ROOT/bench/device_peaks.py" | tee -a "$OUT/results"
}

# A figure of $OUT/results: the value after KEY on the line starting with
# PREFIX, or nothing.
result_of() { # PREFIX KEY
  awk -v prefix="$1" -v key="$2" 'index($0, prefix) == 1 {
    for (i = 1; i < NF; ++i) if ($i == key) value = $(i + 1) } END { print value }' "$OUT/results"
}

# Tandem bf16's model FLOPs utilization (bench/mfu.py, llm.c's formula)
# against the datasheet's 989 TFLOP/s and the GEMM measured above.
mfu() {
  local rate gemm
  rate=$(result_of "tandem bf16-s1 " tokens/s)
  gemm=$(result_of "peak gemm_bf16_8192" gemm_bf16_8192)
  [[ -n $rate ]] || { echo "no tandem bf16-s1 figure"; return 1; }
  python3 "$ROOT/bench/mfu.py" --manifest "$CARRY/bench-bf16-s1"/rank*.json \
    --layers "$BENCH_LAYERS" --width "$BENCH_WIDTH" --seq "$BENCH_SEQ" \
    --tokens-per-s "$rate" ${gemm:+--gemm-tflops "$gemm"} | tee -a "$OUT/results"
}

# The small GPT on 4 stages on the one GPU against 1 stage: what the
# pipeline machinery (in-process transport, schedule, smaller kernels)
# costs when the stages share the GPU's compute.
pipeline_cost() {
  local tokens=$((PIPE_MICROBATCHES * PIPE_BATCH * PIPE_SEQ)) name one four graphs
  for name in small-s1 small-s4; do
    tandem_bench "$name" "$tokens" >/dev/null &&
      tandem_bench "$name" "$tokens" --cuda-graphs >/dev/null || return 1
  done
  for graphs in "" +graphs; do
    one=$(result_of "tandem small-s1$graphs " step_median)
    four=$(result_of "tandem small-s4$graphs " step_median)
    python3 -c "import sys; one, four = map(float, sys.argv[2:]); print('pipeline small S=4 vs S=1 on one GPU%s: %.2fx the step time (%.2f ms vs %.2f ms)' % (sys.argv[1], four / one, four * 1e3, one * 1e3))" \
      "${graphs:+, with CUDA graphs}" "$one" "$four" | tee -a "$OUT/results"
  done
}

# Where a Tandem step's GPU time goes: its kernels by total time and DRAM
# traffic, measured by Nsight Compute over one step: each kernel's
# bandwidth against the device copy measured above, and the GEMMs' share.
profile() { # NAME
  if ! command -v ncu >/dev/null; then
    echo "skipped: no ncu"
    return 0
  fi
  # At the step's clocks and with its caches as they are (ncu's defaults
  # lock the base clock and flush the caches before each kernel, which
  # would understate every kernel's bandwidth against the copy measured
  # warm). Under a timeout of its own, inside the step's, so a slow
  # profile still leaves the launches it wrote for the table.
  timeout 120 ncu --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
    --clock-control none --cache-control none --csv --page raw \
    --log-file "$WORK/ncu-$1.csv" "$WORK/runtime/bin/tandem-run" \
    "$CARRY/bench-$1" --data "$DATA" --steps 1 --transport inproc --device cuda \
    >"$WORK/ncu-$1.log" 2>&1
  local rc=$?
  ((rc == 124)) && echo "ncu timed out after 120 s: the launches it profiled so far" && rc=0
  tail -3 "$WORK/ncu-$1.log"
  if grep -q "ERR_NVGPUCTRPERM\|not supported" "$WORK/ncu-$1.log" "$WORK/ncu-$1.csv"; then
    echo "skipped: the machine refused the profiler"
    return 0
  fi
  local copy
  copy=$(result_of "peak copy_gbps" copy_gbps)
  ((rc == 0)) &&
    python3 "$ROOT/bench/kernel_times.py" "$WORK/ncu-$1.csv" "$CARRY/bench-$1"/rank*.cu \
      ${copy:+--copy-gbps "$copy"} |
    tee "$OUT/profile-$1.txt"
}

bench_steps() {
  : >"$OUT/results"
  if [[ -n $EMULATE ]]; then
    skipped "device peaks" "PyTorch on a GPU"
  else
    step "device peaks" 60 device_peaks
  fi
  step "tandem f32" 60 tandem_bench f32-s1
  step "tandem bf16" 60 tandem_bench bf16-s1
  step "tandem bf16 MFU" 10 mfu
  step "tandem bf16 S=2 on one GPU" 60 tandem_bench bf16-s2
  step "small GPT, 4 stages vs 1 on one GPU" 90 pipeline_cost
  if [[ -n $EMULATE ]]; then
    skipped "torch" "PyTorch on a GPU"
  else
    [[ -z "${TANDEM_GPU_CHECK_SHORT:-}" ]] && step "torch eager f32" 60 torch_bench f32
    step "torch eager bf16" 60 torch_bench bf16
    step "torch compile bf16" 120 torch_bench bf16 --compile
  fi
  # Last: the longest step, and the figures above matter more.
  step "tandem bf16 kernel times" 150 profile bf16-s1
  cat "$OUT/results"
}

# A short look: the kernel screen, the bf16 benchmark and its kernel times.
profile_steps() {
  : >"$OUT/results"
  step "kernels vs emulation" 60 kernels
  step "tandem bf16" 60 tandem_bench bf16-s1
  step "tandem bf16 kernel times" 150 profile bf16-s1
}

case "${1:-}" in
  --prepare) prepare ;;
  --check) run_profile check_steps; exit $? ;;
  --bench) run_profile bench_steps; exit $? ;;
  --profile) run_profile profile_steps; exit $? ;;
  --all) run_profile check_steps bench_steps; exit $? ;;
  *) echo "usage: scripts/gpu-check.sh --prepare | --check | --bench | --all | --profile"; exit 2 ;;
esac
