#!/usr/bin/env bash
# Smoke test of slurm_cluster.sh with real Slurm (slurm-wlm 22.05, munge), as root. One node on
# 127.0.0.1: srun -n 2, srun -n 4 (4 CPUs configured on any machine), salloc, sbatch --wait,
# slurm_sbatch_wait (the job's exit status passed through), scancel of a running step ends its tasks in bounded time. Then a
# start after a run that was killed -9 with its cluster up (which it tears down), in the same
# working directory as before: two nodes, each slurmd in its own network namespace: srun -N 2
# -n 4 puts 2 tasks in each namespace (its address, its host name), every node resolves every
# node's name and reaches it, sbatch -N 2 runs its script on rrnode1 and its steps on both. Each
# stop leaves no daemon, task, namespace or link behind. Exit 0: passed, 1: failed, 77: skipped
# (not root, Slurm/munge not installed, namespaces not permitted). Prints the timings.
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=slurm_cluster.sh
source "$HERE/slurm_cluster.sh"
WORK="$(mktemp -d /tmp/runrun_slurm_smoke.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT  # slurm_cluster.sh chains slurm_cluster_stop before this at its start
MARK="rrsmoke$$x$RANDOM"
T_ALL="${EPOCHREALTIME/./}"

fail() {
  echo "FAIL: $*" >&2
  local f
  for f in "$WORK"/*.out "$WORK"/*.err; do
    [ -f "$f" ] && { echo "--- $f" >&2; tail -n 20 "$f" >&2; }
  done
  slurm_cluster_logs >&2
  exit 1
}
# since T: seconds since the microsecond timestamp T, as 1.234
since() {
  local us=$((${EPOCHREALTIME/./} - $1))
  printf '%d.%03d' $((us / 1000000)) $((us % 1000000 / 1000))
}
timing() { printf '  %-58s %7s s\n' "$1" "$(since "$2")"; }
# started RC WHAT: a start's result: 77 skips the test.
started() {
  [ "$1" = 77 ] && { echo "SKIP: $2: see above"; exit 77; }
  [ "$1" = 0 ] || fail "$2 failed"
}
# ours_left DIR: processes whose command line names DIR.
ours_left() { pgrep -af -- "$1/" || true; }

echo "== one node"
t=${EPOCHREALTIME/./}
slurm_cluster_start_one_node "$WORK/c" 4
started $? "slurm_cluster_start_one_node"
timing "start one node (munged, slurmctld, slurmd; node idle)" "$t"
[ -n "${SLURM_CONF:-}" ] && [ -f "$SLURM_CONF" ] || fail "SLURM_CONF is not set after the start"
node_host="$(slurm_on_node 1 hostname)"

t=${EPOCHREALTIME/./}
timeout 30 srun -n 2 hostname >"$WORK/srun2.out" 2>"$WORK/srun2.err" || fail "srun -n 2 hostname: exit $?"
timing "srun -n 2 hostname" "$t"
[ "$(sort "$WORK/srun2.out" | uniq -c | awk '{ print $1, $2 }')" = "2 $node_host" ] ||
  fail "srun -n 2 hostname printed $(tr '\n' ' ' <"$WORK/srun2.out"), expected $node_host twice"
[ "$node_host" = rrnode1 ] || echo "note: tasks see host name $node_host (no UTS namespace here)"

t=${EPOCHREALTIME/./}
timeout 30 srun -n 4 printenv SLURM_PROCID >"$WORK/srun4.out" 2>"$WORK/srun4.err" || fail "srun -n 4: exit $?"
timing "srun -n 4 (4 CPUs configured, overcommitted)" "$t"
[ "$(sort -n "$WORK/srun4.out" | tr '\n' ' ')" = "0 1 2 3 " ] || fail "srun -n 4: SLURM_PROCIDs $(tr '\n' ' ' <"$WORK/srun4.out")"

t=${EPOCHREALTIME/./}
timeout 30 salloc -n 2 sh -c 'echo "ALLOC job=$SLURM_JOB_ID ntasks=$SLURM_NTASKS"; srun hostname' \
  >"$WORK/salloc.out" 2>"$WORK/salloc.err" || fail "salloc -n 2: exit $?"
timing "salloc -n 2 sh -c 'srun hostname'" "$t"
grep -Eq '^ALLOC job=[0-9]+ ntasks=2$' "$WORK/salloc.out" || fail "salloc's command saw no 2-task allocation"
[ "$(grep -cx "$node_host" "$WORK/salloc.out")" = 2 ] || fail "srun inside salloc did not run 2 tasks"

# scancel of a running step: srun exits and its tasks are gone within bounded time.
timeout 60 srun -n 2 -J "$MARK" bash -c "echo started; exec -a $MARK-task sleep 300" \
  >"$WORK/cancel.out" 2>"$WORK/cancel.err" &
srun_pid=$!
for _ in $(seq 1 200); do
  [ "$(grep -c started "$WORK/cancel.out" 2>/dev/null)" = 2 ] && break
  kill -0 $srun_pid 2>/dev/null || fail "srun of the job to cancel ended early"
  sleep 0.1
done
[ "$(grep -c started "$WORK/cancel.out")" = 2 ] || fail "the job to cancel did not start 2 tasks"
[ "$(pgrep -fc -- "^$MARK-task")" = 2 ] || fail "the 2 tasks of the job to cancel are not running"
job="$(squeue -h -n "$MARK" -o %A)"
[ -n "$job" ] || fail "squeue does not show the running job $MARK"
t=${EPOCHREALTIME/./}
scancel "$job" || fail "scancel $job: exit $?"
timeout 15 tail --pid=$srun_pid -f /dev/null || fail "srun did not exit within 15 s of scancel"
wait $srun_pid
rc=$?
for _ in $(seq 1 100); do
  pgrep -f -- "^$MARK-task" >/dev/null || break
  sleep 0.1
done
pgrep -f -- "^$MARK-task" >/dev/null && fail "tasks of the cancelled job still run 10 s after srun exited"
timing "scancel of a running srun: srun and its tasks ended" "$t"
[ $rc != 0 ] || fail "srun of the cancelled job exited 0"

printf '#!/bin/sh\nsrun printenv SLURM_PROCID\necho "BATCH on $(hostname) job=$SLURM_JOB_ID"\n' >"$WORK/ok.sbatch"
printf '#!/bin/sh\nexit 3\n' >"$WORK/exit3.sbatch"
t=${EPOCHREALTIME/./}
timeout 60 sbatch --wait -n 2 -o "$WORK/batch.out" "$WORK/ok.sbatch" >"$WORK/sbatch.err" 2>&1 ||
  fail "sbatch --wait -n 2: exit $?"
timing "sbatch --wait -n 2 (script runs srun)" "$t"
[ "$(grep -Ex '[0-9]+' "$WORK/batch.out" | sort -n | tr '\n' ' ')" = "0 1 " ] || fail "the batch step did not run 2 tasks"
grep -Eq "^BATCH on $node_host job=[0-9]+$" "$WORK/batch.out" || fail "the batch script did not run to its end"
t=${EPOCHREALTIME/./}
slurm_sbatch_wait -n 1 -o /dev/null "$WORK/exit3.sbatch" >"$WORK/sbatch3w.err" 2>&1
rc=$?
timing "slurm_sbatch_wait of a script that exits 3" "$t"
[ $rc = 3 ] || fail "slurm_sbatch_wait of a script exiting 3: exit $rc, expected 3"

t=${EPOCHREALTIME/./}
slurm_cluster_stop || fail "slurm_cluster_stop (one node) left something behind"
timing "stop one node" "$t"
left="$(ours_left "$WORK/c")"
[ -z "$left" ] && ! pgrep -f -- "$MARK" >/dev/null || fail "processes are left after the stop: $left"
[ -z "${SLURM_CONF:-}" ] || fail "SLURM_CONF is still set after the stop"

echo "== a run killed -9 with its cluster up, then two nodes in the same working directory"
t=${EPOCHREALTIME/./}
{
  bash -c 'source "$1"; slurm_cluster_start_one_node "$2" 2 >"$2.start.out" 2>&1 || exit 1
    kill -KILL $$' sh "$HERE/slurm_cluster.sh" "$WORK/killed" >/dev/null
  rc=$?
} 2>/dev/null  # no "Killed" notice
[ $rc = 137 ] || fail "the run to kill did not start its cluster: $(cat "$WORK/killed.start.out")"
[ -n "$(ours_left "$WORK/killed")" ] || fail "the killed run left no daemon to clean up (test broken)"
timing "start one node in a run that is then killed -9" "$t"

t=${EPOCHREALTIME/./}
slurm_cluster_start_two_nodes "$WORK/c" 2>"$WORK/start2.err"
started $? "slurm_cluster_start_two_nodes"
timing "start two nodes (after tearing down the killed run's)" "$t"
left="$(ours_left "$WORK/killed")"
[ -z "$left" ] || fail "the start did not tear down the killed run's cluster: $left"
[ ${#SLURM_CLUSTER_NETNS[@]} = 2 ] || fail "two nodes but ${#SLURM_CLUSTER_NETNS[@]} namespaces"
addr1="${SLURM_CLUSTER_ADDRS[0]}" addr2="${SLURM_CLUSTER_ADDRS[1]}"
net0="$(readlink /proc/self/ns/net)"

t=${EPOCHREALTIME/./}
timeout 30 srun -N 2 -n 4 bash -c 'echo "TASK $SLURM_PROCID $SLURM_NODEID $(hostname)" \
  "$(ip -o -4 addr show | awk "\$2 != \"lo\" { sub(/\/.*/, \"\", \$4); print \$4 }" | tr "\n" ,)" \
  "$(readlink /proc/self/ns/net)"' >"$WORK/srun_n2.out" 2>"$WORK/srun_n2.err" ||
  fail "srun -N 2 -n 4: exit $?"
