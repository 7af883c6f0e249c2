#!/usr/bin/env bash
# Builds the tools, the runtime and the unit tests with AddressSanitizer and
# UndefinedBehaviorSanitizer in a build folder of their own, and runs the
# lit and gtest suites with them (docs/testing.md, "Sanitizers"). Exits
# non-zero when a suite fails; a sanitizer report fails its test (UBSan
# halts on the first error).
#
#   scripts/sanitize.sh [BUILD_DIR]     default <checkout>/build-sanitize
#
# Debian's libMLIR.so and libLLVM.so are not instrumented: the checks cover
# Tandem's code, which is the code under test. Code generated at test time
# (rank libraries) is compiled without sanitizers. Leak detection is off:
# MLIR's registries and LLVM's command-line options are process-lifetime
# allocations LeakSanitizer would report at every exit. User poisoning is
# off too (see ASAN_OPTIONS below).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${1:-$ROOT/build-sanitize}"
LLVM_PREFIX="${LLVM_PREFIX:-/usr/lib/llvm-22}"
# -fno-sanitize=vptr: LLVM and MLIR are built without RTTI.
SANITIZE="-fsanitize=address,undefined -fno-sanitize=vptr -fno-sanitize-recover=undefined -fno-omit-frame-pointer"

export CCACHE_BASEDIR="$ROOT"
export CCACHE_NOHASHDIR=1
if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
  cmake -G Ninja -S "$ROOT" -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache \
    -DCMAKE_C_FLAGS="$SANITIZE" -DCMAKE_CXX_FLAGS="$SANITIZE" \
    -DCMAKE_EXE_LINKER_FLAGS="$SANITIZE" \
    -DCMAKE_SHARED_LINKER_FLAGS="$SANITIZE" \
    -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$LLVM_PREFIX/bin/lit" > /dev/null || exit 1
fi
ninja -C "$BUILD_DIR" || { echo "sanitize: build failed"; exit 1; }

# allow_user_poisoning=0: LLVM's BumpPtrAllocator, inlined into Tandem's
# instrumented code, poisons the memory it hands out; libMLIR's
# uninstrumented code then uses that memory legitimately, and ASan would
# report every such use (use-after-poison inside libMLIR.so).
# allocator_may_return_null=1: an allocation no machine can satisfy returns
# null, as malloc does, so the runtime's "cannot allocate" error is tested
# rather than ASan's own abort.
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:allow_user_poisoning=0:allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
status=0
echo "== lit (ASan + UBSan)"
"$LLVM_PREFIX/bin/lit" -sv --param sanitize=1 "$BUILD_DIR/test" 2>&1 | tee "$BUILD_DIR/sanitize-lit.log"
[[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
echo "== ctest (ASan + UBSan)"
(cd "$BUILD_DIR" && ctest --output-on-failure -j2 -E 'install|plugin|docs') 2>&1 |
  tee "$BUILD_DIR/sanitize-ctest.log"
[[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
grep -h "ERROR: AddressSanitizer\|runtime error:" "$BUILD_DIR"/sanitize-*.log | sort | uniq -c | head -20
echo "sanitize: $([[ $status -eq 0 ]] && echo clean || echo FAILED)"
exit $status
