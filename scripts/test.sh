#!/usr/bin/env bash
# Builds everything and runs every suite: lit, gtest (through ctest), pytest
# where Python tests exist, a bounded fuzzing run of the runtime's readers and
# the compile pipeline (scripts/fuzz.sh, 2 minutes), the runtime built alone
# without MLIR (scripts/check-runtime-alone.sh), and the clang-format check.
# Exits non-zero if any suite fails; the last line sums up the test counts.
#
#   scripts/test.sh          the suites once, with the machine's own kernels
#   scripts/test.sh --isa    the suites once per ISA mode (docs/testing.md):
#                            OpenBLAS's AVX2 kernels (OPENBLAS_CORETYPE=Haswell)
#                            with XLA restricted to AVX2, then, on a CPU with
#                            AVX-512, OpenBLAS's AVX-512 kernels (SkylakeX)
#                            with XLA unrestricted; each restriction is checked
#                            (scripts/check-isa.py) before the suites run
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${TANDEM_BUILD_DIR:-$ROOT/build}"
LLVM_PREFIX=/usr/lib/llvm-22
cd "$ROOT"

isa=0
case "${1:-}" in
  "") ;;
  --isa) isa=1 ;;
  *) echo "usage: scripts/test.sh [--isa]"; exit 2 ;;
esac

bash "$ROOT/scripts/setup.sh" || { echo "test: setup/build failed"; exit 1; }

status=0
passed=0
failed=0
LOG_DIR="$BUILD_DIR/test-logs"
mkdir -p "$LOG_DIR"

# The JAX reference and the tandem package run in the virtual environment
# scripts/setup.sh made under the build folder (python/requirements.txt's
# pins, the package editable); its hash file says it is complete.
VENV="$BUILD_DIR/venv"
venv_ok=0
if compgen -G "$ROOT/python/tests/test_*.py" >/dev/null; then
  py_hash=$(cat "$ROOT/python/requirements.txt" "$ROOT/python/pyproject.toml" | sha256sum | cut -d' ' -f1)
  venv_ok=1
  if [[ ! -x "$VENV/bin/python" || "$(cat "$VENV/requirements.sha256" 2>/dev/null)" != "$py_hash" ]]; then
    echo "pytest: scripts/setup.sh could not create $VENV"
    venv_ok=2
  fi
fi

