#!/usr/bin/env bash
# One rank exits 3 while the others wait in an allreduce it never joins: the launcher must exit
# with 3 (bounded by `timeout`, far below it in practice), name the rank, its host and the
# code, and leave no process behind. Then a rank killed by a signal.
source "$(dirname "$0")/lib.sh"
timeout 60 "$RUNRUN" -np 3 "$PROBE" --exit-rank 1 3 --token "$TOKEN" >"$WORK/fail.out" 2>"$WORK/fail.err"
expect_rc $? 3 "a rank exiting 3"
expect_line "$WORK/fail.err" "^runrun: rank 1 on host localhost failed with exit code 3; the other ranks were stopped"
no_orphans

timeout 60 "$RUNRUN" -np 2 sh -c 'if [ "$RUNRUN_RANK" = 0 ]; then kill -9 $$; fi; sleep 50 # '"$TOKEN" >"$WORK/kill.out" 2>"$WORK/kill.err"
expect_rc $? 137 "a rank killed by SIGKILL"
expect_line "$WORK/kill.err" "^runrun: rank 0 on host localhost failed with signal 9 "
no_orphans
echo "PASS"
