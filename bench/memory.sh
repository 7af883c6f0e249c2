#!/usr/bin/env bash
# Measured peak memory per rank against the compiler's memory analysis
# (issue 7's bench): the tiny and small GPT, S = 1, 2, 4 stages, 1F1B,
# m = 8, trained a few steps with tandem-run. For every rank it prints
# mpmd-memory's predicted peak (which tandemc --target cpu writes into the
# rank manifest), what the manifest's plan allocates (arena + parameters and
# optimizer state), the most bytes of runtime buffers allocated at once
# (the runtime's own count), the measured growth of the peak resident size
# (VmHWM) above the baseline tandem-run takes after MPI and its per-peer
# warm-up, the token data, the manifest, the rank's library and an OpenBLAS
# warm-up, less code and shared pages touched since (docs/runtime.md,
# "Memory"), and the two ratios over the
# prediction (the goal: within 10 %). The separate-buffers columns rerun the
# same program with TANDEM_SEPARATE_BUFFERS=1, where each buffer is
# allocated while the action list uses it.
#
#   bench/memory.sh [--steps N] [--configs "tiny small"] [--stages "1 2 4"]
#                   [--build DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build"
STEPS=3
CONFIGS="tiny small"
STAGES="1 2 4"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --steps) STEPS="$2"; shift 2 ;;
    --configs) CONFIGS="$2"; shift 2 ;;
    --stages) STAGES="$2"; shift 2 ;;
    --build) BUILD="$2"; shift 2 ;;
    *) echo "memory.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
# shellcheck source=bench/workspace.sh
source "$ROOT/bench/workspace.sh"
bench_workspace

printf '%-6s %2s %4s %10s %10s %10s %10s %8s %8s %10s %8s\n' config S rank \
  predicted plan buffers measured buf/pred meas/pred "sep. bufs" sep/pred
for config in $CONFIGS; do
  case "$config" in
    tiny) flags="--stage-every 2" ;;       # 8 layers, 8 sequences a microbatch
    small) flags="--stage-every 1 --batch 1" ;; # 4 layers, bench/bubble.sh's
    *) flags="" ;;
  esac
  # shellcheck disable=SC2086
  "$BIN/tandemc" models gpt --config "$config" $flags -o "$WORK/$config.mlir"
  for s in $STAGES; do
    out="$WORK/$config-s$s"
    "$BIN/tandemc" "$WORK/$config.mlir" -o "$out" --stages "$s" --microbatches 8 \
      --schedule 1f1b --target cpu 2>/dev/null
    "$BIN/tandem-run" "$out" --data "$ROOT/data/corpus.txt" --steps "$STEPS" \
      > "$out/arena.log"
    TANDEM_SEPARATE_BUFFERS=1 "$BIN/tandem-run" "$out" \
      --data "$ROOT/data/corpus.txt" --steps "$STEPS" > "$out/separate.log"
    python3 - "$config" "$s" "$out/arena.log" "$out/separate.log" "$WORK/parts.txt" <<'PY'
import re, sys
config, stages, arena, separate, parts = sys.argv[1:]
line = re.compile(r"^  rank (\d+): predicted ([0-9.]+) .*?, plan ([0-9.]+) "
                  r".*?, buffers ([0-9.]+).*?, measured ([0-9.]+)")
def rows(path):
    return {int(m.group(1)): [float(x) for x in m.groups()[1:]]
            for m in map(line.match, open(path)) if m}
a, s = rows(arena), rows(separate)
for rank in sorted(a):
    predicted, plan, buffers, measured = a[rank]
    sep = s[rank][2]
    print("%-6s %2s %4d %10.2f %10.2f %10.2f %10.2f %8.3f %8.3f %10.2f %8.3f" % (
        config, stages, rank, predicted, plan, buffers, measured,
        buffers / predicted, measured / predicted, sep, sep / predicted))
# Where the step buffers peak, for the second table.
peak = re.compile(r"^  rank (\d+): .*; step buffers at most ([0-9.]+) at "
                  r"(?:actions\[\d+\] \(run )?([^):]+)\)?: new parameter and "
                  r"optimizer values ([0-9.]+), gradient sums ([0-9.]+), "
                  r"scratch ([0-9.]+), other slots ([0-9.]+)")
with open(parts, "a") as out:
    for m in map(peak.match, open(arena)):
        if m:
            out.write("%-6s %2s %4s %10s  %-12s %10s %10s %10s %10s\n" % (
                (config, stages) + m.groups()))
PY
  done
done
echo "MiB; plan = arena + parameters and optimizer state; buffers, sep. bufs ="
echo "most runtime buffer bytes at once (arena / TANDEM_SEPARATE_BUFFERS=1);"
echo "measured = private peak resident above the baseline ($STEPS steps)."
echo
echo "Where the step buffers peak (MiB; new values: the optimizer's update"
echo "results, which mpmd-memory counts as written in place):"
printf '%-6s %2s %4s %10s  %-12s %10s %10s %10s %10s\n' config S rank "at most" \
  "during" "new values" "grad sums" scratch "other"
cat "$WORK/parts.txt"