timing "srun -N 2 -n 4" "$t"
[ "$(grep -c '^TASK ' "$WORK/srun_n2.out")" = 4 ] || fail "srun -N 2 -n 4 did not run 4 tasks"
for r in 0 1 2 3; do
  n=$((r / 2 + 1))
  a="${SLURM_CLUSTER_ADDRS[$((n - 1))]}"
  grep -Eq "^TASK $r $((n - 1)) rrnode$n $a, " "$WORK/srun_n2.out" ||
    fail "task $r is not on rrnode$n with (only) address $a"
done
[ "$(awk '/^TASK /{ print ($2 >= 2), $NF }' "$WORK/srun_n2.out" | sort -u | wc -l)" = 2 ] ||
  fail "the tasks of one node are not all in one network namespace"
[ "$(awk '/^TASK /{ print $NF }' "$WORK/srun_n2.out" | sort -u | wc -l)" = 2 ] ||
  fail "the two nodes' tasks share a network namespace"
grep -qF "$net0" "$WORK/srun_n2.out" && fail "tasks run in the caller's network namespace"

# Each node resolves every node's name and reaches it (rrnode1's slurmd port, through the bridge).
port="$(sed -n 's/^SlurmdPort=//p' "$SLURM_CONF")"
t=${EPOCHREALTIME/./}
timeout 30 srun -N 2 -n 2 bash -c 'getent hosts rrnode1 rrnode2 | awk "{ print \"RESOLVE $SLURM_NODEID\", \$2, \$1 }"
  exec 3<>"/dev/tcp/rrnode1/$1" && echo "REACH $SLURM_NODEID rrnode1"' sh "$port" \
  >"$WORK/resolve.out" 2>"$WORK/resolve.err" || fail "srun -N 2 (resolve, connect): exit $?"