# Where the CUDA toolkit is installed, lit's CUDA tests must run
# (test/lit.cfg.py refuses to start without nvcc then).
if command -v nvcc >/dev/null 2>&1 || [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export TANDEM_REQUIRE_NVCC=1
fi

# run_suites LABEL: lit, ctest and pytest under the current environment,
# logs in $LOG_DIR/LABEL*.log, counts added to passed/failed.
run_suites() {
  local label=$1
  echo "== lit ($label)"
  "$LLVM_PREFIX/bin/lit" -sv --show-flakypass "$BUILD_DIR/test" 2>&1 | tee "$LOG_DIR/$label-lit.log"
  local lit_rc=${PIPESTATUS[0]}
  local lit_passed lit_failed
  lit_passed=$(grep -E '^\s*Passed\s*:' "$LOG_DIR/$label-lit.log" | grep -oE '[0-9]+' | head -1)
  lit_failed=$(grep -E '^\s*(Failed|Unresolved|Timed Out)\s*:' "$LOG_DIR/$label-lit.log" | grep -oE '^\s*[A-Za-z ]+:\s*[0-9]+' | grep -oE '[0-9]+$' | awk '{s+=$1} END {print s+0}')
  passed=$((passed + ${lit_passed:-0}))
  failed=$((failed + ${lit_failed:-0}))
  if [[ $lit_rc -ne 0 ]]; then status=1; [[ ${lit_failed:-0} -eq 0 ]] && failed=$((failed + 1)); fi

  echo "== ctest ($label)"
  ctest --test-dir "$BUILD_DIR" --output-on-failure -j2 2>&1 | tee "$LOG_DIR/$label-ctest.log"
  local ctest_rc=${PIPESTATUS[0]}
  local ctest_line ctest_failed ctest_total
  ctest_line=$(grep -E 'tests passed, [0-9]+ tests failed out of [0-9]+' "$LOG_DIR/$label-ctest.log" | tail -1)
  if [[ -n "$ctest_line" ]]; then
    ctest_failed=$(echo "$ctest_line" | sed -E 's/.*tests passed, ([0-9]+) tests failed out of ([0-9]+).*/\1/')
    ctest_total=$(echo "$ctest_line" | sed -E 's/.*tests passed, ([0-9]+) tests failed out of ([0-9]+).*/\2/')
    passed=$((passed + ctest_total - ctest_failed))
    failed=$((failed + ctest_failed))
  fi
  if [[ $ctest_rc -ne 0 ]]; then status=1; [[ -z "$ctest_line" ]] && failed=$((failed + 1)); fi

  [[ $venv_ok -eq 0 ]] && return
  echo "== pytest ($label)"
  local py_rc py_passed py_failed
  if [[ $venv_ok -eq 1 ]]; then
    TANDEM_BUILD_DIR="$BUILD_DIR" TANDEM_SOURCE_DIR="$ROOT" \
      "$VENV/bin/python" -m pytest -q -p no:cacheprovider -rs "$ROOT/python/tests" 2>&1 | tee "$LOG_DIR/$label-pytest.log"
    py_rc=${PIPESTATUS[0]}
  else
    py_rc=1
    : > "$LOG_DIR/$label-pytest.log"
  fi
  py_passed=$(grep -oE '[0-9]+ passed' "$LOG_DIR/$label-pytest.log" | tail -1 | grep -oE '[0-9]+')
  py_failed=$(grep -oE '[0-9]+ (failed|error)' "$LOG_DIR/$label-pytest.log" | grep -oE '[0-9]+' | awk '{s+=$1} END {print s+0}')
  passed=$((passed + ${py_passed:-0}))
  failed=$((failed + ${py_failed:-0}))
  if [[ $py_rc -ne 0 ]]; then status=1; [[ ${py_failed:-0} -eq 0 ]] && failed=$((failed + 1)); fi
}

# run_isa_mode MODE CORE XLA_ISA_FLAG: the suites with OpenBLAS's CORE
# kernels and XLA_FLAGS extended by XLA_ISA_FLAG (may be empty). A core type
# the machine presets is kept, never replaced or unset.
run_isa_mode() {
  local mode=$1 core=$2 xla_flag=$3
  (
    if [[ -n "${OPENBLAS_CORETYPE:-}" ]]; then
      echo "== isa $mode: OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE is preset by this machine; kept"
    else
      export OPENBLAS_CORETYPE=$core
    fi
    [[ -n "$xla_flag" ]] && export XLA_FLAGS="${XLA_FLAGS:+$XLA_FLAGS }$xla_flag"
    echo "== isa $mode: OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE XLA_FLAGS=${XLA_FLAGS:-}"
    if ! "$VENV/bin/python" "$ROOT/scripts/check-isa.py" "$mode"; then
      echo "fail 1" > "$LOG_DIR/isa-$mode.counts"
      exit 0
    fi
    status=0 passed=0 failed=0
    run_suites "isa-$mode"
    echo "$passed $failed $status" > "$LOG_DIR/isa-$mode.counts"
  )
  local p f s
  if read -r p f s < "$LOG_DIR/isa-$mode.counts" && [[ $p != fail ]]; then
    passed=$((passed + p)); failed=$((failed + f)); [[ $s -ne 0 ]] && status=1
  else
    failed=$((failed + 1)); status=1
  fi
}

if [[ $isa -eq 0 ]]; then
  run_suites default
else
  if [[ $venv_ok -ne 1 ]]; then
    echo "test --isa: the checks need the Python environment ($VENV)"
    exit 1
  fi
  run_isa_mode avx2 Haswell --xla_cpu_max_isa=AVX2
  if grep -qw avx512f /proc/cpuinfo; then
    run_isa_mode avx512 SkylakeX ""
  else
    echo "== isa avx512: skipped (this CPU has no AVX-512)"
  fi
fi

echo "== fuzz (6 targets, 20 s each)"
if TANDEM_BUILD_DIR="$BUILD_DIR" bash "$ROOT/scripts/fuzz.sh" 20; then
  passed=$((passed + 1))
else
  echo "fuzz: a target failed (scripts/fuzz.sh; crash inputs in $BUILD_DIR/fuzz)"
  failed=$((failed + 1))
  status=1
fi

echo "== runtime alone (cmake -S runtime, no MLIR)"
if bash "$ROOT/scripts/check-runtime-alone.sh" "$BUILD_DIR"; then
  passed=$((passed + 1))
else
  echo "runtime alone: failed (scripts/check-runtime-alone.sh)"
  failed=$((failed + 1))
  status=1
fi

# The GPU check's rehearsal (docs/runtime.md, "The GPU check"): its
# --prepare with emulated libraries, then --all from the packed archive on
# the fake CUDA driver and fake NCCL, so the script a GPU call runs has run
# here first, paths, comparisons and all.
echo "== GPU check rehearsal (scripts/gpu-check.sh, TANDEM_GPU_CHECK_EMULATE=1)"
rehearsal="$BUILD_DIR/gpu-rehearsal"
rm -rf "$rehearsal" && mkdir -p "$rehearsal"
if TANDEM_BUILD_DIR="$BUILD_DIR" TANDEM_GPU_CHECK_EMULATE=1 \
    bash "$ROOT/scripts/gpu-check.sh" --prepare >"$rehearsal/prepare.log" 2>&1 &&
  rm -rf "$BUILD_DIR/gpu-carry-emulated" &&
  TANDEM_BUILD_DIR="$BUILD_DIR" TANDEM_GPU_CHECK_EMULATE=1 TMPDIR="$rehearsal" \
    OUT="$rehearsal/out" bash "$ROOT/scripts/gpu-check.sh" --all >"$rehearsal/check.log" 2>&1; then
  cat "$rehearsal/out/summary"
  passed=$((passed + 1))
else
  tail -30 "$rehearsal/prepare.log" "$rehearsal/check.log" 2>/dev/null
  [[ -f "$rehearsal/out/summary" ]] && cat "$rehearsal/out/summary"
  echo "GPU check rehearsal: failed (logs in $rehearsal)"
  failed=$((failed + 1))
  status=1
fi

echo "== clang-format"
mapfile -t sources < <(git ls-files '*.cpp' '*.h' '*.cc' '*.cu' ':!:*.inc')
if clang-format-22 --dry-run --Werror "${sources[@]}"; then
  echo "clang-format: ${#sources[@]} files clean"
  passed=$((passed + 1))
else
  echo "clang-format: run 'clang-format-22 -i' on the files above"
  failed=$((failed + 1))
  status=1
fi

echo "$passed passed, $failed failed"
exit $status
