#!/usr/bin/env bash
# A host discovery script whose output grows in the middle of training (rank 0 rewrites the
# file it prints): the launcher starts a third worker, the running ranks see the new generation
# at their next commit (HostsUpdatedInterrupt, no rollback), and the job finishes at size 3
# with the state the commit log and a one-process run give. Then a survivor that finishes
# before a new generation forms ends the job (below).
source "$(dirname "$0")/elastic_lib.sh"
echo "localhost:2" >"$WORK/hosts"
printf '#!/bin/sh\ncat %q\n' "$WORK/hosts" >"$WORK/discover.sh"
chmod +x "$WORK/discover.sh"
ELASTIC_GROW_FILE="$WORK/hosts" ELASTIC_GROW_STEP=8 ELASTIC_GROW_HOSTS=localhost:3 ELASTIC_STEPS=40 \
  timeout -k 10 150 "$RUNRUN" -np 2 --min-np 2 --max-np 3 \
  --host-discovery-script "$WORK/discover.sh" "$PYTHON_BIN" "$TRAIN" "$TOKEN" \
  >"$WORK/grow.out" 2>"$WORK/grow.err"
expect_rc $? 0 "an elastic job that grew"
expect_line "$WORK/grow.err" "^runrun: elastic: generation 1: 2 ranks on localhost:2"
expect_line "$WORK/grow.err" "^runrun: elastic: generation 2: 3 ranks on localhost:3"
expect_line "$WORK/grow.out" "commit step=5 size=2"
expect_line "$WORK/grow.out" "commit step=40 size=3"
expect_line "$WORK/grow.out" "final total=[0-9]+ size=3 resets=\[3\]"
ELASTIC_STEPS=40 oracle_check "$WORK/grow.out"
no_orphans

# A survivor finishes the script while its lost peer's host is cooling down, and stays alive a
# while after (evaluating, writing files): the cooldown ends, a new worker joins generation 3,
# which the finished survivor never joins. When the survivor exits 0 the job has finished: the
# new worker is stopped and not counted as a failure (it failed the job after its 30 s wait
# before), as Horovod stops the other workers once one succeeded.
echo "localhost:2" >"$WORK/hosts"
ELASTIC_KILL_WORKER=1 ELASTIC_KILL_STEP=10 ELASTIC_STEPS=12 ELASTIC_LINGER=8 \
  timeout -k 10 150 "$RUNRUN" -np 2 --min-np 1 --max-np 2 --blacklist-cooldown-range 3 4 \
  --host-discovery-script "$WORK/discover.sh" "$PYTHON_BIN" "$TRAIN" "$TOKEN" \
  >"$WORK/linger.out" 2>"$WORK/linger.err"
expect_rc $? 0 "an elastic job whose survivor finished before a new generation formed"
expect_line "$WORK/linger.err" "^runrun: elastic: generation 3: 2 ranks on localhost:2"
expect_line "$WORK/linger.err" "^runrun: elastic: worker 2 \(host localhost\) stopped: worker 0 finished the script in generation 2, so generation 3, which it waits in, cannot form"
expect_line "$WORK/linger.err" "^runrun: elastic: the job finished in generation 2 "
expect_line "$WORK/linger.out" "final total=[0-9]+ size=1 "
no_orphans
echo "PASS"
