#!/usr/bin/env bash
# The bounds of an elastic job: a lost worker that leaves fewer than --min-np ranks ends the job
# with a non-zero status naming what was lost; a reset beyond --reset-limit ends it with a clear
# error. Both bounded (timeout) and without a process left behind.
source "$(dirname "$0")/elastic_lib.sh"
ELASTIC_KILL_WORKER=2 ELASTIC_KILL_STEP=5 timeout -k 10 120 "$RUNRUN" -np 3 --min-np 3 \
  "$PYTHON_BIN" "$TRAIN" "$TOKEN" >"$WORK/min.out" 2>"$WORK/min.err"
expect_rc $? 1 "fewer than --min-np"
expect_line "$WORK/min.err" "^runrun: elastic job failed: only 2 ranks can run, fewer than --min-np 3 \(no --host-discovery-script to find more hosts\); lost: worker 2 \(rank 2 of generation 1\) on host localhost: signal 9"
no_orphans

ELASTIC_KILL_WORKER=1 ELASTIC_KILL_STEP=5 timeout -k 10 120 "$RUNRUN" -np 3 --min-np 1 \
  --reset-limit 0 "$PYTHON_BIN" "$TRAIN" "$TOKEN" >"$WORK/reset.out" 2>"$WORK/reset.err"
expect_rc $? 1 "a reset beyond --reset-limit 0"
expect_line "$WORK/reset.err" "^runrun: elastic job failed: the job was reset 1 times, more than --reset-limit 0; lost: worker 1 "
no_orphans

# Elastic training is Gloo only, as Horovod's.
"$RUNRUN_BINARY" --mpi -np 2 --min-np 1 true >"$WORK/mpi.out" 2>"$WORK/mpi.err"
expect_rc $? 2 "--min-np with --mpi"
expect_line "$WORK/mpi.err" "runs over Gloo only"
echo "PASS"
