#!/usr/bin/env bash
# Compressed stage edges over slow links: a GPT on 4 hosts (network
# namespaces joined by rate-limited veth links, scripts/hosts.sh), 1F1B,
# m = 8, trained with no codec, int8 and fp8 on the stage edges
# (tandemc --compress), the subspace rewrite at k = d/8 and d/16
# (tandemc --subspace) and the subspace with int8, once over shaped links
# and once over open ones.
#
#   bench/compressed_links.sh [--steps N] [--eval-every K] [--rate MBIT]
#                             [--svg FILE] [--build DIR]
#
# Needs root (namespaces). The rate defaults to the one at which the
# uncompressed program's busiest link needs twice the step time measured
# on open links; the script prints both. Bytes per link are the programs'
# own (the sends in DIR/rank<N>.mlir, which is what the transport counts:
# test/Runtime/compressed-edges.test), since the run's counters also hold
# the held-out evaluations' traffic. Held-out losses
# come from tandem-run --eval-every (DIR/eval, the model without codecs;
# the subspace rewrite is part of the model).
# Prints a Markdown table and writes the loss curves as SVG (--svg).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build"
STEPS=60
EVAL=10
RATE=""
SVG=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --steps) STEPS="$2"; shift 2 ;;
    --eval-every) EVAL="$2"; shift 2 ;;
    --rate) RATE="$2"; shift 2 ;;
    --svg) SVG="$2"; shift 2 ;;
    --build) BUILD="$2"; shift 2 ;;
    *) echo "compressed_links.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
# shellcheck source=bench/workspace.sh
source "$ROOT/bench/workspace.sh"
bench_workspace
HOSTS="$ROOT/scripts/hosts.sh"
PREFIX=tbench-links
trap '"$HOSTS" down --name $PREFIX; rm -rf "$WORK"' EXIT

MODEL="--dim 256 --layers 4 --heads 4 --vocab 256 --seq 64 --batch 2"
# shellcheck disable=SC2086
"$BIN/tandemc" models gpt --config small $MODEL --stage-every 1 -o "$WORK/gpt.mlir"
# What crosses the stage edges: none, a codec (int8, fp8), the subspace
# rewrite at k = d/8 and d/16 (sub32, sub16; tandemc --subspace), and the
# subspace with int8 on top (sub32-int8).
CODECS="none int8 fp8 sub32 sub16 sub32-int8"
for codec in $CODECS; do
  flags=()
  case $codec in
    sub*) rank=${codec#sub}; rank=${rank%%-*}
          flags+=(--subspace "rank=$rank seed=1") ;;
  esac
  case $codec in
    *int8) flags+=(--compress "activations=int8 gradients=int8") ;;
    *fp8) flags+=(--compress "activations=fp8 gradients=fp8") ;;
  esac
  "$BIN/tandemc" "$WORK/gpt.mlir" -o "$WORK/$codec" --stages 4 --microbatches 8 \
    --schedule 1f1b "${flags[@]}" --target cpu 2>/dev/null
done

run() { # run DIR STEPS LOG [EVAL]
  local eval=()
  [[ -z "${4:-}" ]] || eval=(--eval-every "$4")
  "$HOSTS" mpirun --name $PREFIX -- -np 4 -x OMP_NUM_THREADS=1 \
    "$BIN/tandem-run" "$1" --data "$ROOT/data/corpus.txt" --steps "$2" --seed 1 \
    "${eval[@]}" > "$3"
}

"$HOSTS" up 4 --name $PREFIX
for codec in $CODECS; do
  run "$WORK/$codec" "$STEPS" "$WORK/open-$codec.log" "$EVAL"
done
if [[ -z "$RATE" ]]; then
  RATE=$(python3 "$ROOT/bench/links_report.py" rate "$WORK/none" "$WORK/open-none.log")
fi
"$HOSTS" up 4 --rate "$RATE" --name $PREFIX
for codec in $CODECS; do
  run "$WORK/$codec" "$STEPS" "$WORK/shaped-$codec.log" "$EVAL"
done
python3 "$ROOT/bench/links_report.py" report "$WORK" "$RATE" "$(nproc)" \
  "$CODECS" "${SVG:-}"
