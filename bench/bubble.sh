#!/usr/bin/env bash
# Measured pipeline bubble per rank (tandem-run's own timing: the fraction
# of a step a rank waits in send/recv) against mpmd-simulate's prediction for
# the same compiled program on devices/cpu-2core.json.
#
#   bench/bubble.sh [--steps N] [--stages S] [--schedule NAME] [--build DIR]
#
# Default: the small GPT (1 sequence per microbatch), 4 stages, 1F1B, 8
# microbatches, 12 steps, step 0 left out. With more ranks than cores the
# ranks take turns on the cores, and a rank waiting for a peer that is not
# running counts as bubble: the script prints the core count next to the
# ratio.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build"
STEPS=12
STAGES=4
SCHEDULE=1f1b
while [[ $# -gt 0 ]]; do
  case "$1" in
    --steps) STEPS="$2"; shift 2 ;;
    --stages) STAGES="$2"; shift 2 ;;
    --schedule) SCHEDULE="$2"; shift 2 ;;
    --build) BUILD="$2"; shift 2 ;;
    *) echo "bubble.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
# shellcheck source=bench/workspace.sh
source "$ROOT/bench/workspace.sh"
bench_workspace

"$BIN/tandemc" models gpt --config small --stage-every 1 --batch 1 -o "$WORK/small.mlir"
"$BIN/tandemc" "$WORK/small.mlir" -o "$WORK/out" --stages "$STAGES" --microbatches 8 \
  --schedule "$SCHEDULE" --target cpu 2>/dev/null
"$BIN/tandem-opt" "$WORK/out/pipeline.mlir" --mpmd-simulate="device=cpu-2core" \
  -o /dev/null 2> "$WORK/simulated.txt"
"$BIN/tandem-run" "$WORK/out" --data "$ROOT/data/corpus.txt" --steps "$STEPS" \
  > "$WORK/run.log"
python3 - "$WORK/simulated.txt" "$WORK/run.log" "$STAGES" "$SCHEDULE" "$(nproc)" <<'PY'
import re, statistics, sys
simulated, log, stages, schedule, cores = sys.argv[1:]
predicted = {}
step_time = None
for line in open(simulated):
    m = re.search(r"remark: rank (\d+): busy .* bubble ([0-9.e-]+)", line)
    if m:
        predicted[int(m.group(1))] = float(m.group(2))
    m = re.search(r"simulated step time ([0-9.e-]+) s", line)
    if m:
        step_time = float(m.group(1))
rows = [l.split() for l in open(log) if l.startswith("step ")]
rows = rows[1:] if len(rows) > 1 else rows  # step 0 warms up
times = [float(r[5]) for r in rows]
bubbles = [[float(x) for x in r[r.index("bubble") + 1:]] for r in rows]
print("small GPT, %s stages, %s, 8 microbatches, %d measured steps, %s cores" % (stages, schedule, len(rows), cores))
print("step time: measured %.4f s (median), simulated %.4f s (cpu-2core cost model)" % (statistics.median(times), step_time or float("nan")))
print("%-6s %10s %10s %8s" % ("rank", "simulated", "measured", "ratio"))
for r in sorted(predicted):
    measured = statistics.mean(b[r] for b in bubbles)
    print("%-6d %10.3f %10.3f %8.2f" % (r, predicted[r], measured, measured / predicted[r] if predicted[r] else float("nan")))
PY
