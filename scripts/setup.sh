#!/usr/bin/env bash
# Installs what Tandem needs from Debian, configures build/ and builds.
# Idempotent: a second run with nothing changed takes seconds.
#
# Environment:
#   TANDEM_BUILD_DIR   build directory (default: <repo>/build)
#   TANDEM_BUILD_TYPE  CMake build type for a fresh configure (default: Release)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${TANDEM_BUILD_DIR:-$ROOT/build}"
BUILD_TYPE="${TANDEM_BUILD_TYPE:-Release}"
LLVM_PREFIX=/usr/lib/llvm-22

PACKAGES=(
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  clang-format-22 libgtest-dev ninja-build ccache cmake g++ python3
  nlohmann-json3-dev libopenblas-openmp-dev openmpi-bin libopenmpi-dev
  clang-22 libclang-rt-22-dev iproute2
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# ccache keys on paths relative to the checkout, so a fresh clone elsewhere
# (CI) reuses the objects a session compiled.
export CCACHE_BASEDIR="$ROOT"
export CCACHE_NOHASHDIR=1

if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
  cmake -G Ninja -S "$ROOT" -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE="$BUILD_TYPE" \
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache \
    -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$LLVM_PREFIX/bin/lit" >/dev/null
fi

ninja -C "$BUILD_DIR" ${TANDEM_NINJA_FLAGS:-}

# The Python side: a virtual environment under the build folder with the
# pins of python/requirements.txt (the package index only) and the tandem
# package (python/pyproject.toml) installed editable, so `import tandem`
# drives this build's tools. Rebuilt when either file changes; a failure
# here leaves the C++ build usable and scripts/test.sh counts pytest failed.
VENV="$BUILD_DIR/venv"
py_hash=$(cat "$ROOT/python/requirements.txt" "$ROOT/python/pyproject.toml" | sha256sum | cut -d' ' -f1)
if [[ ! -x "$VENV/bin/python" || "$(cat "$VENV/requirements.sha256" 2>/dev/null)" != "$py_hash" ]]; then
  rm -rf "$VENV"
  pip=("$VENV/bin/python" -m pip install --quiet --disable-pip-version-check)
  if python3 -m venv "$VENV" && "${pip[@]}" -r "$ROOT/python/requirements.txt" &&
     "${pip[@]}" --no-deps -e "$ROOT/python"; then
    echo "$py_hash" > "$VENV/requirements.sha256"
  else
    echo "setup: could not create $VENV from python/requirements.txt and python/pyproject.toml" >&2
  fi
fi
