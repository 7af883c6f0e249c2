#!/usr/bin/env bash
# The GPU check (docs/runtime.md, "The GPU check"; ../shared/gpu.md): what
# only a GPU can prove about the CUDA target's libraries and the runtime's
# CUDA device, as one prepared call on the GPU machine.
#
#   scripts/gpu-check.sh --prepare   here: compiles the tiny GPT's GPU
#                                    libraries and its emulated references
#                                    into build/gpu-carry (carry that path)
#   scripts/gpu-check.sh --check     there: builds the runtime alone, runs
#                                    the libraries on GPU 0 and compares
#                                    them with the emulation (4 minutes)
#
# --check writes its log and summary into $OUT (default build/gpu-check)
# as it goes, every step under its own timeout; without a GPU it stops
# before the first step that needs one and says so. Exit status: 0 when
# every step that ran passed.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CARRY="$ROOT/build/gpu-carry"
DATA="$ROOT/data/corpus.txt"
MODEL="$ROOT/examples/tiny-gpt.mlir"
# Steps of the chained comparison (each runs once from the emulation's
# parameters after the step before it).
CHAIN=5

prepare() {
  set -e
  local bin="$ROOT/build/bin"
  [[ -x "$bin/tandemc" && -x "$bin/tandem-run-inproc" ]] ||
    { echo "gpu-check --prepare: build first (scripts/setup.sh)"; exit 1; }
  rm -rf "$CARRY"
  mkdir -p "$CARRY/include"
  # The runtime's one header-only dependency, which the GPU machine lacks.
  cp -r /usr/include/nlohmann "$CARRY/include/"
  export TANDEM_CUDA_CACHE="$ROOT/build/gpu-carry-cache"
  local p s
  for p in f32 bf16; do
    for s in 1 2; do
      "$bin/tandemc" "$MODEL" -o "$CARRY/$p-s$s" --stages "$s" --microbatches 8 \
        --precision "$p" --target cuda 2>"$CARRY/$p-s$s.tandemc.log"
      "$bin/tandemc" "$MODEL" -o "$CARRY/$p-s$s-emu" --stages "$s" --microbatches 8 \
        --precision "$p" --target cuda --cuda-emulate 2>/dev/null
      # Only what the GPU run reads travels: manifests, libraries, sources.
      rm -f "$CARRY/$p-s$s"/*.mlir
      rm -rf "$CARRY/$p-s$s/eval"
    done
    # The emulation's chain: the parameters before each step, and each
    # step's loss from them.
    local k from
    mkdir -p "$CARRY/$p-chain"
    for ((k = 0; k < CHAIN; ++k)); do
      from=()
      ((k > 0)) && from=(--params "$CARRY/$p-chain/step$k.st")
      OMP_NUM_THREADS=1 "$bin/tandem-run-inproc" "$CARRY/$p-s1-emu" --data "$DATA" \
        --first-step "$k" --steps 1 --seed 3 "${from[@]}" \
        --save-params "$CARRY/$p-chain/step$((k + 1)).st" >>"$CARRY/$p-chain/emu.log"
    done
    rm -rf "$CARRY"/$p-s?-emu
  done
  # Every fragment call of one f32 step (2 microbatches, to travel light),
  # for the kernel-by-kernel screen.
  "$bin/tandemc" "$MODEL" -o "$CARRY/dump" --stages 1 --microbatches 2 \
    --target cuda 2>"$CARRY/dump.tandemc.log"
  "$bin/tandemc" "$MODEL" -o "$CARRY/dump-emu" --stages 1 --microbatches 2 \
    --target cuda --cuda-emulate 2>/dev/null
  rm -rf "$CARRY/dump"/*.mlir "$CARRY/dump/eval"
  TANDEM_DUMP_FRAGMENTS="$CARRY/dump-emu/calls" OMP_NUM_THREADS=1 \
    "$bin/tandem-run-inproc" "$CARRY/dump-emu" --data "$DATA" --steps 1 --seed 3 >/dev/null
  mv "$CARRY/dump-emu/calls" "$CARRY/dump-calls"
  rm -rf "$CARRY/dump-emu"
  rm -f "$CARRY"/*/step"$CHAIN".st
  du -sh "$CARRY"
  echo "gpu-check --prepare: carry build/gpu-carry (64 MiB at most travel)"
}

# --check ----------------------------------------------------------------

OUT="${OUT:-$ROOT/build/gpu-check}"
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
  timeout "$seconds" bash -c '"$@"' step "$@" 2>&1 | tee -a "$OUT/log"
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
  echo "TANDEM_CUDA_LIBRARY_PATH=${TANDEM_CUDA_LIBRARY_PATH:-}"
  if [[ -n "${TANDEM_CUDA_LIBRARY_PATH:-}" ]]; then
    ls -l "${TANDEM_CUDA_LIBRARY_PATH%%:*}"/libcublasLt.so.13 "${TANDEM_CUDA_LIBRARY_PATH%%:*}"/libcudart.so.13
  else
    echo "no CUDA 13 wheels in this Python's packages: the loader's path decides"
  fi
  return 0
}

