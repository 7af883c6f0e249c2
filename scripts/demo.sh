#!/usr/bin/env bash
# The main job. Until the native backend and the MPI runtime land this sets
# everything up, generates the example models, trains the tiny GPT in the
# reference evaluator, then compiles it into a 4-stage 1F1B pipeline and
# trains that with every rank on its own thread, and prints what it did.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${TANDEM_BUILD_DIR:-$ROOT/build}"
bash "$ROOT/scripts/setup.sh"

BIN="$BUILD_DIR/bin"
OUT="${TANDEM_DEMO_DIR:-$BUILD_DIR/demo}"
mkdir -p "$OUT"

count_ops() { grep -oE '\bnn\.[a-z_]+' "$1" | sort | uniq -c | sort -rn | awk '{printf "%s×%s ", $2, $1} END {print ""}'; }

echo "== The checked-in example models (examples/tiny-gpt.mlir, examples/tiny-mlp.mlir)"
cp "$ROOT/examples/tiny-gpt.mlir" "$ROOT/examples/tiny-mlp.mlir" "$OUT/"
"$BIN/tandemc" "$OUT/tiny-gpt.mlir" --emit=nn -o /dev/null && echo "tiny-gpt.mlir verifies"
"$BIN/tandemc" "$OUT/tiny-mlp.mlir" --emit=nn -o /dev/null && echo "tiny-mlp.mlir verifies"

echo
echo "== Generating larger models into $OUT"
echo "-- small-gpt: tandemc models gpt --config small --stage-every 1"
"$BIN/tandemc" models gpt --config small --stage-every 1 --summary -o "$OUT/small-gpt.mlir"
echo "-- gpt2-124m (sequence 128): tandemc models gpt --config gpt2-124m --seq 128"
"$BIN/tandemc" models gpt --config gpt2-124m --seq 128 --summary -o "$OUT/gpt2-124m-seq128.mlir"

echo
echo "== Running the passes that exist: nn-decompose-attention, canonicalize, cse"
for model in tiny-gpt small-gpt tiny-mlp; do
  in="$OUT/$model.mlir"
  out="$OUT/$model.decomposed.mlir"
  "$BIN/tandem-opt" "$in" --nn-decompose-attention --canonicalize --cse -o "$out"
  echo "$model: $(grep -c '' "$in") lines -> $(grep -c '' "$out") lines"
  echo "  before: $(count_ops "$in")"
  echo "  after:  $(count_ops "$out")"
done

echo
echo "== Stage markers in tiny-gpt (the pipeline cuts the partitioner will use)"
grep -n 'nn.stage_end' "$OUT/tiny-gpt.mlir" | sed 's/^/  line /'

echo
echo "== Reference evaluator: the untrained tiny GPT's loss (ln 256 = 5.545 for uniform predictions)"
echo "random inputs:            $("$BIN/tandem-eval" "$ROOT/examples/tiny-gpt.mlir" --seed 0)"
echo "a batch of README.md:     $("$BIN/tandem-eval" "$ROOT/examples/tiny-gpt.mlir" --seed 0 --data "$ROOT/README.md" --batch-index 0)"
echo "same, evaluated in f64:   $("$BIN/tandem-eval" "$ROOT/examples/tiny-gpt.mlir" --seed 0 --data "$ROOT/README.md" --batch-index 0 --f64)"
echo "tiny MLP (ln 10 = 2.303): $("$BIN/tandem-eval" "$ROOT/examples/tiny-mlp.mlir" --seed 0)"

echo
echo "== Training the tiny GPT in the reference evaluator (300 AdamW steps on data/corpus.txt)"
"$BIN/tandem-opt" "$ROOT/examples/tiny-gpt.mlir" --nn-autodiff \
  --nn-optimizer="optimizer=adamw lr=0.003" -o "$OUT/tiny-gpt.train.mlir"
echo "training step: $OUT/tiny-gpt.train.mlir ($(grep -c 'nn.grad<B' "$OUT/tiny-gpt.train.mlir") B ops, $(grep -c 'nn.grad<W' "$OUT/tiny-gpt.train.mlir") W ops, $(grep -c 'nn.optimizer' "$OUT/tiny-gpt.train.mlir") optimizer ops)"
"$BIN/tandem-eval" "$OUT/tiny-gpt.train.mlir" --train --steps 300 --eval-every 50 \
  --eval-batches 8 --data "$ROOT/data/corpus.txt" \
  --save-params "$OUT/tiny-gpt.trained.safetensors" |
  awk '/^step/ && ($2 + 0) % 25 != 0 && ($2 + 0) != 299 {next} {print}'
echo "trained parameters and optimizer state: $OUT/tiny-gpt.trained.safetensors"

echo
echo "== The tiny GPT as a pipeline: 4 stages, 1F1B, 8 microbatches (tandemc)"
rm -rf "$OUT/tiny-gpt.pipeline"
"$BIN/tandemc" "$ROOT/examples/tiny-gpt.mlir" -o "$OUT/tiny-gpt.pipeline" \
  --stages 4 --microbatches 8 --schedule 1f1b \
  --optimizer "optimizer=adamw lr=0.003" --timing 2>&1 | grep -E '^ +[0-9.]+ +\( *[0-9.]+%\) +[a-z]+$' | sed 's/^/  /'
echo "per-rank programs: $(ls "$OUT/tiny-gpt.pipeline" | tr '\n' ' ')"
for rank in 0 1 2 3; do
  f="$OUT/tiny-gpt.pipeline/rank$rank.mlir"
  echo "  rank $rank: $(grep -c 'mpmd.run' "$f") runs, $(grep -c 'mpmd.send' "$f") sends, $(grep -c 'mpmd.recv' "$f") receives"
done
echo "-- simulated on an H100 (cost model, docs/cost-model.md), and its memory per rank"
"$BIN/tandem-opt" "$OUT/tiny-gpt.pipeline/pipeline.mlir" --mpmd-simulate="device=h100 svg=$OUT/tiny-gpt-1f1b-4x8.svg" --mpmd-memory -o /dev/null 2>&1 |
  grep -E 'remark: (simulated|rank [0-9]:)' | sed 's/^.*remark: /  /' | sort -u
echo "timeline: $OUT/tiny-gpt-1f1b-4x8.svg"
echo "-- training it for 20 steps, every rank on its own thread (tandem-eval --program)"
"$BIN/tandem-eval" "$OUT/tiny-gpt.pipeline/pipeline.mlir" --train --program pipeline \
  --steps 20 --eval-every 10 --eval-batches 4 --data "$ROOT/data/corpus.txt" \
  --save-params "$OUT/tiny-gpt.pipeline.safetensors" |
  awk '/^step/ && ($2 + 0) % 5 != 0 && ($2 + 0) != 19 {next} {print}'
echo "The one-stage program with the same 8 microbatches gives the same losses bit for bit (test/Pipeline)."

echo
echo "Demo done. Models and pass outputs are in $OUT."