timing "srun -N 2 -n 2 (getent hosts, TCP connect to rrnode1)" "$t"
for n in 0 1; do
  grep -qx "RESOLVE $n rrnode1 $addr1" "$WORK/resolve.out" || fail "node $n does not resolve rrnode1 to $addr1"
  grep -qx "RESOLVE $n rrnode2 $addr2" "$WORK/resolve.out" || fail "node $n does not resolve rrnode2 to $addr2"
  grep -qx "REACH $n rrnode1" "$WORK/resolve.out" || fail "node $n cannot connect to rrnode1:$port"
done

printf '#!/bin/sh\necho "BATCH on $(hostname)"\nsrun hostname\n' >"$WORK/n2.sbatch"
t=${EPOCHREALTIME/./}
slurm_sbatch_wait -N 2 -n 4 -o "$WORK/batch2.out" "$WORK/n2.sbatch" >"$WORK/sbatch2.err" 2>&1 ||
  fail "slurm_sbatch_wait -N 2 -n 4: exit $?"
timing "slurm_sbatch_wait -N 2 -n 4 (script runs srun)" "$t"
grep -qx "BATCH on rrnode1" "$WORK/batch2.out" || fail "the batch script did not run on rrnode1"
[ "$(grep -cx rrnode1 "$WORK/batch2.out")/$(grep -cx rrnode2 "$WORK/batch2.out")" = 2/2 ] ||
  fail "the batch step did not run 2 tasks on each node"

netns=("${SLURM_CLUSTER_NETNS[@]}")
t=${EPOCHREALTIME/./}
slurm_cluster_stop || fail "slurm_cluster_stop (two nodes) left something behind"
timing "stop two nodes" "$t"
left="$(ours_left "$WORK/c")"
[ -z "$left" ] || fail "processes are left after the stop: $left"
for ns in "${netns[@]}"; do
  ip netns list | grep -qw "$ns" && fail "network namespace $ns is left"
  [ -e "/etc/netns/$ns" ] && fail "/etc/netns/$ns is left"
  ip link show "${ns%n[0-9]*}br" >/dev/null 2>&1 && fail "the bridge of $ns is left"
done
timing "total" "$T_ALL"
echo "PASS: slurm_smoke"
