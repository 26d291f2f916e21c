#!/usr/bin/env bash
# Kills, stops or stalls rank 2 of 4 in the middle of a stream of allreduces and checks that each
# of the three others reports an error naming rank 2 and exits with status 3 on its own, within
# the bound. mpirun runs with --enable-recovery so that it does not kill the survivors itself:
# they must notice. Usage: fault_test.sh MPIEXEC VICTIM_PROGRAM kill|hang|stall
set -u
mpiexec="$1"; program="$2"; mode="$3"
bound=20  # seconds from start to a survivor's report (RUNRUN_PEER_TIMEOUT is 3 s here)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
# The stall shutdown time is above the peer timeout: a stopped rank must be reported as lost.
export RUNRUN_PEER_TIMEOUT=3 RUNRUN_STALL_CHECK_TIME=1 RUNRUN_STALL_SHUTDOWN_TIME=5
out=$(mktemp)
# The job's processes carry TOKEN on their command line: a stopped victim, if any, is killed by
# it, never by program name (that would kill the victims of a test running beside this one).
TOKEN="rrfault$$x$RANDOM"
timeout 120 "$mpiexec" -np 4 --oversubscribe --bind-to none --enable-recovery \
  sh -c '"$0" "$1" "$2"; echo "rank-exit status $?"' "$program" "$mode" "$TOKEN" >"$out" 2>&1
cat "$out"
pkill -KILL -f "$TOKEN" 2>/dev/null || true
fail() { echo "FAIL: $*"; rm -f "$out"; exit 1; }
if [ "$mode" = stall ]; then
  reported=$(grep -c "peer failure after .*stall: .*ranks \[2\] have enqueued nothing" "$out")
else
  reported=$(grep -c "peer failure after .*lost rank 2" "$out")
fi
exited=$(grep -c "rank-exit status 3" "$out")
slowest=$(grep -o "peer failure after [0-9.]* s" "$out" | awk '{print $4}' | sort -n | tail -1)
rm -f "$out"
echo "mode=$mode reporting rank 2: $reported/3, exited with 3: $exited/3, slowest report: ${slowest}s"
[ "$reported" -eq 3 ] || fail "every survivor must report the lost rank 2"
[ "$exited" -eq 3 ] || fail "every survivor must exit with status 3"
awk -v s="$slowest" -v b="$bound" 'BEGIN { exit !(s <= b) }' || fail "slowest report ${slowest}s > ${bound}s"
echo PASS
