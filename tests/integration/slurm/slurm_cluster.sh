# shellcheck shell=bash disable=SC2034  # (SLURM_CLUSTER_* are set for the callers)
# Real Slurm clusters for integration tests: Debian 12's slurm-wlm 22.05 and munge, as root, no
# mocks. Source this file (bash), then:
#   slurm_cluster_start_one_node WORKDIR [CPUS]      one node "rrnode1" on 127.0.0.1 (CPUS, default
#                                                    4, may exceed the real cores: overcommitted)
#   slurm_cluster_start_two_nodes WORKDIR [CPUS]     nodes rrnode1, rrnode2 (CPUS each, default 2),
#                                                    each slurmd in its own network namespace
#   slurm_cluster_start_nodes WORKDIR N [CPUS]       the same with N namespace nodes
#   slurm_cluster_stop                               cancels every job, stops every daemon and task,
#                                                    removes the namespaces; non-zero if anything of
#                                                    this cluster is left
#   slurm_on_node I CMD...                           runs CMD "on" node I (1-based): in its network,
#                                                    UTS and mount namespaces (host name, /etc/hosts)
#   slurm_env                                        prints `export SLURM_CONF=...` (for eval)
#   slurm_sbatch_wait SBATCH_ARGS...                 sbatch --wait, polling every 0.1 s (--wait
#                                                    polls at 2, 4, 8, 10 s); the job's status
#   slurm_cluster_logs                               prints the tails of the daemons' logs
# A start returns 0 when every node is idle, 77 (with "SKIP: why" on stderr) when this machine
# cannot run it (not root, Slurm or munge missing, namespaces not permitted), 1 on a failure
# (daemon logs on stderr, and whatever was started is stopped again). After a start:
#   SLURM_CONF (exported: srun, salloc, sbatch, sinfo, scancel... use this cluster),
#   SLURM_CLUSTER_NAME (unique per run), SLURM_CLUSTER_WORKDIR, SLURM_CLUSTER_NODES (names),
#   SLURM_CLUSTER_ADDRS (their addresses), SLURM_CLUSTER_NETNS (namespace names, none for the
#   one-node cluster), SLURM_CLUSTER_SUBNET (namespace clusters), SLURM_CLUSTER_CTLD_ADDR.
#
# Layout: slurmctld and munged run in this network namespace; slurmctld in its own UTS and mount
# namespaces (host name rrctld, a private /etc/hosts naming it with its address), so that
# NoCtldInAddrAny binds it to that address only. The one-node slurmd runs on 127.0.0.1 in its
# own UTS and mount namespaces (host name = node name, a private /etc/hosts naming it). The
# namespace nodes hang off a bridge of this namespace on a private /24 of 10.232.X.0 (X unused
# here): the bridge has .1 (slurmctld's address), node I has .(10+I); each slurmd runs in its
# network namespace (nsenter; not `ip netns exec`, whose fresh /sys lacks the cgroup mounts that
# slurmd needs) under `unshare --uts --mount` (host name = node name, /etc/hosts naming every
# node bind-mounted); tasks inherit all of it. /etc/netns/NS/hosts holds the same names for
# `ip netns exec NS CMD`. No default route in the namespaces: traffic stays on loopback and the
# test's own namespaces.
# munged runs with its own key and socket (AuthInfo=socket=...), so a system munged, if any, is
# neither used nor disturbed; the socket is a file, reachable from every namespace.
# Everything is in WORKDIR (config, state, spool, logs, pid files) except the munge socket's
# directory (/tmp/rrslurm_munge.*: a socket's path must be short and its directories
# world-searchable). Slurm's own ports are picked free per run.
#
# Cleanup: the first start registers slurm_cluster_stop to run at exit: appended to lib.sh's
# CLEANUPS when that array exists, else chained before any EXIT trap already set (and INT/TERM
# turned into exit when no trap is set for them). A caller that sets its own EXIT trap after the
# start must call slurm_cluster_stop from it. Each cluster is also recorded under
# /tmp/runrun_slurm_harness.d; a start first tears down the clusters of runs that died (their
# owning shell is gone, e.g. after kill -9) and any namespace of this harness that no live run
# owns, and stops the cluster this shell still has running.

SLURM_HARNESS_REGISTRY="${SLURM_HARNESS_REGISTRY:-/tmp/runrun_slurm_harness.d}"
SLURM_HARNESS_START_TIMEOUT="${SLURM_HARNESS_START_TIMEOUT:-30}"
_SLURM_SBIN_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
_SLURM_TRAP_SET=""

_slurm_reset_state() {
  _SLURM_TAG="" _SLURM_W="" _SLURM_CONF_FILE="" _SLURM_MUNGE_DIR="" _SLURM_REC=""
  _SLURM_BRIDGE="" _SLURM_OCTET="" _SLURM_PORTS=""
  _SLURM_NETNS=() _SLURM_LINKS=() _SLURM_UTS=() _SLURM_NODE_PIDS=()
  _SLURM_CTLD_NAME=localhost _SLURM_CTLD_NAME_OK=1 _SLURM_CTLD_OWN_NS=""
}
_slurm_reset_state

_slurm_log() { echo "slurm_cluster: $*" >&2; }

# _slurm_proc_start PID: the start time of PID (clock ticks since boot), to tell reused pids.
_slurm_proc_start() { _slurm_stat_field "$1" 20; }