# The CUDA 13 wheels' folders of this machine's Python, if it has them.
find_cuda_libraries() {
  local site
  for site in $(python3 -c 'import site, sys; print(" ".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null); do
    if [[ -e "$site/nvidia/cu13/lib/libcublasLt.so.13" ]]; then
      echo "$site/nvidia/cu13/lib"
      return
    fi
  done
}

build_runtime() {
  cmake -S "$ROOT/runtime" -B "$OUT/runtime" -G Ninja \
    -DTANDEM_JSON_INCLUDE_DIR="$CARRY/include" >/dev/null &&
    ninja -C "$OUT/runtime" bin/tandem-run-inproc
}

run_gpu() { # DIR STEPS [ARGS...]: losses on GPU 0
  local dir=$1 steps=$2
  shift 2
  "$OUT/runtime/bin/tandem-run-inproc" "$dir" --data "$DATA" --steps "$steps" \
    --seed 3 --device cuda "$@"
}

# Every step once from the emulation's parameters: each loss within the
# sum of the two implementations' bounds against the evaluator.
chain() {
  local p=$1 k from
  : >"$OUT/$p-chain-gpu.log"
  for ((k = 0; k < CHAIN; ++k)); do
    from=()
    ((k > 0)) && from=(--params "$CARRY/$p-chain/step$k.st")
    run_gpu "$CARRY/$p-s1" 1 --first-step "$k" "${from[@]}" >>"$OUT/$p-chain-gpu.log" || return 1
  done
  cat "$OUT/$p-chain-gpu.log"
  if [[ $p == f32 ]]; then
    python3 "$ROOT/test/Runtime/Inputs/compare_losses.py" "$OUT/$p-chain-gpu.log" \
      "$CARRY/$p-chain/emu.log" "cuda+cuda:$MODEL:forward"
  else
    # bf16's derived bound is vacuous (docs/cuda-backend.md): shown, not
    # asserted.
    paste "$OUT/$p-chain-gpu.log" "$CARRY/$p-chain/emu.log" | awk '{print "gpu", $4, "emulation", $12}'
  fi
}

# The same losses with every rank of S = 2 on the one GPU: bitwise S = 1's.
across_stages() {
  local p=$1
  run_gpu "$CARRY/$p-s1" 10 | cut -d' ' -f1-4 >"$OUT/$p-s1.loss" &&
    run_gpu "$CARRY/$p-s2" 10 | cut -d' ' -f1-4 >"$OUT/$p-s2.loss" &&
    cat "$OUT/$p-s2.loss" && diff "$OUT/$p-s1.loss" "$OUT/$p-s2.loss" &&
    echo "S = 1 and S = 2 bitwise equal over 10 steps"
}

# Every fragment call of step 0 on the GPU against the emulation's dump.
kernels() {
  rm -rf "$OUT/dump-calls"
  TANDEM_DUMP_FRAGMENTS="$OUT/dump-calls" run_gpu "$CARRY/dump" 1 >/dev/null &&
    python3 "$ROOT/scripts/compare-dumps.py" "$CARRY/dump-calls" "$OUT/dump-calls"
}

sanitizer() {
  if ! command -v compute-sanitizer >/dev/null; then
    echo "skipped: no compute-sanitizer"
    return 0
  fi
  local tool
  for tool in memcheck racecheck; do
    compute-sanitizer --tool "$tool" --error-exitcode 9 \
      "$OUT/runtime/bin/tandem-run-inproc" "$CARRY/f32-s2" --data "$DATA" \
      --steps 1 --device cuda >"$OUT/sanitizer-$tool.log" 2>&1
    local rc=$?
    tail -3 "$OUT/sanitizer-$tool.log"
    if grep -qiE "not supported|unable to|permission" "$OUT/sanitizer-$tool.log" && [[ $rc -ne 9 ]]; then
      echo "$tool: skipped (the machine refused the sanitizer)"
    elif [[ $rc -ne 0 ]]; then
      return 1
    fi
  done
}

check() {
  mkdir -p "$OUT"
  : >"$OUT/log"
  : >"$OUT/summary"
  [[ -d "$CARRY/f32-s1" ]] ||
    { echo "gpu-check: no build/gpu-carry (run --prepare here and carry it)" | tee -a "$OUT/summary"; return 1; }
  export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1 ROOT CARRY DATA MODEL CHAIN OUT
  export -f versions find_cuda_libraries build_runtime run_gpu chain \
    across_stages kernels sanitizer
  local found
  found=$(find_cuda_libraries)
  export TANDEM_CUDA_LIBRARY_PATH="${found:+$found${TANDEM_CUDA_LIBRARY_PATH:+:}}${TANDEM_CUDA_LIBRARY_PATH:-}"
  step versions 30 versions
  step "runtime alone" 120 build_runtime || return 1
  if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "no GPU: stopped before the first step that needs one" | tee -a "$OUT/summary"
    return "$failures"
  fi
  step "f32 chain vs emulation" 60 chain f32
  step "bf16 chain vs emulation" 60 chain bf16
  step "f32 S=1 vs S=2" 60 across_stages f32
  step "bf16 S=1 vs S=2" 60 across_stages bf16
  step "f32 kernels vs emulation" 60 kernels
  step "sanitizers" 120 sanitizer
  echo "failures: $failures" | tee -a "$OUT/summary"
  return "$failures"
}

case "${1:-}" in
  --prepare) prepare ;;
  --check) check; exit $? ;;
  *) echo "usage: scripts/gpu-check.sh --prepare | --check"; exit 2 ;;
esac
