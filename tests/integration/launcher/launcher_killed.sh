#!/usr/bin/env bash
# kill -9 of the launcher (an OOM kill, a lost login session) leaves nothing behind: mpirun and
# every rank stop by themselves within seconds (no_orphans bounds the wait), also a rank whose
# command ignores SIGTERM. Then mpirun killed -9 together with the launcher, so that nobody
# stops the ranks: each rank shim sees its parent gone and stops (then kills) its command.
# A rank's own children (data-loader workers, a subprocess) stop with it.
source "$(dirname "$0")/lib.sh"
# start_and_kill NAME COMMAND...: runs the job, waits for 2 ready lines, kill -9 the launcher.
# With KILL_MPIRUN=1, mpirun is killed -9 at the same time.
start_and_kill() {
  local name="$1"
  shift
  "$RUNRUN" -np 2 "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
  local launcher=$!
  wait_for_lines "$WORK/$name.out" "ready" 2 "$launcher"
  pgrep -f "$TOKEN" >/dev/null || fail "$name: the ranks are not running"
  local victims=("$launcher")
  [ "${KILL_MPIRUN:-0}" = 1 ] && victims+=($(pgrep -P "$launcher" -x mpirun))
  [ "${KILL_MPIRUN:-0}" = 0 ] || [ ${#victims[@]} -eq 2 ] || fail "$name: mpirun not found"
  kill -KILL "${victims[@]}"
  wait "$launcher" 2>/dev/null
  no_orphans
}
start_and_kill probe "$PROBE" --ready-and-wait --token "$TOKEN"
start_and_kill stubborn sh -c 'trap "" TERM; echo ready; while :; do sleep 1; done # '"$TOKEN"
start_and_kill with_child sh -c 'sh -c "while :; do sleep 1; done # $0-child" & echo ready; wait' "$TOKEN"
mpi_mode && KILL_MPIRUN=1 start_and_kill stubborn_orphan sh -c 'trap "" TERM; echo ready; while :; do sleep 1; done # '"$TOKEN"
echo "PASS"
