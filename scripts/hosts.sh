#!/usr/bin/env bash
# Hosts made on this machine: network namespaces joined in a full mesh of
# veth links, each direction rate-limited with tc's token bucket filter, so
# that ranks on different "hosts" talk over slow links that nothing
# bypasses (docs/runtime.md, "Hosts on one machine"). Needs root and
# iproute2.
#
#   scripts/hosts.sh up N [--rate MBIT] [--name PREFIX]
#       makes hosts PREFIX0 ... PREFIX<N-1> (namespaces of those names;
#       default prefix "tandem-h"), linked pairwise; with --rate, every link
#       carries at most MBIT Mbit/s each way. Tears down an earlier set of
#       the same prefix first, and everything it made if a step fails.
#   scripts/hosts.sh down [--name PREFIX]
#       removes them (no error when there are none).
#   scripts/hosts.sh addr I J [--name PREFIX]
#       the address host I has on its link to host J.
#   scripts/hosts.sh mpirun [--name PREFIX] -- MPIRUN-ARGS...
#       runs mpirun inside host 0 (named after it) with one slot per host, rank r on host r,
#       MPI over TCP on the links only (no shared memory, no UCX), and the
#       other hosts reached through this script as mpirun's remote agent.
#   scripts/hosts.sh agent HOST COMMAND...
#       what mpirun calls to start its daemon on HOST: COMMAND run by a
#       shell inside HOST's namespace, with HOST as its hostname.
#
# Addresses: the link between hosts i < j is 10.77.<k>.0/30, k = the
# link's index in (0,1), (0,2), ..., (1,2), ...; host i has .1, host j .2.
# All links are inside 10.77.0.0/16, the one subnet MPI is told to use.
# Each host routes every other address of a peer through their own link,
# so whichever of a peer's addresses MPI picks, the traffic takes the
# direct (shaped) link.
set -euo pipefail

PREFIX=tandem-h
SUBNET=10.77.0.0/16
SCRIPT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"

die() {
  echo "hosts.sh: $*" >&2
  exit 1
}

# link_index I J: the index of the link between hosts I < J among N hosts
# (only the order matters, so it is computed without N).
link_index() {
  local i=$1 j=$2
  echo $((j * (j - 1) / 2 + i))
}

addr() {
  local i=$1 j=$2 k
  if ((i < j)); then
    k=$(link_index "$i" "$j")
    echo "10.77.$((k / 64)).$(((k % 64) * 4 + 1))"
  else
    k=$(link_index "$j" "$i")
    echo "10.77.$((k / 64)).$(((k % 64) * 4 + 2))"
  fi
}

hosts_of() {
  ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${PREFIX}[0-9]+$" || true
}

down() {
  local ns
  for ns in $(hosts_of); do
    ip netns del "$ns" 2>/dev/null || true
  done
}

up() {
  local n=$1 rate=$2 i j k a b
  ((n >= 1 && n <= 64)) || die "up: between 1 and 64 hosts, not $n"
  command -v ip >/dev/null || die "ip (iproute2) is not installed"
  [[ -z "$rate" ]] || command -v tc >/dev/null || die "tc (iproute2) is not installed"
  [[ $(id -u) -eq 0 ]] || die "making network namespaces needs root"
  down
  trap 'down; die "up: a step failed; removed what was made"' ERR
  for ((i = 0; i < n; ++i)); do
    ip netns add "$PREFIX$i"
    ip -n "$PREFIX$i" link set lo up
  done
  for ((j = 1; j < n; ++j)); do
    for ((i = 0; i < j; ++i)); do
      k=$(link_index "$i" "$j")
      a="tl${k}a"
      b="tl${k}b"
      ip link add "$a" netns "$PREFIX$i" type veth peer name "$b" netns "$PREFIX$j"
      ip -n "$PREFIX$i" addr add "$(addr "$i" "$j")/30" dev "$a"
      ip -n "$PREFIX$j" addr add "$(addr "$j" "$i")/30" dev "$b"
      ip -n "$PREFIX$i" link set "$a" up
      ip -n "$PREFIX$j" link set "$b" up
      if [[ -n "$rate" ]]; then
        # A bucket of 10 ms at the rate (the kernel needs more than one
        # timer tick's worth), at least 32 KiB: with 8 KiB, TCP through
        # the bucket reached only 76% of a 5 Mbit/s rate (test/Runtime/
        # shaped-links.test measures what comes through).
        local burst=$((rate * 1000000 / 8 / 100))
        ((burst >= 32768)) || burst=32768
        tc -n "$PREFIX$i" qdisc add dev "$a" root tbf rate "${rate}mbit" burst "$burst" latency 200ms
        tc -n "$PREFIX$j" qdisc add dev "$b" root tbf rate "${rate}mbit" burst "$burst" latency 200ms
      fi
    done
  done
  # Every address of a host is reachable from every other host over their
  # own link: MPI may pick any of a peer's addresses (one per link), and
  # only the link's own /30 is routed by itself. The kernel accepts a
  # packet for any of its addresses on any interface, so host i reaches
  # host j's address on the link j-k through the link i-j.
  for ((i = 0; i < n; ++i)); do
    for ((j = 0; j < n; ++j)); do
      ((i != j)) || continue
      for ((k = 0; k < n; ++k)); do
        ((k != j && k != i)) || continue
        ip -n "$PREFIX$i" route add "$(addr "$j" "$k")/32" via "$(addr "$j" "$i")"
      done
    done
  done
  trap - ERR
}