# _slurm_stat_field PID N: field N of /proc/PID/stat counted after the command name (1: state,
# 2: ppid, 20: start time), or "comm" for the command name. Bash builtins only: forks are slow.
_slurm_stat_field() {
  local s f
  read -r s 2>/dev/null <"/proc/$1/stat" || return 1
  if [ "$2" = comm ]; then
    s="${s#*(}"
    echo "${s%) *}"
    return 0
  fi
  s="${s##*) }"
  read -r -a f <<<"$s"
  echo "${f[$(($2 - 1))]}"
}

# _slurm_ancestors: this shell and its ancestors (never killed by a cleanup).
_slurm_ancestors() {
  local p="${BASHPID:-$$}" n=0
  echo "$$"
  while [ -n "$p" ] && [ "$p" -gt 1 ] && [ $n -lt 64 ]; do
    echo "$p"
    p="$(_slurm_stat_field "$p" 2)"
    n=$((n + 1))
  done
}

# _slurm_alive PID: PID runs (a zombie does not: where the container's init reaps no orphans,
# the daemons' double forks leave zombies behind).
_slurm_alive() {
  local s
  read -r s 2>/dev/null <"/proc/$1/stat" || return 1
  s="${s##*) }"
  [ "${s:0:1}" != Z ] && [ "${s:0:1}" != X ]
}

# _slurm_kill_pids WHAT PID...: TERM, then KILL after 3 s, waits at most 2 s more.
_slurm_kill_pids() {
  local what="$1" p i left
  shift
  [ $# -gt 0 ] || return 0
  kill -TERM "$@" 2>/dev/null || true
  for i in $(seq 1 30); do
    left=""
    for p in "$@"; do _slurm_alive "$p" && left+=" $p"; done
    [ -z "$left" ] && return 0
    sleep 0.1
  done
  _slurm_log "$what still running after SIGTERM, SIGKILL to$left"
  # shellcheck disable=SC2086
  kill -KILL $left 2>/dev/null || true
  for i in $(seq 1 20); do
    left=""
    for p in "$@"; do _slurm_alive "$p" && left+=" $p"; done
    [ -z "$left" ] && return 0
    sleep 0.1
  done
  return 1
}

# _slurm_pid_if_ours PIDFILE: the pid in PIDFILE if that process's command line names this
# cluster's working directory or munge directory (guards against reused pids).
_slurm_pid_if_ours() {
  local pid
  pid="$(cat "$1" 2>/dev/null)" || return 1
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" |
    grep -qF -e "$_SLURM_W/" -e "${_SLURM_MUNGE_DIR:-/nonexistent}/" || return 1
  echo "$pid"
}

# _slurm_daemon_pids: pids of this cluster's slurmctld, slurmd and munged (by command line).
_slurm_daemon_pids() {
  local p
  for p in $(pgrep -x 'slurmctld|slurmd|munged' 2>/dev/null); do
    _slurm_alive "$p" || continue
    tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" |
      grep -qF -e "$_SLURM_W/slurm.conf" -e "$_SLURM_W/munge/munge.key" \
        -e "${_SLURM_MUNGE_DIR:-/nonexistent}/" && echo "$p"
  done
  return 0
}

# _slurm_member_pids [strict]: every process of this cluster outside its daemons: in its network
# namespaces, in the UTS namespaces of its slurmds (slurmstepd, tasks), or with its SLURM_CONF
# in the environment (srun, salloc, sbatch, their tasks). With strict (a dead run's cluster: a
# UTS namespace's number may have been reused), a process of a UTS namespace counts only if it
# is a slurmstepd or has the cluster's SLURM_CONF. Never this shell or its ancestors, nor their
# children other than srun/salloc/sbatch/sattach.
_slurm_member_pids() {
  local strict="${1:-}" keep
  keep=" $(_slurm_ancestors | tr '\n' ' ') "
  # In a subshell without SLURM_CONF: the programs of this scan must not match it themselves.
  (
    unset SLURM_CONF
    local ns p f uts u ppid comm
    for ns in "${_SLURM_NETNS[@]}"; do ip netns pids "$ns" 2>/dev/null; done
    if [ -n "$_SLURM_CONF_FILE" ]; then
      for f in $(grep -lxzF "SLURM_CONF=$_SLURM_CONF_FILE" /proc/[0-9]*/environ 2>/dev/null); do
        p="${f#/proc/}"
        p="${p%/environ}"
        # A direct child of this shell (or of its ancestors) counts only if it is a Slurm
        # client: the others are this very scan's neighbours (`slurm_cluster_stop | tee`).
        ppid="$(_slurm_stat_field "$p" 2)"
        comm="$(_slurm_stat_field "$p" comm)"
        case "$keep" in
          *" $ppid "*) case "$comm" in srun | salloc | sbatch | sattach) echo "$p" ;; esac ;;
          *) echo "$p" ;;
        esac
      done
    fi
    if [ ${#_SLURM_UTS[@]} -gt 0 ]; then
      stat -L -c '%n %i' /proc/[0-9]*/ns/uts 2>/dev/null | while read -r f uts; do
        for u in "${_SLURM_UTS[@]}"; do
          [ "$u" = "uts:[$uts]" ] || continue
          p="${f#/proc/}"
          p="${p%/ns/uts}"
          if [ -z "$strict" ] || [ "$(_slurm_stat_field "$p" comm)" = slurmstepd ]; then echo "$p"; fi
        done
      done
    fi
  ) | sort -un | while read -r p; do
    case "$keep" in *" $p "*) continue ;; esac
    _slurm_alive "$p" && echo "$p"
  done
}

