#!/usr/bin/env bash
# Builds everything and runs every suite: lit, gtest (through ctest), pytest
# where Python tests exist, and the clang-format check. Exits non-zero if any
# suite fails; the last line sums up the test counts.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${TANDEM_BUILD_DIR:-$ROOT/build}"
LLVM_PREFIX=/usr/lib/llvm-22
cd "$ROOT"

bash "$ROOT/scripts/setup.sh" || { echo "test: setup/build failed"; exit 1; }

status=0
passed=0
failed=0
LOG_DIR="$BUILD_DIR/test-logs"
mkdir -p "$LOG_DIR"

echo "== lit"
"$LLVM_PREFIX/bin/lit" -sv "$BUILD_DIR/test" 2>&1 | tee "$LOG_DIR/lit.log"
lit_rc=${PIPESTATUS[0]}
lit_passed=$(grep -E '^\s*Passed\s*:' "$LOG_DIR/lit.log" | grep -oE '[0-9]+' | head -1)
lit_failed=$(grep -E '^\s*(Failed|Unresolved|Timed Out)\s*:' "$LOG_DIR/lit.log" | grep -oE '^\s*[A-Za-z ]+:\s*[0-9]+' | grep -oE '[0-9]+$' | awk '{s+=$1} END {print s+0}')
passed=$((passed + ${lit_passed:-0}))
failed=$((failed + ${lit_failed:-0}))
if [[ $lit_rc -ne 0 ]]; then status=1; [[ ${lit_failed:-0} -eq 0 ]] && failed=$((failed + 1)); fi

echo "== ctest"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j2 2>&1 | tee "$LOG_DIR/ctest.log"
ctest_rc=${PIPESTATUS[0]}
ctest_line=$(grep -E 'tests passed, [0-9]+ tests failed out of [0-9]+' "$LOG_DIR/ctest.log" | tail -1)
if [[ -n "$ctest_line" ]]; then
  ctest_failed=$(echo "$ctest_line" | sed -E 's/.*tests passed, ([0-9]+) tests failed out of ([0-9]+).*/\1/')
  ctest_total=$(echo "$ctest_line" | sed -E 's/.*tests passed, ([0-9]+) tests failed out of ([0-9]+).*/\2/')
  passed=$((passed + ctest_total - ctest_failed))
  failed=$((failed + ctest_failed))
fi
if [[ $ctest_rc -ne 0 ]]; then status=1; [[ -z "$ctest_line" ]] && failed=$((failed + 1)); fi

if compgen -G "$ROOT/python/tests/test_*.py" >/dev/null; then
  echo "== pytest"
  # The JAX reference runs in a virtual environment under the build folder,
  # installed from the package index with the pins of python/requirements.txt;
  # it is reused while that file is unchanged (its hash is kept in the venv).
  VENV="$BUILD_DIR/venv"
  REQS="$ROOT/python/requirements.txt"
  req_hash=$(sha256sum "$REQS" | cut -d' ' -f1)
  venv_ok=1
  if [[ ! -x "$VENV/bin/python" || "$(cat "$VENV/requirements.sha256" 2>/dev/null)" != "$req_hash" ]]; then
    rm -rf "$VENV"
    if python3 -m venv "$VENV" &&
       "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$REQS"; then
      echo "$req_hash" > "$VENV/requirements.sha256"
    else
      echo "pytest: could not create $VENV from $REQS"
      venv_ok=0
    fi
  fi
  if [[ $venv_ok -eq 1 ]]; then
    TANDEM_BUILD_DIR="$BUILD_DIR" TANDEM_SOURCE_DIR="$ROOT" \
      "$VENV/bin/python" -m pytest -q -p no:cacheprovider -rs "$ROOT/python/tests" 2>&1 | tee "$LOG_DIR/pytest.log"
    py_rc=${PIPESTATUS[0]}
  else
    py_rc=1
    : > "$LOG_DIR/pytest.log"
  fi
  py_passed=$(grep -oE '[0-9]+ passed' "$LOG_DIR/pytest.log" | tail -1 | grep -oE '[0-9]+')
  py_failed=$(grep -oE '[0-9]+ (failed|error)' "$LOG_DIR/pytest.log" | grep -oE '[0-9]+' | awk '{s+=$1} END {print s+0}')
  passed=$((passed + ${py_passed:-0}))
  failed=$((failed + ${py_failed:-0}))
  if [[ $py_rc -ne 0 ]]; then status=1; [[ ${py_failed:-0} -eq 0 ]] && failed=$((failed + 1)); fi
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
