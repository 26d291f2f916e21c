#!/usr/bin/env bash
# A host discovery script whose output grows in the middle of training (rank 0 rewrites the
# file it prints): the launcher starts a third worker, the running ranks see the new generation
# at their next commit (HostsUpdatedInterrupt, no rollback), and the job finishes at size 3
# with the state the commit log and a one-process run give.
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
echo "PASS"
