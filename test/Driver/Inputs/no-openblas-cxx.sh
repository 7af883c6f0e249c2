#!/bin/sh
# The system compiler on a machine without OpenBLAS: the library it is asked
# to link is renamed to one that does not exist, so the real linker fails
# the way it does when libopenblas-openmp-dev is not installed.
for arg in "$@"; do
  shift
  if [ "$arg" = "-lopenblas" ]; then arg="-lopenblas-not-installed"; fi
  set -- "$@" "$arg"
done
exec c++ "$@"
