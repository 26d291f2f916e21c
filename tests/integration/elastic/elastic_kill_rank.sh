#!/usr/bin/env bash
# A worker of a 4-rank elastic job (-H localhost:4 --min-np 2, no discovery script) is killed
# with SIGKILL in the middle of training: the survivors roll back to their last commit, join
# generation 2 with 3 ranks, and finish with the state the commit log and a one-process run
# give; their error message says the job recovers; the launcher exits 0 and leaves no process
# behind.
source "$(dirname "$0")/elastic_lib.sh"
ELASTIC_KILL_WORKER=2 ELASTIC_KILL_STEP=10 timeout -k 10 150 "$RUNRUN" -np 4 --min-np 2 \
  -H localhost:4 "$PYTHON_BIN" "$TRAIN" "$TOKEN" >"$WORK/kill.out" 2>"$WORK/kill.err"
expect_rc $? 0 "an elastic job that lost a worker"
expect_line "$WORK/kill.err" "^runrun: elastic: generation 1: 4 ranks on localhost:4"
expect_line "$WORK/kill.err" "^runrun: elastic: worker 2 \(rank 2 of generation 1\) on host localhost: signal 9"
expect_line "$WORK/kill.err" "^runrun: elastic: generation 2: 3 ranks on localhost:3"
expect_line "$WORK/kill.out" "commit step=5 size=4"
expect_line "$WORK/kill.out" "commit step=30 size=3"
expect_line "$WORK/kill.out" "final total=[0-9]+ size=3 resets=\[3\]"
oracle_check "$WORK/kill.out"
# The survivors' error says the job recovers, not the fixed-size job's "restart the job".
expect_line "$WORK/kill.err" "lost rank 2 .*Every pending and later op fails; the elastic job recovers: the state rolls back to its last commit"
! grep -q "restart the job" "$WORK/kill.err" || fail "a survivor told an elastic job to restart"
no_orphans
# Recovery time, reported (not asserted): the kill to rank 0's reset callback in generation 2.
killed="$(grep -Eo 'elastic-kill t=[0-9.]+' "$WORK/kill.out" | head -1 | cut -d= -f2)"
reset="$(grep -Eo 'elastic-reset t=[0-9.]+' "$WORK/kill.out" | head -1 | cut -d= -f2)"
echo "recovery: $(awk -v a="$killed" -v b="$reset" 'BEGIN {printf "%.3f", b - a}') s from the kill to training at the new size"
echo "PASS"
