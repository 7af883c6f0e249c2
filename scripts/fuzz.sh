#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/ with clang (libFuzzer, AddressSanitizer
# and UndefinedBehaviorSanitizer) over the runtime's reader sources, and runs
# each over its checked-in seed corpus (fuzz/corpus/<target>) for SECONDS
# (default 40; scripts/test.sh gives 4 targets 30 s each, 2 minutes in all).
#
#   scripts/fuzz.sh [SECONDS]
#
# New inputs go to <build>/fuzz/corpus-<target>, crashes to
# <build>/fuzz/crash-<target>-*, never into the checked-in corpus; a crash
# found becomes a regression test by copying it into fuzz/corpus/<target>.
# Prints one line per target (runs, new coverage, crashes) and exits
# non-zero when a target crashed, leaked, tripped a sanitizer, timed out or
# failed an invariant (docs/testing.md, "Fuzzing").
set -uo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SECONDS_EACH="${1:-40}"
BUILD_DIR="${TANDEM_BUILD_DIR:-$ROOT/build}"
OUT="$BUILD_DIR/fuzz"
CXX="${TANDEM_FUZZ_CXX:-clang++-22}"
if ! command -v "$CXX" > /dev/null; then
  echo "fuzz: $CXX not found (scripts/setup.sh installs clang-22 and libclang-rt-22-dev)"
  exit 1
fi
mkdir -p "$OUT"

# The readers under test and what they need, plain C++17 (no MLIR).
SOURCES=(FileIO Philox Init Safetensors TokenData JsonWriter Manifest
         ManifestWriter MemoryPlan TensorTypes Checkpoint)
FLAGS=(-std=c++17 -g -O1 -fno-omit-frame-pointer -Wno-deprecated-declarations
       -fsanitize=address,undefined -fno-sanitize-recover=undefined
       -I "$ROOT/runtime/include")
objects=()
for source in "${SOURCES[@]}"; do
  object="$OUT/$source.o"
  if [[ ! -f "$object" || "$ROOT/runtime/lib/$source.cpp" -nt "$object" ||
        -n "$(find "$ROOT/runtime/include" "$ROOT/runtime/lib" -name '*.h' -newer "$object" -print -quit)" ]]; then
    "$CXX" "${FLAGS[@]}" -fsanitize=fuzzer-no-link -c \
      "$ROOT/runtime/lib/$source.cpp" -o "$object" || exit 1
  fi
  objects+=("$object")
done

status=0
for target in manifest safetensors tokens checkpoint; do
  case $target in
    manifest) file=ManifestFuzzer ;;
    safetensors) file=SafetensorsFuzzer ;;
    tokens) file=TokensFuzzer ;;
    checkpoint) file=CheckpointFuzzer ;;
  esac
  binary="$OUT/$file"
  # The checkpoint target's fixed manifest: the tiny MLP's, from the corpus.
  "$CXX" "${FLAGS[@]}" -fsanitize=fuzzer "$ROOT/fuzz/$file.cpp" \
    -DTANDEM_FUZZ_MANIFEST="\"$ROOT/fuzz/corpus/manifest/tiny-mlp-1stage.json\"" \
    "${objects[@]}" -o "$binary" || { status=1; continue; }
  mkdir -p "$OUT/corpus-$target"
  log="$OUT/$target.log"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$binary" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$OUT/crash-$target-" \
    "$OUT/corpus-$target" "$ROOT/fuzz/corpus/$target" > "$log" 2>&1
  rc=$?
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$')
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+')
  crashes=$(ls "$OUT"/crash-"$target"-* 2>/dev/null | wc -l)
  echo "fuzz: $target: ${runs:-0} runs in ${SECONDS_EACH} s, coverage ${cov:-0} edges, exit $rc, ${crashes} crash file(s) in $OUT"
  if [[ $rc -ne 0 ]]; then
    status=1
    grep -E "ERROR|SUMMARY|runtime error|abort|Test unit written" "$log" | head -10
  fi
done
exit $status
