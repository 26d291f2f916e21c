#!/usr/bin/env bash
# Issue 9, point 2: after a stall shutdown the ranks that raised it exit at once (they do not
# wait in MPI finalization for the rank that stalled), and the launcher stops the rest and exits
# non-zero naming the first failed rank — the whole job ends well before anything it must not
# wait for could end: the sleeper (it sleeps 120 s; the job's timeout is 100 s) or a shutdown
# round (RUNRUN_SHUTDOWN_TIMEOUT is 90 s here). The bound, stall deadline + 40 s, is generous on
# purpose: on a loaded machine starting and ending Python ranks with torch takes seconds. With
# --gloo the launcher also gives the ranks that still run its stop grace (10 s) to fail by
# themselves before it stops them (docs/launcher.md): 10 s more.
# Usage: bounded_exit_test.sh RUNRUN PYTHON_PACKAGE_DIR [--mpi|--gloo]
set -uo pipefail
RUNRUN="$1"; PKG="$2"; CONTROLLER="${3:---mpi}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PYTHON="$(python3 -c 'import sys; print(sys.executable)')"
STALL=6
if [ "$CONTROLLER" = --gloo ]; then BOUND=$((STALL + 40 + 10)); else BOUND=$((STALL + 40)); fi
TOKEN="rrexit$$x$RANDOM"
out="$(mktemp)"
trap 'pkill -KILL -f "$TOKEN" 2>/dev/null; rm -f "$out"' EXIT
fail() { echo "FAIL: $*"; echo "--- launcher output"; cat "$out"; exit 1; }

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PYTHONPATH="$PKG${PYTHONPATH:+:$PYTHONPATH}"
export RUNRUN_STALL_SHUTDOWN_TIME=$STALL RUNRUN_STALL_CHECK_TIME=2 RUNRUN_SHUTDOWN_TIMEOUT=90
"$PYTHON" -c "import runrun._core" 2>/dev/null ||
  fail "runrun._core is not importable from $PKG: run 'make install' (or install_from_build.sh)"

timeout -k 5 100 "$RUNRUN" "$CONTROLLER" -np 3 -H localhost:3 "$PYTHON" "$HERE/stalled_rank.py" "$TOKEN" >"$out" 2>&1
rc=$?
end="$(date +%s.%N)"
cat "$out"
[ $rc -ne 124 ] && [ $rc -ne 137 ] || fail "the job did not end within 100 s (it waited for the sleeper)"
[ $rc -ne 0 ] || fail "the launcher exited 0 after a stall error"
asleep="$(grep -o 'asleep from [0-9.]*' "$out" | awk '{print $3}')"
[ -n "$asleep" ] || fail "the sleeping rank never said when it fell asleep"
grep -q "stalled\|stall:" "$out" || fail "no rank reported the stall"
grep -Eq "runrun: rank [01] on host .* failed" "$out" || fail "the launcher did not name rank 0 or 1 as the first failure"
[ "$CONTROLLER" = --gloo ] && ! grep -q "gloo=True" "$out" && fail "the ranks did not run over Gloo"
grep -q "FAIL:" "$out" && fail "an allreduce completed without the sleeping rank"
took="$(awk -v a="$asleep" -v b="$end" 'BEGIN { printf "%.1f", b - a }')"
echo "job ended ${took} s after rank 2 fell asleep (bound: ${BOUND} s)"
awk -v t="$took" -v b="$BOUND" 'BEGIN { exit !(t <= b) }' ||
  fail "the job ended ${took} s after the stall began, more than ${BOUND} s"
for i in $(seq 1 300); do pgrep -f "$TOKEN" >/dev/null || break; sleep 0.1; done  # at most 30 s
pgrep -af "$TOKEN" && fail "processes of this job are still running"
echo PASS
