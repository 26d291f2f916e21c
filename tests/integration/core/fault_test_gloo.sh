#!/usr/bin/env bash
# fault_test.sh's counterpart under `runrun --gloo`: the launcher starts the 4 ranks itself and
# the data moves over Gloo. Rank 2 is killed (kill: SIGKILL), stopped (stop: SIGSTOP, a stuck
# peer that nothing but the launcher will end) or stalls (stall: alive, enqueues nothing) in the
# middle of a stream of allreduces. Checks that
#   - each of ranks 0, 1, 3 reports an error naming rank 2 and exits with status 3 by itself;
#   - the launcher exits non-zero, and names rank 2 when rank 2 is what failed (kill: its signal;
#     stop: still running after the others failed, so stopped by the launcher);
#   - no process of the job is left, the stopped one included.
#   - /dev/shm holds no shared-memory segment of this job afterwards (ops/shm unlinks each one
#     as soon as every rank mapped it): a leftover is a runrun-shm-<pid>-* object whose
#     creator no longer runs and that was not there before.
# The only time bound is the whole job's (a generous `timeout`): a hang fails the test.
# Usage: fault_test_gloo.sh RUNRUN VICTIM_PROGRAM kill|stop|stall
set -uo pipefail
runrun="$1"; program="$2"; mode="$3"
TOKEN="rrfault$$x$RANDOM"
out="$(mktemp)"
trap 'pkill -KILL -f "$TOKEN" 2>/dev/null; rm -f "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# The stall shutdown time is above the peer timeout: a stopped rank must be reported as lost.
export RUNRUN_PEER_TIMEOUT=3 RUNRUN_STALL_CHECK_TIME=1 RUNRUN_STALL_SHUTDOWN_TIME=5

shm_before="$(ls /dev/shm 2>/dev/null | grep '^runrun-shm-' | sort)"
SECONDS=0
timeout -k 5 100 "$runrun" --gloo -np 4 "$program" "$mode" "$TOKEN" >"$out" 2>&1
rc=$?
cat "$out"
# (137 is also the launcher's own status for a rank killed by SIGKILL: tell them apart by time.)
[ "$SECONDS" -lt 100 ] || fail "the job did not end within 100 s"
[ $rc -ne 0 ] || fail "the launcher exited 0 although rank 2 failed"

if [ "$mode" = stall ]; then
  names_victim="peer failure after .*stall: .*ranks \[2\] have enqueued nothing"
else
  names_victim="peer failure after .*lost rank 2"
fi
for r in 0 1 3; do
  grep -Eq "^\[$r\]<stdout>:rank $r: $names_victim" "$out" ||
    fail "rank $r did not report an error naming rank 2"
  grep -q "^\[$r\]<stdout>:rank $r: exiting with status 3 over gloo" "$out" ||
    fail "rank $r did not exit by itself with status 3 over gloo"
done
if [ "$mode" = kill ]; then  # a fixed-size job cannot go on: the survivors' error says so
  grep -Eq "lost rank 2 .*shut down and restart the job" "$out" ||
    fail "no survivor's error says to shut down and restart the job"
  grep -q "elastic job recovers" "$out" && fail "a fixed-size job's error speaks of recovery"
fi
case "$mode" in
  kill) grep -Eq "^runrun: rank 2 on host localhost failed with signal 9" "$out" ||
          grep -Eq "^runrun: .*rank 2 .*signal 9" "$out" ||
          fail "the launcher did not name rank 2 and its signal" ;;
  stop) grep -Eq "^runrun: rank 2 on host localhost was still running .* after rank [013] failed" "$out" ||
          fail "the launcher did not name the stuck rank 2" ;;
esac
grep -q "unexpected error\|wrong result" "$out" && fail "a rank failed in an unexpected way"
slowest=$(grep -o "peer failure after [0-9.]* s" "$out" | awk '{print $4}' | sort -n | tail -1)
echo "mode=$mode: launcher exit status $rc, slowest survivor report after ${slowest}s"

# Nothing of the job is left once the launcher returned (bounded wait for exits under way).
for i in $(seq 1 100); do pgrep -f "$TOKEN" >/dev/null || break; sleep 0.1; done
pgrep -af "$TOKEN" && fail "processes of this job are still running after the launcher exited"
for name in $(ls /dev/shm 2>/dev/null | grep '^runrun-shm-' | sort); do
  grep -qx "$name" <<<"$shm_before" && continue
  pid="${name#runrun-shm-}"; pid="${pid%%-*}"
  kill -0 "$pid" 2>/dev/null || fail "/dev/shm/$name was left behind by the job"
done
echo PASS
