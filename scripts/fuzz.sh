#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/ with clang (libFuzzer, AddressSanitizer
# and UndefinedBehaviorSanitizer) over the runtime's reader sources and, in a
# build of their own, over the compile pipeline up to --emit=split, and runs
# each over its checked-in seed corpus (fuzz/corpus/<target>) for SECONDS
# (default 40; scripts/test.sh gives 6 targets 20 s each, 2 minutes in all).
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
         ManifestWriter MemoryPlan TransferWaits TensorTypes Checkpoint)
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

# The compile pipeline's targets (fuzz/PipelineFuzzer.cpp) need MLIR: a
# clang build of their own in $OUT/mlir (fuzz/CMakeLists.txt), every Tandem
# source it compiles instrumented; ccache keeps rebuilds short.
MLIR_BUILD="$OUT/mlir"
MLIR_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize=vptr -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
pipeline_built=1
if [[ ! -f "$MLIR_BUILD/build.ninja" ]]; then
  CCACHE_BASEDIR="$ROOT" CCACHE_NOHASHDIR=1 cmake -G Ninja -S "$ROOT" -B "$MLIR_BUILD" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_C_COMPILER="${CXX/clang++/clang}" \
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DCMAKE_CXX_FLAGS="$MLIR_FLAGS" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DTANDEM_FUZZ_PIPELINE=ON -DTANDEM_BUILD_TESTS=OFF \
    -DTANDEM_BUILD_EXAMPLES=OFF \
    -DMLIR_DIR="${LLVM_PREFIX:-/usr/lib/llvm-22}/lib/cmake/mlir" \
    > "$OUT/mlir-configure.log" 2>&1 || pipeline_built=0
fi
if [[ $pipeline_built -eq 1 ]]; then
  CCACHE_BASEDIR="$ROOT" CCACHE_NOHASHDIR=1 ninja -C "$MLIR_BUILD" \
    TandemFuzz-pipeline TandemFuzz-pipeline-gen > "$OUT/mlir-build.log" 2>&1 ||
    pipeline_built=0
fi

status=0
if [[ $pipeline_built -eq 0 ]]; then
  echo "fuzz: the pipeline targets did not build (see $OUT/mlir-*.log)"
  tail -20 "$OUT"/mlir-*.log
  status=1
fi
for target in manifest safetensors tokens checkpoint pipeline pipeline-gen; do
  case $target in
    manifest) file=ManifestFuzzer ;;
    safetensors) file=SafetensorsFuzzer ;;
    tokens) file=TokensFuzzer ;;
    checkpoint) file=CheckpointFuzzer ;;
    pipeline*) file=TandemFuzz-$target ;;
  esac
  binary="$OUT/$file"
  if [[ $target == pipeline* ]]; then
    [[ $pipeline_built -eq 1 ]] || continue
    binary="$MLIR_BUILD/fuzz/$file"
  else
    # The checkpoint target's fixed manifest: the tiny MLP's, from the
    # corpus.
    "$CXX" "${FLAGS[@]}" -fsanitize=fuzzer "$ROOT/fuzz/$file.cpp" \
      -DTANDEM_FUZZ_MANIFEST="\"$ROOT/fuzz/corpus/manifest/tiny-mlp-1stage.json\"" \
      "${objects[@]}" -o "$binary" || { status=1; continue; }
  fi
  mkdir -p "$OUT/corpus-$target"
  log="$OUT/$target.log"
  # LLVM's BumpPtrAllocator, inlined into instrumented Tandem code, poisons
  # memory that the uninstrumented libMLIR then uses (as in sanitize.sh).
  asan=detect_leaks=1
  [[ $target == pipeline* ]] && asan=$asan:allow_user_poisoning=0
  ASAN_OPTIONS=$asan UBSAN_OPTIONS=print_stacktrace=1 \
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
