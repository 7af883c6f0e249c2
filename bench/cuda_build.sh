#!/usr/bin/env bash
# The CUDA target's build matrix: `tandemc --target cuda` (nvcc, sm_90a) on
# the tiny, small and gpt2-124m GPTs for S = 1, 2, 4 in f32 and bf16, each
# with a cold compile cache. Per configuration: tandemc's wall time, its
# `CUDA compile` step (the ranks' libraries, not the eval program), and
# from tandemc's ptxas report (nvcc -Xptxas -v) the most registers a
# kernel of any rank uses and the spill bytes of all (the goal: zero).
# Needs nvcc, no GPU.
#
# usage: bench/cuda_build.sh [--build DIR] [--configs "tiny small gpt2-124m"]
#                            [--stages "1 2 4"] [--precisions "f32 bf16"]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build"
CONFIGS="tiny small gpt2-124m"
STAGES="1 2 4"
PRECISIONS="f32 bf16"
while (($#)); do
  case "$1" in
  --build) BUILD="$2"; shift 2 ;;
  --configs) CONFIGS="$2"; shift 2 ;;
  --stages) STAGES="$2"; shift 2 ;;
  --precisions) PRECISIONS="$2"; shift 2 ;;
  *) echo "cuda_build.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
source "$ROOT/bench/workspace.sh"
bench_workspace fresh
echo "# tandemc --target cuda --cuda-arch sm_90a, 1F1B, m = 8; cold cache; $(nproc) cores"
echo "| model | precision | S | tandemc s | CUDA compile s | max registers | spill bytes |"
echo "|---|---|---|---|---|---|---|"
for config in $CONFIGS; do
  # A stage marker after every layer: S = 4 needs four stages.
  "$BIN/tandemc" models gpt --config "$config" --stage-every 1 \
    -o "$WORK/$config.mlir"
  for precision in $PRECISIONS; do
    for s in $STAGES; do
      out="$WORK/$config-$precision-s$s"
      export TANDEM_CUDA_CACHE="$WORK/cache-$config-$precision-s$s"
      start=$(date +%s.%N)
      "$BIN/tandemc" "$WORK/$config.mlir" -o "$out" --stages "$s" \
        --microbatches 8 --precision "$precision" --target cuda --timing \
        2> "$out.log"
      wall=$(echo "$(date +%s.%N) - $start" | bc)
      compile=$(awk '/^ *[0-9.]+ \( *[0-9.]+%\)    CUDA compile$/ {print $1; exit}' "$out.log")
      # "remark: tandemc: rank R: CUDA compiler: K kernels, at most N
      # registers, S bytes spilled", once per library.
      regs=$(grep -oE 'at most [0-9]+ registers' "$out.log" |
        awk '{print $3}' | sort -n | tail -1)
      spills=$(grep -oE '[0-9]+ bytes spilled' "$out.log" |
        awk '{s += $1} END {print s + 0}')
      printf '| %s | %s | %s | %.1f | %s | %s | %s |\n' "$config" \
        "$precision" "$s" "$wall" "$compile" "$regs" "$spills"
    done
  done
done
