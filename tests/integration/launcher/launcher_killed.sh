#!/usr/bin/env bash
# kill -9 of the launcher (an OOM kill, a lost login session) leaves nothing behind: mpirun and
# every rank stop by themselves within seconds (no_orphans bounds the wait), also a rank whose
# command ignores SIGTERM.
source "$(dirname "$0")/lib.sh"
# start_and_kill NAME COMMAND...: runs the job, waits for 2 ready lines, kill -9 the launcher.
start_and_kill() {
  local name="$1"
  shift
  "$RUNRUN" -np 2 "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
  local launcher=$!
  wait_for_lines "$WORK/$name.out" "ready" 2
  pgrep -f "$TOKEN" >/dev/null || fail "$name: the ranks are not running"
  kill -KILL "$launcher"
  wait "$launcher" 2>/dev/null
  no_orphans
}
start_and_kill probe "$PROBE" --ready-and-wait --token "$TOKEN"
start_and_kill stubborn sh -c 'trap "" TERM; echo ready; while :; do sleep 1; done # '"$TOKEN"
echo "PASS"
