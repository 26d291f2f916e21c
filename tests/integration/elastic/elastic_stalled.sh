#!/usr/bin/env bash
# A worker hangs (SIGSTOP) in the middle of training: the others' collective times out
# (RUNRUN_COLLECTIVE_TIMEOUT), they report the failure, and the next generation still counts the
# hung worker (it is alive); it never joins, so after --elastic-timeout the launcher stops it
# and publishes a generation without it. The job finishes at size 2 with the oracle's state,
# bounded, and leaves no process behind (the stopped one included).
source "$(dirname "$0")/elastic_lib.sh"
ELASTIC_STOP_WORKER=2 ELASTIC_STOP_STEP=10 RUNRUN_COLLECTIVE_TIMEOUT=5 \
  RUNRUN_RENDEZVOUS_TIMEOUT=15 timeout -k 10 240 "$RUNRUN" -np 3 --min-np 2 \
  --elastic-timeout 20 "$PYTHON_BIN" "$TRAIN" "$TOKEN" >"$WORK/hang.out" 2>"$WORK/hang.err"
expect_rc $? 0 "an elastic job with a hung worker"
expect_line "$WORK/hang.err" "^runrun: elastic: generation 2: 3 ranks on localhost:3"
expect_line "$WORK/hang.err" "^runrun: elastic: worker 2 on host localhost: did not join generation [0-9]+ within --elastic-timeout 20 s: stopping it"
expect_line "$WORK/hang.err" "^runrun: elastic: generation [0-9]+: 2 ranks on localhost:2"
expect_line "$WORK/hang.out" "final total=[0-9]+ size=2 resets="
oracle_check "$WORK/hang.out"
no_orphans
echo "PASS"