args=()
rate=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --name) PREFIX="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --) shift; args+=("--" "$@"); break ;;
    *) args+=("$1"); shift ;;
  esac
done
set -- "${args[@]}"
[[ $# -ge 1 ]] || die "usage: hosts.sh up N [--rate MBIT] | down | addr I J | mpirun -- ARGS | agent HOST CMD"
command=$1
shift
case "$command" in
  up)
    [[ $# -eq 1 && "$1" =~ ^[0-9]+$ ]] || die "usage: hosts.sh up N [--rate MBIT] [--name PREFIX]"
    [[ -z "$rate" || "$rate" =~ ^[0-9]+$ ]] || die "--rate takes whole Mbit/s, not '$rate'"
    up "$1" "$rate"
    ;;
  down)
    down
    ;;
  addr)
    [[ $# -eq 2 ]] || die "usage: hosts.sh addr I J"
    addr "$1" "$2"
    ;;
  agent)
    # mpirun's remote agent: "agent [-x] HOST COMMAND..." (Open MPI may pass
    # options first, as it would to ssh).
    while [[ "${1:-}" == -* ]]; do shift; done
    [[ $# -ge 2 ]] || die "agent: expected HOST COMMAND"
    host=$1
    shift
    ip netns list | awk '{print $1}' | grep -qx "$host" || die "agent: no host '$host'"
    # A UTS namespace of its own names the host: Open MPI keys its session
    # directory (/tmp/ompi.HOSTNAME.UID) by hostname, and with the
    # machine's name every host shared one with each other and with any
    # other mpirun on the machine, whose start-up and clean-up then raced
    # (6 of 90 starts hung before any output; none of 140 since).
    exec ip netns exec "$host" unshare --uts /bin/sh -c 'hostname "$0" && exec /bin/sh -c "$1"' "$host" "$*"
    ;;
  mpirun)
    [[ "${1:-}" == "--" ]] && shift
    mapfile -t hosts < <(hosts_of | sort -V)
    ((${#hosts[@]} >= 1)) || die "mpirun: no hosts; run 'hosts.sh up N' first"
    # Namespaces need root, and Open MPI refuses root unless told.
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    hostfile=$(mktemp)
    for h in "${hosts[@]}"; do echo "$h slots=1"; done > "$hostfile"
    status=0
    ip netns exec "${hosts[0]}" unshare --uts /bin/sh -c 'hostname "$0" && exec "$@"' "${hosts[0]}" \
      mpirun --hostfile "$hostfile" --map-by node \
      --mca plm_rsh_agent "$SCRIPT agent" --mca plm_rsh_no_tree_spawn 1 \
      --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include "$SUBNET" \
      --mca oob_tcp_if_include "$SUBNET" "$@" || status=$?
    rm -f "$hostfile"
    exit $status
    ;;
  *)
    die "unknown command '$command'"
    ;;
esac
