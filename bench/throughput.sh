#!/usr/bin/env bash
# One-rank training throughput of the generated CPU code (issue 6's bench):
# the `small` and `gpt2-124m` GPT configurations at batch 4, sequence 64,
# compiled with tandemc --target cpu (1 stage, 1 microbatch, AdamW) and
# trained on data/corpus.txt with tandem-run --transport inproc. Prints
# tokens/s and the matmul FLOP rate of a step as a fraction of OpenBLAS's
# sgemm rate measured in the same run (the step's largest GEMM shape, and
# 1024^3), then the same model and step written in JAX
# (bench/jax_throughput.py: python/tandem_ref, jit, CPU, float32, AdamW) in
# the same run: its tokens/s and the ratio Tandem/JAX (the goal is >= 1.0).
#
# Threads: with OMP_NUM_THREADS unset both sides use all cores (Tandem's
# OpenMP/OpenBLAS default, XLA's CPU thread pool default). With
# OMP_NUM_THREADS=1 the JAX run is made single-threaded too (XLA_FLAGS
# --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1); XLA
# has no flag for other counts, so other values leave JAX on all cores.
# Needs build/venv (scripts/setup.sh creates it from python/requirements.txt).
#
#   bench/throughput.sh [--steps N] [--configs "small gpt2-124m"] [--build DIR]
#
# Step 0 is a warm-up; the figure is the median of the other steps' times.
# The machine is shared and noisy: compare ratios, not absolute numbers.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build"
STEPS=6
CONFIGS="small gpt2-124m"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --steps) STEPS="$2"; shift 2 ;;
    --configs) CONFIGS="$2"; shift 2 ;;
    --build) BUILD="$2"; shift 2 ;;
    *) echo "throughput.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
PYTHON="$BUILD/venv/bin/python"
if [[ ! -x "$PYTHON" ]]; then
  echo "throughput.sh: $PYTHON is missing; the JAX comparison needs it." >&2
  echo "  Run scripts/test.sh (it creates the venv), or:" >&2
  echo "  python3 -m venv $BUILD/venv && $BUILD/venv/bin/pip install -r $ROOT/python/requirements.txt" >&2
  exit 1
fi
JAX_XLA_FLAGS="${XLA_FLAGS:-}"
# One thread each means one core each: XLA's flags leave it running ops on
# a thread pool (about 1.7 cores busy on the 2-core machine with them), so
# every measured process is also pinned to one core with taskset.
PIN=()
if [[ "${OMP_NUM_THREADS:-}" == 1 ]]; then
  JAX_XLA_FLAGS="$JAX_XLA_FLAGS --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
  if command -v taskset > /dev/null; then
    PIN=(taskset -c "$(($(getconf _NPROCESSORS_ONLN) - 1))")
  else
    echo "throughput.sh: taskset not found: JAX may use more than one core" >&2
  fi
fi
# shellcheck source=bench/workspace.sh
source "$ROOT/bench/workspace.sh"
bench_workspace fresh

c++ -O2 -o "$WORK/sgemm_rate" "$ROOT/bench/sgemm_rate.cpp" -lopenblas
square=$("${PIN[@]}" "$WORK/sgemm_rate" 1024 1024 1024 5)
if [[ "${OMP_NUM_THREADS:-}" == 1 ]]; then jax_threads="1 (each pinned to core $(($(getconf _NPROCESSORS_ONLN) - 1)))"; else jax_threads="all cores ($(nproc))"; fi
echo "threads: Tandem ${OMP_NUM_THREADS:-all cores ($(nproc))}, JAX $jax_threads;" \
  "OpenBLAS sgemm 1024^3: $square GFLOP/s"
printf '%-10s %10s %12s %10s %12s %14s %10s %10s %12s %10s\n' config params "step (s)" tokens/s \
  "GEMM GF/s" "sgemm shape" "GF/s" fraction "JAX tok/s" Tandem/JAX

for config in $CONFIGS; do
  "$BIN/tandemc" models gpt --config "$config" --batch 4 --seq 64 -o "$WORK/$config.mlir"
  "$BIN/tandemc" "$WORK/$config.mlir" -o "$WORK/$config" --stages 1 --microbatches 1 \
    --target cpu 2>/dev/null
  # tandem-run sets its ranks' OpenMP/BLAS threads (--threads, default 1):
  # OMP_NUM_THREADS's count, or all cores as the OpenMP default.
  "${PIN[@]}" "$BIN/tandem-run" "$WORK/$config" --data "$ROOT/data/corpus.txt" \
    --steps "$STEPS" --transport inproc --threads "${OMP_NUM_THREADS:-$(nproc)}" \
    > "$WORK/$config.log"
  params=$(python3 - "$WORK/$config/rank0.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
print(sum(p["bytes"] // 4 for p in m["parameters"] if not p["name"].startswith("opt.")))
PY
)
  flops=$(python3 "$ROOT/bench/matmul_flops.py" "$WORK/$config/rank0.mlir")
  # The largest GEMM of the forward pass: the MLP's up projection,
  # (batch*seq) x width times width x 4*width.
  dim=$(python3 - "$WORK/$config/rank0.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
print(next(p["shape"][0] for p in m["parameters"] if p["name"].endswith("mlp.c_fc.weight")))
PY
)
  shape_rate=$("${PIN[@]}" "$WORK/sgemm_rate" 256 $((4 * dim)) "$dim" 5)
  # The same model in JAX, after Tandem's run (one step of warm-up/compile,
  # then STEPS - 1 timed steps, like Tandem's median over steps 1..N-1).
  XLA_FLAGS="$JAX_XLA_FLAGS" "${PIN[@]}" "$PYTHON" "$ROOT/bench/jax_throughput.py" "$config" \
    $((STEPS > 1 ? STEPS - 1 : 1)) > "$WORK/$config.jax" 2> "$WORK/$config.jax.err" || {
    cat "$WORK/$config.jax.err" >&2; echo "throughput.sh: the JAX run failed" >&2; exit 1; }
  python3 - "$WORK/$config.log" "$config" "$params" "$flops" "$shape_rate" "$square" "$dim" \
    "$WORK/$config.jax" <<'PY'
import statistics, sys
log, config, params, flops, shape_rate, square, dim, jax_out = sys.argv[1:]
jax = open(jax_out).read().split()
assert jax[0] == "jax" and jax[3] == params, \
    "JAX model has %s parameters, Tandem's %s" % (jax[3], params)
jax_tokens = float(jax[7])
times = [float(l.split()[5]) for l in open(log) if l.startswith("step ")]
step = statistics.median(times[1:] if len(times) > 1 else times)
tokens = 4 * 64
gemm = float(flops) / step / 1e9
print("%-10s %10s %12.3f %10.0f %12.2f %14s %10s %9.1f%% %12.0f %10.2f" % (
    config, params, step, tokens / step, gemm, "256x%dx%s" % (4 * int(dim), dim),
    shape_rate, 100 * gemm / float(shape_rate), jax_tokens, tokens / step / jax_tokens))
print("%-10s %10s %12s %10s %12s %14s %10s %9.1f%%" % ("", "", "", "", "", "1024^3", square, 100 * gemm / float(square)))
PY
done
