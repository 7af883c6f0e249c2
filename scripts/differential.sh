#!/usr/bin/env bash
# scripts/differential.sh FIRST LAST [WORK]: the differential property test
# (docs/testing.md, "Differential tests") for seeds FIRST..LAST. Each seed's
# random model (scripts/random_graph.py) is compiled for the CPU at S = 1
# and at the S stages, schedule, optimizer and precision its seed draws,
# both with the seed's microbatches, and trained 3 steps as threads
# (tandem-run --transport inproc): the losses and the final parameters must
# be bitwise equal. Prints one line per seed; exits 1 if any differs or
# fails. Needs the tools on PATH (build/bin).
set -u
first=$1 last=$2 work=${3:-$(mktemp -d /tmp/tandem-differential-XXXXXX)}
here=$(cd "$(dirname "$0")" && pwd)
data=$here/../data/corpus.txt
failed=0
# A field of the configuration line, commas as spaces.
get() { sed -e "s/.*\b$1=\([^ ]*\).*/\1/" <<<"$config" | tr , ' '; }
for ((seed = first; seed <= last; seed++)); do
  dir=$work/$seed
  rm -rf "$dir" && mkdir -p "$dir"
  python3 "$here/random_graph.py" "$seed" -o "$dir/model.mlir"
  config=$(python3 "$here/random_graph.py" "$seed" --print-config)
  stages=$(get stages) m=$(get microbatches) schedule=$(get schedule)
  optimizer=$(get optimizer) precision=$(get precision)
  ok=1
  for s in 1 "$stages"; do
    if ! tandemc "$dir/model.mlir" -o "$dir/s$s" --stages "$s" \
        --microbatches "$m" --schedule "$schedule" --optimizer "optimizer=$optimizer" \
        --precision "$precision" --target cpu > "$dir/compile$s.log" 2>&1 ||
      ! tandem-run "$dir/s$s" --data "$data" --steps 3 --seed "$seed" \
        --transport inproc --save-params "$dir/s$s.st" > "$dir/run$s.log" 2>&1; then
      echo "seed $seed: S=$s failed ($config): see $dir"
      ok=0
      break
    fi
    grep '^step' "$dir/run$s.log" | sed -e 's/ time .*//' > "$dir/loss$s"
  done
  if ((ok)) && { ! cmp -s "$dir/loss1" "$dir/loss$stages" ||
    ! cmp -s "$dir/s1.st" "$dir/s$stages.st"; }; then
    echo "seed $seed: S=$stages differs from S=1 ($config): see $dir"
    ok=0
  fi
  if ((ok)); then
    echo "seed $seed: S=$stages bitwise S=1 ($config)"
  else
    failed=1
  fi
done
exit $failed