# _slurm_teardown [strict]: stops and removes the cluster described by the _SLURM_* variables.
_slurm_teardown() {
  local strict="${1:-}" rc=0 pids p ns i ids left
  [ -n "$_SLURM_W" ] || return 0
  if [ -n "$_SLURM_CONF_FILE" ] && [ -f "$_SLURM_CONF_FILE" ] &&
      p="$(_slurm_pid_if_ours "$_SLURM_W/run/slurmctld.pid")"; then
    # Cancel every job while slurmctld and the slurmds still run, so Slurm ends the tasks itself
    # (KillWait is 2 s); what is left after 6 s is killed below.
    ids="$(SLURM_CONF="$_SLURM_CONF_FILE" timeout 5 squeue -h -o %A 2>/dev/null | tr '\n' ' ')"
    if [ -n "${ids// /}" ]; then
      # shellcheck disable=SC2086
      SLURM_CONF="$_SLURM_CONF_FILE" timeout 5 scancel $ids 2>/dev/null || true
      for i in $(seq 1 60); do
        left="$(SLURM_CONF="$_SLURM_CONF_FILE" timeout 5 squeue -h -o %A 2>/dev/null)"
        [ -z "$left" ] && break
        sleep 0.1
      done
    fi
  fi
  # The slurmds, then slurmctld, then what is left of jobs and steps, munged last.
  pids=""
  for p in "$_SLURM_W"/run/slurmd.*.pid; do
    [ -f "$p" ] && pids+=" $(_slurm_pid_if_ours "$p")"
  done
  for p in $(_slurm_daemon_pids); do
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = slurmd ] && pids+=" $p"
  done
  # shellcheck disable=SC2046,SC2086
  _slurm_kill_pids slurmd $(echo $pids | tr ' ' '\n' | sort -un) || rc=1
  pids="$(_slurm_pid_if_ours "$_SLURM_W/run/slurmctld.pid")"
  for p in $(_slurm_daemon_pids); do
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = slurmctld ] && pids+=" $p"
  done
  # shellcheck disable=SC2046,SC2086
  _slurm_kill_pids slurmctld $(echo $pids | tr ' ' '\n' | sort -un) || rc=1
  # shellcheck disable=SC2046
  _slurm_kill_pids "processes of the cluster's jobs" $(_slurm_member_pids "$strict") || rc=1
  pids="$(_slurm_pid_if_ours "$_SLURM_W/run/munged.pid")"
  for p in $(_slurm_daemon_pids); do pids+=" $p"; done
  # shellcheck disable=SC2046,SC2086
  _slurm_kill_pids munged $(echo $pids | tr ' ' '\n' | sort -un) || rc=1

  for ns in "${_SLURM_NETNS[@]}"; do
    ip netns del "$ns" 2>/dev/null || true
    rm -rf "/etc/netns/$ns"
  done
  [ ${#_SLURM_NETNS[@]} -gt 0 ] && { rmdir /etc/netns 2>/dev/null || true; }  # if now empty
  for p in "${_SLURM_LINKS[@]}"; do ip link del "$p" 2>/dev/null || true; done
  [ -n "$_SLURM_BRIDGE" ] && { ip link del "$_SLURM_BRIDGE" 2>/dev/null || true; }
  [ -n "$_SLURM_MUNGE_DIR" ] && rm -rf "$_SLURM_MUNGE_DIR"

  # Verify: no daemon, task or namespace of this cluster is left.
  left="$(_slurm_daemon_pids | tr '\n' ' ')"
  left+="$(_slurm_member_pids "$strict" | tr '\n' ' ')"
  if [ -n "${left// /}" ]; then
    _slurm_log "processes of cluster ${_SLURM_TAG:-?} are left:"
    # shellcheck disable=SC2086
    ps -o pid=,args= -p "$(echo $left | tr ' ' ',')" >&2 || true
    rc=1
  fi
  for ns in "${_SLURM_NETNS[@]}"; do
    if ip netns list 2>/dev/null | grep -qw "$ns"; then
      _slurm_log "network namespace $ns is left"
      rc=1
    fi
  done
  if [ -n "$_SLURM_BRIDGE" ] && ip link show "$_SLURM_BRIDGE" >/dev/null 2>&1; then
    _slurm_log "bridge $_SLURM_BRIDGE is left"
    rc=1
  fi
  [ $rc = 0 ] && [ -n "$_SLURM_REC" ] && rm -f "$_SLURM_REC"
  return $rc
}

# _slurm_save_record: the cluster's description, for slurm_cluster_stop and for the cleanup of
# a run that died.
_slurm_save_record() {
  {
    echo "_R_OWNER=$$"
    echo "_R_OWNER_START=$(_slurm_proc_start $$)"
    declare -p _SLURM_TAG _SLURM_W _SLURM_CONF_FILE _SLURM_MUNGE_DIR _SLURM_REC _SLURM_BRIDGE \
      _SLURM_OCTET _SLURM_PORTS _SLURM_NETNS _SLURM_LINKS _SLURM_UTS
  } >"$_SLURM_REC.tmp" && mv "$_SLURM_REC.tmp" "$_SLURM_REC"
}

# _slurm_owner_alive RECORD: the shell that made RECORD still runs.
_slurm_owner_alive() {
  local _R_OWNER="" _R_OWNER_START=""
  eval "$(grep -E '^_R_OWNER(_START)?=' "$1")"
  [ -n "$_R_OWNER" ] && [ "$(_slurm_proc_start "$_R_OWNER" 2>/dev/null)" = "$_R_OWNER_START" ]
}

# _slurm_cleanup_stale: tears down clusters of dead runs, and namespaces/links of this harness
# (named rrsl<digits>...) that no live run owns. Called with the registry lock held.
_slurm_cleanup_stale() {
  local rec live_tags="" ns name tag
  for rec in "$SLURM_HARNESS_REGISTRY"/*.rec; do
    [ -f "$rec" ] || continue
    if _slurm_owner_alive "$rec"; then
      live_tags+=" $(sed -n 's/^declare -- _SLURM_TAG="\(.*\)"$/\1/p' "$rec") "
      continue
    fi
    _slurm_log "tearing down the cluster of a run that died ($rec)"
    (
      _slurm_reset_state
      # shellcheck disable=SC1090
      source "$rec"
      _slurm_teardown strict
    ) || _slurm_log "the cluster of $rec was not fully removed"
    rm -f "$rec"
  done
  for ns in $(ip netns list 2>/dev/null | awk '{ print $1 }'); do
    [[ "$ns" =~ ^(rrsl[0-9]+)n[0-9]+$ ]] || continue
    tag="${BASH_REMATCH[1]}"
    case "$live_tags" in *" $tag "*) continue ;; esac
    _slurm_log "removing the leftover network namespace $ns"
    # shellcheck disable=SC2046
    _slurm_kill_pids "processes in $ns" $(ip netns pids "$ns" 2>/dev/null) || true
    ip netns del "$ns" 2>/dev/null || true
    rm -rf "/etc/netns/$ns"
  done
  for name in $(ip -o link show 2>/dev/null | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }'); do
    [[ "$name" =~ ^(rrsl[0-9]+)(br|h[0-9]+)$ ]] || continue
    tag="${BASH_REMATCH[1]}"
    case "$live_tags" in *" $tag "*) continue ;; esac
    ip link del "$name" 2>/dev/null || true
  done
  for ns in /etc/netns/rrsl*; do
    [ -d "$ns" ] || continue
    [[ "${ns##*/}" =~ ^(rrsl[0-9]+)n[0-9]+$ ]] || continue
    case "$live_tags" in *" ${BASH_REMATCH[1]} "*) continue ;; esac
    ip netns list 2>/dev/null | grep -qw "${ns##*/}" || rm -rf "$ns"
  done
  for ns in /tmp/rrslurm_munge.*; do
    [ -d "$ns" ] || continue
    grep -lqsF "$ns" "$SLURM_HARNESS_REGISTRY"/*.rec || rm -rf "$ns"
  done
}

# _slurm_register_exit: slurm_cluster_stop runs when the calling script exits.
# shellcheck disable=SC2120  # `set --` below parses `trap -p`, it takes no argument
_slurm_register_exit() {
  [ "$_SLURM_TRAP_SET" = "$$" ] && return 0
  _SLURM_TRAP_SET="$$"
  if declare -p CLEANUPS 2>/dev/null | grep -q '^declare -a'; then
    CLEANUPS+=("slurm_cluster_stop")
    return 0
  fi
  local prev=""
  eval "set -- $(trap -p EXIT)"
  [ $# -ge 3 ] && prev="$3"
  # shellcheck disable=SC2064
  trap "slurm_cluster_stop; ${prev:-:}" EXIT
  [ -n "$(trap -p INT)" ] || trap 'exit 130' INT
  [ -n "$(trap -p TERM)" ] || trap 'exit 143' TERM
}

_slurm_port_free() {
  local p
  for p in "$@"; do
    ss -Hltn "sport = :$p" 2>/dev/null | grep -q . && return 1
    grep -qsE "^declare -- _SLURM_PORTS=\".*\\b$p\\b" "$SLURM_HARNESS_REGISTRY"/*.rec && return 1
  done
  return 0
}

_slurm_check_machine() {
  local c
  [ "$(id -u)" = 0 ] || { echo "SKIP: Slurm clusters need root (running as $(id -un))" >&2; return 77; }
  for c in slurmctld slurmd munged mungekey srun sinfo squeue scancel ss flock; do
    PATH="$PATH:$_SLURM_SBIN_PATH" command -v "$c" >/dev/null ||
      { echo "SKIP: $c is not installed (apt-get install slurm-wlm munge iproute2)" >&2; return 77; }
  done
  return 0
}

# _slurm_prepare WORKDIR NETNS_NODES: machine checks, stale cleanup, this shell's previous
# cluster stopped, WORKDIR laid out, tag/ports/subnet allocated and recorded, munged started.
_slurm_prepare() {
  local w="$1" nnet="$2" lockfd i o p1 rc
  _slurm_check_machine || return $?
  case ":$PATH:" in *:/usr/sbin:*) ;; *) PATH="$PATH:$_SLURM_SBIN_PATH" ;; esac
  [ -n "$_SLURM_TAG" ] && { slurm_cluster_stop || true; }
  _slurm_reset_state
  mkdir -p "$w" "$SLURM_HARNESS_REGISTRY" || return 1
  chmod 700 "$SLURM_HARNESS_REGISTRY"
  _SLURM_W="$(cd "$w" && pwd -P)"
  _slurm_register_exit

  exec {lockfd}>"$SLURM_HARNESS_REGISTRY/.lock"
  flock -w 60 "$lockfd" || { _slurm_log "cannot lock $SLURM_HARNESS_REGISTRY/.lock"; exec {lockfd}>&-; return 1; }
  _slurm_cleanup_stale
  # Daemons of an earlier cluster in this same WORKDIR whose record is gone.
  _SLURM_CONF_FILE="$_SLURM_W/slurm.conf"
  # shellcheck disable=SC2046
  _slurm_kill_pids "daemons of an earlier cluster in $_SLURM_W" $(_slurm_daemon_pids) || true
  for i in $(seq 0 99); do
    _SLURM_TAG="rrsl$(((${BASHPID:-$$} + i) % 100000))"
    [ -e "$SLURM_HARNESS_REGISTRY/$_SLURM_TAG.rec" ] && continue
    ip link show "${_SLURM_TAG}br" >/dev/null 2>&1 && continue
    break
  done
  _SLURM_REC="$SLURM_HARNESS_REGISTRY/$_SLURM_TAG.rec"
  for i in $(seq 1 200); do
    p1=$((20000 + (RANDOM % 6000) * 2))
    _slurm_port_free "$p1" "$((p1 + 1))" && break
  done
  _SLURM_PORTS="$p1 $((p1 + 1))"
  if [ "$nnet" -gt 0 ]; then
    for i in $(seq 0 199); do
      o=$(((${BASHPID:-$$} + i) % 200 + 20))
      ip -o -4 addr show 2>/dev/null | grep -qF " 10.232.$o." && continue
      grep -qsx "declare -- _SLURM_OCTET=\"$o\"" "$SLURM_HARNESS_REGISTRY"/*.rec && continue
      _SLURM_OCTET="$o"
      break
    done
    [ -n "$_SLURM_OCTET" ] || { _slurm_log "no free 10.232.X.0/24 subnet"; exec {lockfd}>&-; return 1; }
  fi
  _SLURM_MUNGE_DIR="$(mktemp -d /tmp/rrslurm_munge.XXXXXX)" && chmod 755 "$_SLURM_MUNGE_DIR"
  _slurm_save_record
  exec {lockfd}>&-

  rm -rf "$_SLURM_W"/{state,spool,log,run,munge} "$_SLURM_W"/{slurm.conf,cgroup.conf,hosts}
  mkdir -p "$_SLURM_W"/{state,spool,log,run,munge} || return 1
  chmod 700 "$_SLURM_W/munge"
  mungekey -c -b 1024 -k "$_SLURM_W/munge/munge.key" 2>"$_SLURM_W/log/mungekey.log" ||
    { _slurm_log "mungekey failed: $(cat "$_SLURM_W/log/mungekey.log")"; return 1; }
  env -i PATH="$_SLURM_SBIN_PATH" HOME=/root LANG=C munged \
    --socket="$_SLURM_MUNGE_DIR/munge.sock" --key-file="$_SLURM_W/munge/munge.key" \
    --log-file="$_SLURM_W/log/munged.log" --pid-file="$_SLURM_W/run/munged.pid" \
    --seed-file="$_SLURM_W/munge/munged.seed" --num-threads=4 </dev/null \
    >>"$_SLURM_W/log/munged.log" 2>&1
  rc=$?
  for i in $(seq 1 50); do
    [ -S "$_SLURM_MUNGE_DIR/munge.sock" ] && break
    sleep 0.1
  done
  if [ $rc != 0 ] || ! munge -S "$_SLURM_MUNGE_DIR/munge.sock" -n 2>/dev/null |
      unmunge -S "$_SLURM_MUNGE_DIR/munge.sock" >/dev/null 2>&1; then
    _slurm_log "munged did not start (exit status $rc)"
    return 1
  fi
  return 0
}

# _slurm_write_conf CTLD_ADDR CPUS NODE_LINE...: slurm.conf and cgroup.conf.
_slurm_write_conf() {
  local ctld="$1" cpus="$2" l
  shift 2
  local ports
  read -r -a ports <<<"$_SLURM_PORTS"
  SLURM_CLUSTER_NAME="rr${_SLURM_TAG#rrsl}x$RANDOM"
  {
    echo "# Generated by tests/integration/slurm/slurm_cluster.sh for one test run."
    echo "ClusterName=$SLURM_CLUSTER_NAME"
    echo "SlurmctldHost=$_SLURM_CTLD_NAME($ctld)"
    echo "SlurmctldPort=${ports[0]}"
    echo "SlurmdPort=${ports[1]}"
    # slurmctld listens only on the address its host name resolves to (CTLD_ADDR: loopback,
    # or the test bridge where slurmctld has its own host name and /etc/hosts), not on every one.
    [ -n "$_SLURM_CTLD_NAME_OK" ] && echo "CommunicationParameters=NoCtldInAddrAny"
    echo "AuthType=auth/munge"
    echo "AuthInfo=socket=$_SLURM_MUNGE_DIR/munge.sock"
    echo "CredType=cred/munge"
    echo "SlurmUser=root"
    echo "SlurmdUser=root"
    echo "StateSaveLocation=$_SLURM_W/state"
    echo "SlurmdSpoolDir=$_SLURM_W/spool/%n"
    echo "SlurmctldPidFile=$_SLURM_W/run/slurmctld.pid"
    echo "SlurmdPidFile=$_SLURM_W/run/slurmd.%n.pid"
    echo "SlurmctldLogFile=$_SLURM_W/log/slurmctld.log"
    echo "SlurmdLogFile=$_SLURM_W/log/slurmd.%n.log"
    echo "SlurmctldDebug=info"
    echo "SlurmdDebug=info"
    # No cgroups needed: processes are tracked through /proc, tasks are not bound.
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "JobAcctGatherType=jobacct_gather/none"
    echo "AccountingStorageType=accounting_storage/none"
    echo "JobCompType=jobcomp/none"
    echo "SwitchType=switch/none"
    echo "MpiDefault=none"
    echo "PropagateResourceLimits=NONE"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_Core"
    # The node lines' CPUs count even where the machine has fewer cores (overcommit).
    echo "SlurmdParameters=config_overrides"
    echo "ReturnToService=2"
    echo "KillWait=2"
    echo "MessageTimeout=10"
    echo "SlurmctldTimeout=30"
    echo "SlurmdTimeout=30"
    echo "InactiveLimit=0"
    echo "MinJobAge=60"
    for l in "$@"; do echo "$l"; done
    echo "PartitionName=rrpart Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
  } >"$_SLURM_W/slurm.conf"
  {
    echo "# Slurm 22.05's slurmd always loads a cgroup plugin; no limit is enforced with it."
    echo "CgroupPlugin=autodetect"
    echo "IgnoreSystemd=yes"
  } >"$_SLURM_W/cgroup.conf"
  _SLURM_CONF_FILE="$_SLURM_W/slurm.conf"
}

# _slurm_hosts_file FILE: this machine's /etc/hosts without the node names, plus every node.
_slurm_hosts_file() {
  local i
  {
    grep -vwE "$(echo rrctld "${SLURM_CLUSTER_NODES[@]}" | tr ' ' '|')" /etc/hosts 2>/dev/null
    echo "# slurm_cluster.sh $_SLURM_TAG"
    [ -n "$_SLURM_CTLD_OWN_NS" ] && echo "$SLURM_CLUSTER_CTLD_ADDR $_SLURM_CTLD_NAME"
    for i in "${!SLURM_CLUSTER_NODES[@]}"; do
      echo "${SLURM_CLUSTER_ADDRS[$i]} ${SLURM_CLUSTER_NODES[$i]}"
    done
  } >"$1"
}

_slurm_daemon_env() {
  env -i PATH="$_SLURM_SBIN_PATH" HOME=/root LANG=C SLURM_CONF="$_SLURM_CONF_FILE" "$@"
}

# _slurm_ctld_name ADDR: the controller's host name. slurmctld gets its own host name (rrctld)
# and an /etc/hosts naming it with ADDR, so that NoCtldInAddrAny binds it there (and only
# there). Without unshare: "localhost", bound to loopback for ADDR 127.0.0.1, else to every
# address.
_slurm_ctld_name() {
  _SLURM_CTLD_NAME=localhost _SLURM_CTLD_NAME_OK=1 _SLURM_CTLD_OWN_NS=""
  if unshare --uts --mount true 2>/dev/null; then
    _SLURM_CTLD_NAME=rrctld _SLURM_CTLD_OWN_NS=1
  elif [ "$1" != 127.0.0.1 ]; then
    _SLURM_CTLD_NAME_OK=""
  fi
}

_slurm_start_ctld() {
  if [ -n "$_SLURM_CTLD_OWN_NS" ]; then
    _slurm_daemon_env unshare --uts --mount sh -c \
      'hostname "$1" && mount --bind "$3" /etc/hosts && exec slurmctld -f "$2"' \
      sh "$_SLURM_CTLD_NAME" "$_SLURM_CONF_FILE" "$_SLURM_W/hosts"
  else
    _slurm_daemon_env slurmctld -f "$_SLURM_CONF_FILE"
  fi </dev/null >>"$_SLURM_W/log/slurmctld.out" 2>&1 ||
    { _slurm_log "slurmctld failed to start"; return 1; }
}

# _slurm_wait_node_pid I: waits for node I's slurmd pid file, records its pid and UTS namespace.
_slurm_wait_node_pid() {
  local name="${SLURM_CLUSTER_NODES[$1]}" i pid="" uts
  for i in $(seq 1 100); do
    pid="$(_slurm_pid_if_ours "$_SLURM_W/run/slurmd.$name.pid")" && break
    sleep 0.1
  done
  [ -n "$pid" ] || { _slurm_log "slurmd of $name did not start"; return 1; }
  _SLURM_NODE_PIDS[$1]="$pid"
  # Its own UTS namespace holds slurmd and everything it starts (never this shell's own).
  uts="$(readlink "/proc/$pid/ns/uts")"
  [ "$uts" != "$(readlink /proc/self/ns/uts)" ] && _SLURM_UTS[$1]="$uts"
  _slurm_save_record
}

# _slurm_wait_idle: every node idle within SLURM_HARNESS_START_TIMEOUT seconds.
_slurm_wait_idle() {
  local i states n="${#SLURM_CLUSTER_NODES[@]}" deadline
  deadline=$((SECONDS + SLURM_HARNESS_START_TIMEOUT))
  while [ $SECONDS -lt $deadline ]; do
    states="$(SLURM_CONF="$_SLURM_CONF_FILE" timeout 5 sinfo -h -N -o '%N %t' 2>/dev/null)"
    [ "$(grep -c ' idle$' <<<"$states")" = "$n" ] && return 0
    sleep 0.2
  done
  _slurm_log "the nodes are not idle after ${SLURM_HARNESS_START_TIMEOUT} s; sinfo says:"
  echo "$states" >&2
  return 1
}

_slurm_start_failed() {
  _slurm_log "start failed; daemon logs follow"
  slurm_cluster_logs >&2
  slurm_cluster_stop || true
  return 1
}

_slurm_finish_start() {
  export SLURM_CONF="$_SLURM_CONF_FILE"
  SLURM_CLUSTER_WORKDIR="$_SLURM_W"
  SLURM_CLUSTER_NETNS=("${_SLURM_NETNS[@]}")
}

slurm_cluster_start_one_node() {
  local w="${1:?usage: slurm_cluster_start_one_node WORKDIR [CPUS]}" cpus="${2:-4}" rc
  _slurm_prepare "$w" 0 || { rc=$?; [ $rc = 77 ] || _slurm_start_failed; return $rc; }
  SLURM_CLUSTER_NODES=(rrnode1)
  SLURM_CLUSTER_ADDRS=(127.0.0.1)
  SLURM_CLUSTER_SUBNET=""
  SLURM_CLUSTER_CTLD_ADDR=127.0.0.1
  _slurm_ctld_name 127.0.0.1
  _slurm_write_conf 127.0.0.1 "$cpus" "NodeName=rrnode1 NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN"
  _slurm_hosts_file "$_SLURM_W/hosts"
  mkdir -p "$_SLURM_W/spool/rrnode1"
  _slurm_start_ctld || { _slurm_start_failed; return 1; }
  if unshare --uts --mount true 2>/dev/null; then
    # Own host name and /etc/hosts (naming rrnode1) for slurmd and every task under it.
    _slurm_daemon_env unshare --uts --mount sh -c \
      'hostname "$1" && mount --bind "$3" /etc/hosts && exec slurmd -f "$2" -N "$1"' \
      sh rrnode1 "$_SLURM_CONF_FILE" "$_SLURM_W/hosts" </dev/null >>"$_SLURM_W/log/slurmd.out" 2>&1
  else
    _slurm_log "unshare --uts --mount is not permitted: tasks see this machine's host name"
    _slurm_daemon_env slurmd -f "$_SLURM_CONF_FILE" -N rrnode1 </dev/null >>"$_SLURM_W/log/slurmd.out" 2>&1
  fi
  _slurm_wait_node_pid 0 && _slurm_wait_idle || { _slurm_start_failed; return 1; }
  _slurm_finish_start
}

slurm_cluster_start_nodes() {
  local w="${1:?usage: slurm_cluster_start_nodes WORKDIR N [CPUS]}" n="${2:?}" cpus="${3:-2}" rc
  local i ns lines=() err
  _slurm_prepare "$w" "$n" || { rc=$?; [ $rc = 77 ] || _slurm_start_failed; return $rc; }
  err="$_SLURM_W/log/netns.err"
  SLURM_CLUSTER_SUBNET="10.232.$_SLURM_OCTET.0/24"
  SLURM_CLUSTER_CTLD_ADDR="10.232.$_SLURM_OCTET.1"
  SLURM_CLUSTER_NODES=() SLURM_CLUSTER_ADDRS=()
  for i in $(seq 1 "$n"); do
    SLURM_CLUSTER_NODES+=("rrnode$i")
    SLURM_CLUSTER_ADDRS+=("10.232.$_SLURM_OCTET.$((10 + i))")
    lines+=("NodeName=rrnode$i NodeAddr=10.232.$_SLURM_OCTET.$((10 + i)) CPUs=$cpus State=UNKNOWN")
  done
  _SLURM_BRIDGE="${_SLURM_TAG}br"
  _slurm_save_record
  if ! ip link add "$_SLURM_BRIDGE" type bridge 2>"$err"; then
    echo "SKIP: cannot create a bridge: $(cat "$err")" >&2
    _SLURM_BRIDGE=""
    slurm_cluster_stop || true
    return 77
  fi
  ip addr add "$SLURM_CLUSTER_CTLD_ADDR/24" dev "$_SLURM_BRIDGE" 2>>"$err" &&
    ip link set "$_SLURM_BRIDGE" up 2>>"$err" ||
    { _slurm_log "cannot configure $_SLURM_BRIDGE: $(cat "$err")"; _slurm_start_failed; return 1; }
  for i in $(seq 1 "$n"); do
    ns="${_SLURM_TAG}n$i"
    if ! ip netns add "$ns" 2>"$err"; then
      echo "SKIP: ip netns is not permitted: $(cat "$err")" >&2
      slurm_cluster_stop || true
      return 77
    fi
    _SLURM_NETNS+=("$ns")
    _SLURM_LINKS+=("${_SLURM_TAG}h$i")
    _slurm_save_record
    ip link add "${_SLURM_TAG}h$i" type veth peer name "${_SLURM_TAG}p$i" 2>"$err" &&
      ip link set "${_SLURM_TAG}h$i" master "$_SLURM_BRIDGE" 2>>"$err" &&
      ip link set "${_SLURM_TAG}h$i" up 2>>"$err" &&
      ip link set "${_SLURM_TAG}p$i" netns "$ns" 2>>"$err" &&
      ip -n "$ns" addr add "${SLURM_CLUSTER_ADDRS[$((i - 1))]}/24" dev "${_SLURM_TAG}p$i" 2>>"$err" &&
      ip -n "$ns" link set "${_SLURM_TAG}p$i" up 2>>"$err" &&
      ip -n "$ns" link set lo up 2>>"$err" ||
      { _slurm_log "cannot set up node $i's namespace: $(cat "$err")"; _slurm_start_failed; return 1; }
    if ! nsenter --net="/run/netns/$ns" unshare --uts --mount true 2>"$err"; then
      echo "SKIP: nsenter/unshare --uts --mount is not permitted: $(cat "$err")" >&2
      slurm_cluster_stop || true
      return 77
    fi
  done
  _slurm_ctld_name "$SLURM_CLUSTER_CTLD_ADDR"
  _slurm_write_conf "$SLURM_CLUSTER_CTLD_ADDR" "$cpus" "${lines[@]}"
  for i in $(seq 1 "$n"); do mkdir -p "$_SLURM_W/spool/rrnode$i"; done
  # The same names for `ip netns exec NS CMD` (it bind-mounts /etc/netns/NS/hosts).
  _slurm_hosts_file "$_SLURM_W/hosts"
  for ns in "${_SLURM_NETNS[@]}"; do
    mkdir -p "/etc/netns/$ns" && cp "$_SLURM_W/hosts" "/etc/netns/$ns/hosts"
  done
  _slurm_start_ctld || { _slurm_start_failed; return 1; }
  for i in $(seq 1 "$n"); do
    # Not `ip netns exec`: it mounts a new /sys, without the cgroup mounts that slurmd needs.
    _slurm_daemon_env nsenter --net="/run/netns/${_SLURM_TAG}n$i" unshare --uts --mount sh -c \
      'hostname "$1" && mount --bind "$3" /etc/hosts && exec slurmd -f "$2" -N "$1"' \
      sh "rrnode$i" "$_SLURM_CONF_FILE" "$_SLURM_W/hosts" \
      </dev/null >>"$_SLURM_W/log/slurmd.out" 2>&1 ||
      { _slurm_log "slurmd of rrnode$i failed to start"; _slurm_start_failed; return 1; }
  done
  for i in $(seq 0 $((n - 1))); do _slurm_wait_node_pid "$i" || { _slurm_start_failed; return 1; }; done
  _slurm_wait_idle || { _slurm_start_failed; return 1; }
  _slurm_finish_start
}

slurm_cluster_start_two_nodes() {
  slurm_cluster_start_nodes "${1:?usage: slurm_cluster_start_two_nodes WORKDIR [CPUS]}" 2 "${2:-2}"
}

slurm_cluster_stop() {
  local rc=0
  if [ -n "$_SLURM_TAG" ]; then
    _slurm_teardown || rc=1
    [ $rc = 0 ] || _slurm_log "cluster $_SLURM_TAG was not fully stopped (record kept: $_SLURM_REC)"
  fi
  if [ -n "${SLURM_CONF:-}" ] && [ "${SLURM_CONF}" = "$_SLURM_CONF_FILE" ]; then unset SLURM_CONF; fi
  _slurm_reset_state
  return $rc
}

# slurm_sbatch_wait SBATCH_ARGS...: like `sbatch --wait` (returns the job's exit status, 128+N
# if a signal N ended it, 1 if it never ran), but polls every 0.1 s instead of sbatch's 2, 4,
# 8, 10 s (a short job takes 10 s with --wait). Gives up after SLURM_HARNESS_JOB_TIMEOUT s
# (default 120), cancelling the job. Prints "Submitted batch job ID" as sbatch does.
# Batch jobs start about 1 s after their submission (3 s for the first after a start).
slurm_sbatch_wait() {
  local id info state code deadline=$((SECONDS + ${SLURM_HARNESS_JOB_TIMEOUT:-120}))
  id="$(sbatch --parsable "$@")" || return $?
  id="${id%%;*}"
  echo "Submitted batch job $id"
  while [ $SECONDS -lt $deadline ]; do
    info="$(scontrol -o show job "$id" 2>/dev/null)"
    state="$(sed -n 's/.* JobState=\([A-Z_]*\).*/\1/p' <<<"$info")"
    case "$state" in
      PENDING | CONFIGURING | RUNNING | COMPLETING | SUSPENDED | REQUEUED | RESIZING | "") sleep 0.1 ;;
      *)
        code="$(sed -n 's/.* ExitCode=\([0-9]*\):\([0-9]*\).*/\1 \2/p' <<<"$info")"
        set -- $code
        [ "${2:-0}" != 0 ] && return $((128 + $2))
        [ "$state" = COMPLETED ] && return "${1:-0}"
        [ "${1:-0}" != 0 ] && return "$1"
        _slurm_log "batch job $id ended in state $state"
        return 1 ;;
    esac
  done
  _slurm_log "batch job $id did not end within ${SLURM_HARNESS_JOB_TIMEOUT:-120} s; cancelling it"
  scancel "$id" 2>/dev/null
  return 124
}

slurm_env() { echo "export SLURM_CONF=$(printf %q "$_SLURM_CONF_FILE")"; }

slurm_on_node() {
  local i="${1:?usage: slurm_on_node I CMD...}"
  shift
  local pid="${_SLURM_NODE_PIDS[$((i - 1))]:-}"
  [ -n "$pid" ] || { _slurm_log "no node $i"; return 1; }
  if [ ${#_SLURM_NETNS[@]} -gt 0 ] || [ "$(readlink /proc/$pid/ns/uts)" != "$(readlink /proc/self/ns/uts)" ]; then
    nsenter -t "$pid" -n -u -m -- "$@"
  else
    "$@"
  fi
}

slurm_cluster_logs() {
  local f
  for f in "$_SLURM_W"/log/*; do
    [ -s "$f" ] || continue
    echo "--- $f"
    tail -n 30 "$f"
  done
}
