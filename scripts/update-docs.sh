#!/bin/sh
# Copies the reference docs generated from ODS (<build>/docs, target
# tandem-docs) over the checked-in ones in docs/reference.
#
#   scripts/update-docs.sh [BUILD_DIR]           build tandem-docs, copy
#   scripts/update-docs.sh --check [BUILD_DIR]   fail if docs/reference differs
#
# BUILD_DIR defaults to ./build. --check builds nothing (ctest runs it after a
# build as the docs-reference-up-to-date test).
set -eu

check=0
if [ "${1:-}" = "--check" ]; then
  check=1
  shift
fi
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$root/build"}
docs="NNDialect.md NNPasses.md MPMDDialect.md MPMDPasses.md LoweringPasses.md"

if [ "$check" = 1 ]; then
  stale=0
  for f in $docs; do
    if [ ! -f "$build/docs/$f" ]; then
      echo "error: $build/docs/$f is missing; build the tandem-docs target" >&2
      exit 1
    fi
    if ! diff -u "$root/docs/reference/$f" "$build/docs/$f"; then
      stale=1
    fi
  done
  if [ "$stale" = 1 ]; then
    echo "error: docs/reference is stale (ODS changed); run scripts/update-docs.sh $build and commit docs/reference" >&2
    exit 1
  fi
  echo "docs/reference is up to date"
  exit 0
fi

cmake --build "$build" --target tandem-docs
mkdir -p "$root/docs/reference"
for f in $docs; do
  cp "$build/docs/$f" "$root/docs/reference/$f"
  echo "updated docs/reference/$f"
done
