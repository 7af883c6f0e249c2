#!/usr/bin/env bash
# Builds the runtime as a project of its own (cmake -S runtime: no MLIR, as
# on a GPU machine) with its unit tests from googletest's sources (as
# scripts/gpu-check.sh builds them there) and runs them, checks that its
# tools link nothing of LLVM or MLIR, and trains the tiny GPT (2 stages, 3
# steps) with its tandem-run, ranks as threads (--transport inproc): the
# losses must be bitwise those of the main build's tandem-run. Then builds
# tandem-run once more as if MPI were not installed (as on the GPU machine),
# checks it links no MPI, and trains with its ranks as threads (--transport
# inproc), as processes it starts itself over the fake NCCL on fake GPUs,
# and as threads over one fake NCCL communicator (--launcher threads) on
# one fake GPU: the same losses.
#
#   scripts/check-runtime-alone.sh [BUILD_DIR]    (default: build)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="$(cd "${1:-$ROOT/build}" && pwd)"
ALONE="$BUILD_DIR/runtime-alone"
export CCACHE_BASEDIR="$ROOT" CCACHE_NOHASHDIR=1

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$ROOT/runtime" -B "$ALONE" -G Ninja "${launcher[@]}" \
  -DTANDEM_GTEST_SOURCE_DIR=/usr/src/googletest >/dev/null
ninja -C "$ALONE" >/dev/null
if ! ctest --test-dir "$ALONE" -j 2 >"$ALONE/unit-tests.log" 2>&1; then
  cat "$ALONE/unit-tests.log"
  echo "runtime alone: its unit tests failed"
  exit 1
fi

[[ -x "$ALONE/bin/tandem-run" ]] || { echo "runtime alone: tandem-run was not built"; exit 1; }
if ldd "$ALONE/bin/tandem-run" | grep -iE 'llvm|mlir'; then
  echo "runtime alone: tandem-run links LLVM or MLIR"
  exit 1
fi

work="$ALONE/check"
rm -rf "$work"
mkdir -p "$work"
if ! "$BUILD_DIR/bin/tandemc" "$ROOT/examples/tiny-gpt.mlir" -o "$work/tiny" \
  --stages 2 --microbatches 4 --target cpu >"$work/tandemc.log" 2>&1; then
  cat "$work/tandemc.log"
  exit 1
fi
run() {
  "$1" "$work/tiny" --data "$ROOT/data/corpus.txt" --steps 3 --threads 1 \
    --transport inproc | grep -oE '^step [0-9]+ loss [^ ]+'
}
run "$BUILD_DIR/bin/tandem-run" >"$work/main.loss"
run "$ALONE/bin/tandem-run" >"$work/alone.loss"
[[ $(wc -l <"$work/main.loss") -eq 3 ]] || { echo "runtime alone: no losses"; cat "$work/main.loss"; exit 1; }
if ! diff "$work/main.loss" "$work/alone.loss"; then
  echo "runtime alone: the losses differ from the main build's"
  exit 1
fi

NOMPI="$BUILD_DIR/runtime-no-mpi"
cmake -S "$ROOT/runtime" -B "$NOMPI" -G Ninja "${launcher[@]}" \
  -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON >/dev/null
ninja -C "$NOMPI" tandem-run >/dev/null
if ldd "$NOMPI/bin/tandem-run" | grep -iE 'libmpi|llvm|mlir'; then
  echo "runtime alone: tandem-run built without MPI still links MPI, LLVM or MLIR"
  exit 1
fi
"$NOMPI/bin/tandem-run" "$work/tiny" --data "$ROOT/data/corpus.txt" --steps 3 \
  --transport inproc | grep -oE '^step [0-9]+ loss [^ ]+' >"$work/no-mpi.loss"
if ! diff "$work/main.loss" "$work/no-mpi.loss"; then
  echo "runtime alone: tandem-run without MPI (ranks as threads) differs from the main build"
  exit 1
fi
# And as processes it starts itself (its default launcher without MPI),
# over NCCL on GPUs: the fake driver's and the fake NCCL.
mkdir -p "$work/comms"
env TANDEM_CUDA_DRIVER="$ALONE/unittests/libTandemFakeCudaDriver.so" \
  TANDEM_FAKE_CUDA_DEVICES=2 TANDEM_NCCL_LIBRARY="$ALONE/unittests/libTandemFakeNccl.so" \
  TANDEM_FAKE_NCCL_DIR="$work/comms" TANDEM_FAKE_NCCL_DEVICE_ONLY=1 \
  "$NOMPI/bin/tandem-run" "$work/tiny" --data "$ROOT/data/corpus.txt" --steps 3 \
  --device cuda --transport nccl | grep -oE '^step [0-9]+ loss [^ ]+' >"$work/no-mpi-local.loss"
if ! diff "$work/main.loss" "$work/no-mpi-local.loss"; then
  echo "runtime alone: tandem-run without MPI (local processes over NCCL) differs from the main build"
  exit 1
fi
# And as the tasks of a Slurm step (test/Runtime/Inputs/fake_srun.py), which
# meet rank 0 at a --rendezvous address instead of over MPI.
env TANDEM_CUDA_DRIVER="$ALONE/unittests/libTandemFakeCudaDriver.so" \
  TANDEM_FAKE_CUDA_DEVICES=2 TANDEM_NCCL_LIBRARY="$ALONE/unittests/libTandemFakeNccl.so" \
  TANDEM_FAKE_NCCL_DIR="$work/comms" TANDEM_FAKE_NCCL_DEVICE_ONLY=1 \
  python3 "$ROOT/test/Runtime/Inputs/fake_srun.py" 2 "$NOMPI/bin/tandem-run" "$work/tiny" \
  --data "$ROOT/data/corpus.txt" --steps 3 --device cuda --rendezvous '{rendezvous}' |
  grep -oE '^step [0-9]+ loss [^ ]+' >"$work/no-mpi-srun.loss"
if ! diff "$work/main.loss" "$work/no-mpi-srun.loss"; then
  echo "runtime alone: tandem-run without MPI (srun's tasks meeting at --rendezvous) differs from the main build"
  exit 1
fi
# And as threads over one NCCL communicator, every rank on the one GPU
# (only the fake NCCL lets ranks share a GPU).
env TANDEM_CUDA_DRIVER="$ALONE/unittests/libTandemFakeCudaDriver.so" \
  TANDEM_NCCL_LIBRARY="$ALONE/unittests/libTandemFakeNccl.so" \
  TANDEM_FAKE_NCCL_DIR="$work/comms" TANDEM_FAKE_NCCL_DEVICE_ONLY=1 \
  "$NOMPI/bin/tandem-run" "$work/tiny" --data "$ROOT/data/corpus.txt" --steps 3 \
  --device cuda --transport nccl --launcher threads 2>/dev/null |
  grep -oE '^step [0-9]+ loss [^ ]+' >"$work/no-mpi-threads.loss"
if ! diff "$work/main.loss" "$work/no-mpi-threads.loss"; then
  echo "runtime alone: tandem-run without MPI (threads over NCCL) differs from the main build"
  exit 1
fi

tests=$(grep -oE 'out of [0-9]+' "$ALONE/unit-tests.log" | grep -oE '[0-9]+' | tail -1)
echo "runtime alone: built without MLIR, its ${tests:-?} unit tests pass; 3 steps bitwise equal to the main build, also by a tandem-run built without MPI (threads, local processes over NCCL, srun's tasks at a --rendezvous address, and threads over NCCL)"
