#!/usr/bin/env bash
# The main job: set up and build, generate the `small` GPT, compile it into a
# 4-stage 1F1B pipeline with 8 microbatches for the CPU backend, and train it
# on the shipped corpus as 4 MPI processes with tandem-run: per-step loss,
# held-out loss, a summary per rank, a merged trace and a timeline.
#
#   scripts/demo.sh [--steps N]      (default 300; TANDEM_DEMO_DIR=... for the outputs)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${TANDEM_BUILD_DIR:-$ROOT/build}"
STEPS=300
if [[ "${1:-}" == "--steps" ]]; then STEPS="$2"; fi
# The learning rate warms up over 20 steps, or a tenth of a shorter run
# (the optimizer refuses a warmup longer than the run).
WARMUP=$((STEPS < 200 ? STEPS / 10 : 20))
bash "$ROOT/scripts/setup.sh"

BIN="$BUILD_DIR/bin"
OUT="${TANDEM_DEMO_DIR:-$BUILD_DIR/demo}"
rm -rf "$OUT"
mkdir -p "$OUT"
export TANDEM_CPU_CACHE="${TANDEM_CPU_CACHE:-$BUILD_DIR/cpu-cache}"

echo "== 1. The model: the small GPT (4 layers, width 256, 4 heads, byte-level vocabulary,"
echo "      sequence 64, a stage marker after every layer; 1 sequence per microbatch)"
"$BIN/tandemc" models gpt --config small --stage-every 1 --batch 1 --summary -o "$OUT/small.mlir" 2>&1 | sed 's/^/   /'

echo
echo "== 2. tandemc: autodiff, AdamW (warmup-cosine), 4 stages, 1F1B, 8 microbatches, CPU code"
"$BIN/tandemc" "$OUT/small.mlir" -o "$OUT/small.pipeline" --stages 4 --microbatches 8 \
  --schedule 1f1b --target cpu --memory --timing \
  --optimizer "optimizer=adamw lr=0.003 schedule=warmup-cosine warmup-steps=$WARMUP total-steps=$STEPS min-lr=0.0003 clip-norm=1.0" \
  > "$OUT/compile.log" 2>&1
grep -E '^ +[0-9.]+ +\( *[0-9.]+%\) +(parse|grad|train|partition|schedule|lowered|verified|split|native|emit C\+\+|C\+\+ compile|eval program)$' "$OUT/compile.log" | sed 's/^/   /'
grep -E 'remark: tandemc: C\+\+:' "$OUT/compile.log" | sed 's/^.*remark: /   /'
echo "   per-rank libraries and manifests: $(cd "$OUT/small.pipeline" && ls rank*.so rank*.json | tr '\n' ' ')"
echo "   the forward-only program for the held-out loss: $(cd "$OUT/small.pipeline" && ls eval/*.so | tr '\n' ' ')"
echo "-- predicted memory per rank (mpmd-memory):"
grep -E 'remark: rank [0-9]+: peak' "$OUT/compile.log" | sed 's/^.*remark: /   /' | sort -u
echo "-- the schedule simulated on this machine's cost model (devices/cpu-2core.json):"
"$BIN/tandem-opt" "$OUT/small.pipeline/pipeline.mlir" \
  --mpmd-simulate="device=cpu-2core svg=$OUT/timeline.svg" -o /dev/null 2>&1 |
  grep -E 'remark: simulated' | sed 's/^.*remark: /   /' | sort -u

echo
echo "== 3. tandem-run: $STEPS steps on data/corpus.txt as 4 MPI processes (one OpenMP/BLAS thread each)"
"$BIN/tandem-run" "$OUT/small.pipeline" --data "$ROOT/data/corpus.txt" --steps "$STEPS" \
  --eval-every 100 --eval-batches 4 --ckpt-dir "$OUT/checkpoints" --ckpt-every 100 \
  --trace "$OUT/trace.json" --save-params "$OUT/small.trained.safetensors" |
  awk -v last=$((STEPS - 1)) '/^step/ && ($2 + 0) % 25 != 0 && ($2 + 0) != last {next} {print "   " $0}'

echo
echo "== Where things are"
echo "   trace (chrome://tracing or ui.perfetto.dev): $OUT/trace.json"
echo "   simulated timeline (SVG):                    $OUT/timeline.svg"
echo "   checkpoints (tandem-run --resume):           $OUT/checkpoints"
echo "   trained parameters and optimizer state:      $OUT/small.trained.safetensors"
echo "   compile log (tandemc --timing --memory):     $OUT/compile.log"
