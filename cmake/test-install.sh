#!/bin/sh
# End-to-end test of Tandem's install prefix (ctest: tandem-install-plugin,
# label "install"):
#   1. cmake --install BUILD_DIR into a scratch prefix,
#   2. configure and build examples/plugin against <prefix>/lib/cmake/tandem
#      in a scratch directory (nothing from the build or source tree's
#      headers or libraries may leak in),
#   3. load the plugin into <prefix>/bin/tandem-opt and FileCheck the output.
# Fails on the first thing that is wrong.
#
#   cmake/test-install.sh BUILD_DIR SOURCE_DIR FILECHECK [GENERATOR] [CXX]
#
# The scratch directory is BUILD_DIR/install-test, wiped on every run; its
# paths are fixed so that ccache (with CCACHE_BASEDIR, defaulting to
# SOURCE_DIR) hits across runs and across clones.
set -eu

if [ $# -lt 3 ]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR FILECHECK [GENERATOR] [CXX]" >&2
  exit 2
fi
build=$(cd "$1" && pwd -P)
src=$(cd "$2" && pwd -P)
filecheck=$3
generator=${4:-Ninja}
cxx=${5:-}

work=$build/install-test
prefix=$work/prefix
plugin_build=$work/plugin
rm -rf "$work"
mkdir -p "$work"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

echo "== cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" > "$work/install.log" ||
  { cat "$work/install.log" >&2; fail "cmake --install failed"; }

for f in bin/tandem-opt lib/libTandem.so \
  lib/cmake/tandem/TandemConfig.cmake \
  lib/cmake/tandem/TandemConfigVersion.cmake \
  lib/cmake/tandem/TandemTargets.cmake \
  include/tandem/InitAll.h \
  include/tandem/Runtime/Safetensors.h \
  include/tandem/Dialect/NN/IR/NNOps.h \
  include/tandem/Dialect/NN/IR/NNOps.td \
  include/tandem/Dialect/NN/IR/NNOps.h.inc \
  include/tandem/Dialect/NN/Transforms/Passes.h.inc; do
  [ -e "$prefix/$f" ] || fail "$prefix/$f was not installed"
done

# The installed package must not point back into the build or source tree.
if grep -rn -e "$build/lib" -e "$build/include" -e "$build/bin" \
  -e "$src/include" "$prefix/lib/cmake/tandem"; then
  fail "the installed CMake package refers to the build or source tree"
fi

# The installed tool must run on the installed library (install RPATH).
unset LD_LIBRARY_PATH
lib=$(ldd "$prefix/bin/tandem-opt" | awk '$1 == "libTandem.so" { print $3 }')
[ -n "$lib" ] && [ "$(readlink -f "$lib")" = "$prefix/lib/libTandem.so" ] ||
  fail "installed tandem-opt loads libTandem.so from '$lib', not $prefix/lib"

echo "== configure examples/plugin against $prefix/lib/cmake/tandem"
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$src}"
set -- -G "$generator" -S "$src/examples/plugin" -B "$plugin_build" \
  -DTandem_DIR="$prefix/lib/cmake/tandem" -DCMAKE_BUILD_TYPE=Release
if [ -n "$cxx" ]; then
  set -- "$@" -DCMAKE_CXX_COMPILER="$cxx"
fi
if command -v ccache > /dev/null 2>&1; then
  set -- "$@" -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
cmake "$@" > "$work/configure.log" 2>&1 ||
  { cat "$work/configure.log" >&2; fail "configuring examples/plugin failed"; }
grep -q "Using TandemConfig.cmake in: $prefix/lib/cmake/tandem" \
  "$work/configure.log" || fail "examples/plugin did not use $prefix"

echo "== build examples/plugin"
cmake --build "$plugin_build" > "$work/build.log" 2>&1 ||
  { cat "$work/build.log" >&2; fail "building examples/plugin failed"; }
plugin=$plugin_build/TandemExamplePlugin.so
[ -f "$plugin" ] || fail "$plugin was not built"
# Headers and library came from the prefix, not the build or source tree.
if grep -n -e "$build/include" -e "$src/include" -e "$build/lib/" \
  "$plugin_build/build.ninja" "$plugin_build/compile_commands.json" \
  2> /dev/null; then
  fail "examples/plugin was built against the build or source tree"
fi
lib=$(ldd "$plugin" | awk '$1 == "libTandem.so" { print $3 }')
[ -n "$lib" ] && [ "$(readlink -f "$lib")" = "$prefix/lib/libTandem.so" ] ||
  fail "the plugin links libTandem.so from '$lib', not $prefix/lib"

echo "== $prefix/bin/tandem-opt --load-pass-plugin=$plugin"
"$prefix/bin/tandem-opt" --load-pass-plugin="$plugin" --help > "$work/help.txt" ||
  fail "tandem-opt --load-pass-plugin --help failed"
grep -q -- "--example-param-stats" "$work/help.txt" ||
  fail "tandem-opt --help does not list the plugin's pass"
"$prefix/bin/tandem-opt" "$src/examples/plugin/example.mlir" \
  --load-pass-plugin="$plugin" \
  --pass-pipeline='builtin.module(example-param-stats)' \
  --mlir-print-op-on-diagnostic=false \
  > "$work/out.mlir" 2> "$work/remarks.txt" ||
  { cat "$work/remarks.txt" >&2; fail "running the plugin's pass failed"; }
"$filecheck" "$src/examples/plugin/example.mlir" --input-file="$work/out.mlir" ||
  fail "unexpected IR from the plugin's pass"
"$filecheck" "$src/examples/plugin/example.mlir" --check-prefix=REMARK \
  --input-file="$work/remarks.txt" ||
  fail "unexpected remarks from the plugin's pass"
echo "PASS: installed Tandem builds and loads examples/plugin"
