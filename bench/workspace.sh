# Sourced by the bench scripts once their options are read (BUILD set).
# bench_workspace [fresh]: BIN, the build's tools; WORK, a scratch directory
# removed on exit; TANDEM_CPU_CACHE, unless the caller set it: the build's
# shared compile cache, or with `fresh` one inside WORK (compiles included).
bench_workspace() {
  BIN="$BUILD/bin"
  WORK="$(mktemp -d)"
  trap 'rm -rf "$WORK"' EXIT
  local cache="$BUILD/cpu-cache"
  [[ "${1:-}" == fresh ]] && cache="$WORK/cache"
  export TANDEM_CPU_CACHE="${TANDEM_CPU_CACHE:-$cache}"
}
