# Shared helpers of the launcher's end-to-end tests. Usage: source lib.sh RUNRUN PROBE
# Each test gets a scratch directory and a unique token (passed to the probe) so that stray
# processes of this test, and only of this test, can be found with pgrep.
# RUNRUN_TEST_CONTROLLER=gloo (set by ctest for the *.gloo tests) runs every job with
# `runrun --gloo` (the launcher starts the ranks itself, no mpirun); the default is --mpi.
# Checks that only make sense for one mode are guarded with `mpi_mode` / `gloo_mode`.
set -uo pipefail
MODE="${RUNRUN_TEST_CONTROLLER:-mpi}"
WORK="$(mktemp -d /tmp/runrun_launcher_test.XXXXXX)"
RUNRUN="$WORK/runrun-$MODE"  # `exec`s the real launcher: same pid, so kill/wait see the launcher
printf '#!/bin/sh\nexec %q --%s "$@"\n' "$1" "$MODE" >"$RUNRUN"
chmod +x "$RUNRUN"
RUNRUN_BINARY="$1"
PROBE="$2"
mpi_mode() { [ "$MODE" = mpi ]; }
gloo_mode() { [ "$MODE" = gloo ]; }
TOKEN="rrtok$$x$RANDOM"
CLEANUPS=()
cleanup_all() {
  local i
  for ((i = ${#CLEANUPS[@]} - 1; i >= 0; i--)); do eval "${CLEANUPS[$i]}" || true; done
  pkill -KILL -f "$TOKEN" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup_all EXIT
trap 'exit 1' INT TERM

fail() {
  echo "FAIL: $*" >&2
  for f in "$WORK"/*.out "$WORK"/*.err; do
    [ -f "$f" ] && { echo "--- $f" >&2; tail -n 40 "$f" >&2; }
  done
  exit 1
}

# expect_line FILE REGEX: FILE has a line matching the extended REGEX.
expect_line() { grep -Eq -- "$2" "$1" || fail "$1 has no line matching: $2"; }

# expect_rc ACTUAL EXPECTED WHAT
expect_rc() { [ "$1" = "$2" ] || fail "$3: exit status $1, expected $2"; }

# job_tree_args PID: the command lines of PID and of all its descendants, one per line.
job_tree_args() {
  ps -eo pid=,ppid=,args= | awk -v root="$1" '
    { pid[NR] = $1; ppid[NR] = $2; $1 = ""; $2 = ""; args[NR] = substr($0, 3) }
    END {
      keep[root] = 1
      do { grew = 0
           for (i = 1; i <= NR; i++)
             if (!(pid[i] in keep) && (ppid[i] in keep)) { keep[pid[i]] = 1; grew = 1 }
      } while (grew)
      for (i = 1; i <= NR; i++) if (pid[i] in keep) print args[i]
    }'
}

# no_orphans: no process carrying this test's token is left (waits at most 10 s for exits
# already under way; this bounds the wait, it does not time anything).
no_orphans() {
  local i
  for i in $(seq 1 100); do
    pgrep -f "$TOKEN" >/dev/null || return 0
    sleep 0.1
  done
  pgrep -af "$TOKEN" >&2
  fail "processes of this test are still running after the launcher exited"
}

# wait_for_lines FILE REGEX COUNT [PID]: waits (at most 60 s) until FILE has COUNT matching
# lines; with PID (the job's launcher), stops waiting as soon as that process has ended.
wait_for_lines() {
  local i
  for i in $(seq 1 600); do
    [ "$(grep -Ec -- "$2" "$1" 2>/dev/null)" -ge "$3" ] && return 0
    if [ -n "${4:-}" ] && ! kill -0 "$4" 2>/dev/null; then
      fail "the job (pid $4) ended before $1 had $3 lines matching $2"
    fi
    sleep 0.1
  done
  fail "$1 never had $3 lines matching $2"
}
