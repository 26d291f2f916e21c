# Network-namespace "hosts" for the multi-host tests. Source after lib.sh, then
#   make_hosts N        creates hosts ns1..nsN: each a network namespace (loopback up) joined
#                       by a veth pair to a bridge in this namespace; the bridge holds the
#                       launcher's address on the same private test subnet ($SUBNET). Writes
#                       $AGENT, a remote-shell agent that runs a command "on" a host:
#                       ip netns exec NS unshare --uts (own host name) sh -c CMD, as ssh would.
#   serve_tcp_shells    starts tcp_remote_shell.py's server in every host and writes
#                       $TCP_AGENT, an agent whose connection crosses the host's link (as an
#                       ssh connection does): cutting the link leaves both ends hanging.
# Everything is removed on exit (lib.sh's trap), also after a failure. Exits 77 (ctest skip)
# with the reason printed when this machine does not permit it.
skip() {
  echo "SKIP: $*"
  exit 77
}

make_hosts() {
  local count="$1" tag="rr$(( $$ % 100000 ))" octet=$(( $$ % 200 + 20 ))
  [ "$(id -u)" = 0 ] || skip "multi-host tests need root for ip netns (running as $(id -un))"
  command -v ip >/dev/null || skip "the ip command (iproute2) is not installed"
  command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
  SUBNET="10.231.$octet.0/24"
  BRIDGE="${tag}br"
  ip link add "$BRIDGE" type bridge 2>"$WORK/netns.err" ||
    skip "cannot create a bridge: $(cat "$WORK/netns.err")"
  CLEANUPS+=("ip link del $BRIDGE 2>/dev/null")
  ip addr add "10.231.$octet.1/24" dev "$BRIDGE" && ip link set "$BRIDGE" up ||
    fail "cannot configure $BRIDGE"
  AGENT="$WORK/agent.sh"
  {
    echo '#!/bin/sh'
    echo '# Test remote-shell agent: AGENT HOST CMD... runs CMD in HOST'"'"'s network namespace.'
    echo 'host="$1"; shift'
    echo 'case "$host" in'
  } >"$AGENT"
  HOST_NAMESPACES=()
  HOST_ADDRESSES=()
  local i ns
  for i in $(seq 1 "$count"); do
    ns="${tag}ns$i"
    ip netns add "$ns" 2>"$WORK/netns.err" || skip "ip netns is not permitted: $(cat "$WORK/netns.err")"
    CLEANUPS+=("ip netns del $ns 2>/dev/null")
    ip link add "${tag}h$i" type veth peer name "${tag}p$i" 2>"$WORK/netns.err" ||
      skip "cannot create veth pairs: $(cat "$WORK/netns.err")"
    CLEANUPS+=("ip link del ${tag}h$i 2>/dev/null")
    ip link set "${tag}h$i" master "$BRIDGE" && ip link set "${tag}h$i" up &&
      ip link set "${tag}p$i" netns "$ns" &&
      ip netns exec "$ns" ip addr add "10.231.$octet.$((10 + i))/24" dev "${tag}p$i" &&
      ip netns exec "$ns" ip link set "${tag}p$i" up &&
      ip netns exec "$ns" ip link set lo up || fail "cannot configure host ns$i"
    ip netns exec "$ns" unshare --uts true 2>"$WORK/netns.err" ||
      skip "unshare --uts is not permitted: $(cat "$WORK/netns.err")"
    echo "  ns$i) ns=$ns ;;" >>"$AGENT"
    HOST_NAMESPACES+=("$ns")
    HOST_ADDRESSES+=("10.231.$octet.$((10 + i))")
  done
  {
    echo '  *) echo "agent: no test host named $host" >&2; exit 255 ;;'
    echo 'esac'
    # As ssh does, the command starts from the host's login environment, not the launcher's:
    # whatever a rank needs beyond it must be forwarded by the launcher.
    echo 'exec env -i HOME="$HOME" USER="$(id -un)" LOGNAME="$(id -un)" SHELL=/bin/sh PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \'
    echo '  ip netns exec "$ns" unshare --uts sh -c '"'"'hostname "$1"; shift; eval "$*"'"'"' sh "$host" "$@"'
  } >>"$AGENT"
  chmod +x "$AGENT"
}

serve_tcp_shells() {
  local i ns port=7022 shell
  shell="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/tcp_remote_shell.py"
  TCP_AGENT="$WORK/tcp_agent.sh"
  {
    echo '#!/bin/sh'
    echo 'host="$1"; shift'
    echo 'case "$host" in'
  } >"$TCP_AGENT"
  for i in $(seq 1 "${#HOST_NAMESPACES[@]}"); do
    ns="${HOST_NAMESPACES[$((i - 1))]}"
    # Whatever runs in the host when the test ends goes (the server and what it started).
    CLEANUPS+=("ip netns pids $ns | xargs -r kill -9 2>/dev/null")
    ip netns exec "$ns" unshare --uts sh -c 'hostname "$1"; exec python3 "$2" serve "$3" "$4"' \
      sh "ns$i" "$shell" "${HOST_ADDRESSES[$((i - 1))]}" "$port" >"$WORK/tcp_shell$i.log" 2>&1 &
    disown
    echo "  ns$i) address=${HOST_ADDRESSES[$((i - 1))]} ;;" >>"$TCP_AGENT"
  done
  {
    echo '  *) echo "agent: no test host named $host" >&2; exit 255 ;;'
    echo 'esac'
    echo "exec python3 '$shell' run \"\$address\" $port \"\$@\""
  } >>"$TCP_AGENT"
  chmod +x "$TCP_AGENT"
  for i in $(seq 1 "${#HOST_NAMESPACES[@]}"); do
    for _ in $(seq 1 100); do
      grep -q serving "$WORK/tcp_shell$i.log" && break
      sleep 0.1
    done
    grep -q serving "$WORK/tcp_shell$i.log" || fail "the TCP remote shell of ns$i did not start"
  done
}

# netns_id N: the network namespace id (as /proc/self/ns/net shows it) of host nsN.
netns_id() { ip netns exec "${HOST_NAMESPACES[$(($1 - 1))]}" readlink /proc/self/ns/net; }

# hosts_empty: no process is left in any test host.
hosts_empty() {
  local ns i
  for i in $(seq 1 100); do
    local left=""
    for ns in "${HOST_NAMESPACES[@]}"; do left+=" $(ip netns pids "$ns" | tr '\n' ' ')"; done
    [ -z "${left// /}" ] && return 0
    sleep 0.1
  done
  ps -o pid,args -p "$(echo $left | tr ' ' ',')" >&2
  fail "processes are left in the test hosts after the launcher exited"
}
