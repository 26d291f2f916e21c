#!/usr/bin/env bash
# The discovery script runs beside the driver, never in its way (docs/elastic.md): once training
# is under way (worker 2 at step 5 writes "ready"), a run of the script hangs, and while it hangs
# worker 2 kills itself: the driver publishes generation 2 at once (before the hanging run is
# killed at its 10 s bound and reported); the next run fails with status 3 (reported with what
# it said, the hosts found before kept); with --blacklist-cooldown-range 1 2 the host of the lost
# worker takes a new worker 1 s after the loss, at the next good run: generation 3 has 3 ranks
# again. The job ends with the oracle's state, no process left behind (the hanging run's
# included).
source "$(dirname "$0")/elastic_lib.sh"
script="$WORK/discover-$TOKEN.sh"  # the token in its path: no_orphans sees a run left behind
cat >"$script" <<SCRIPT
#!/bin/sh
if [ -e "$WORK/ready" ] && [ ! -e "$WORK/hanging" ]; then
  touch "$WORK/hanging"
  while :; do sleep 1; done
fi
if [ -e "$WORK/hanging" ] && [ ! -e "$WORK/failed" ]; then
  touch "$WORK/failed"
  echo "no hosts today" >&2
  exit 3
fi
echo localhost:3
SCRIPT
chmod +x "$script"
ELASTIC_KILL_WORKER=2 ELASTIC_KILL_STEP=5 ELASTIC_KILL_READY_FILE="$WORK/ready" \
  ELASTIC_KILL_AFTER_FILE="$WORK/hanging" \
  ELASTIC_STEPS=400 timeout -k 10 200 "$RUNRUN" -np 3 --min-np 2 \
  --blacklist-cooldown-range 1 2 --host-discovery-script "$script" \
  "$PYTHON_BIN" "$TRAIN" "$TOKEN" >"$WORK/hang.out" 2>"$WORK/hang.err"
expect_rc $? 0 "an elastic job whose discovery script hung, then failed"
expect_line "$WORK/hang.err" "^runrun: elastic: generation 1: 3 ranks on localhost:3"
expect_line "$WORK/hang.err" "^runrun: elastic: worker 2 \(rank 2 of generation 1\) on host localhost: signal 9 \(Killed\); host localhost gets no new worker for 1 s"
expect_line "$WORK/hang.err" "^runrun: elastic: generation 2: 2 ranks on localhost:2"
expect_line "$WORK/hang.err" "^runrun: elastic: --host-discovery-script '.*' did not finish within 10 s \(keeping the hosts found before\)"
expect_line "$WORK/hang.err" "^runrun: elastic: --host-discovery-script '.*' exited with status 3 \(it said: no hosts today\) \(keeping the hosts found before\)"
expect_line "$WORK/hang.err" "^runrun: elastic: generation 3: 3 ranks on localhost:3"
# The failure was handled while the script hung: generation 2 came before the hang's report.
gen2="$(grep -n 'generation 2: ' "$WORK/hang.err" | head -1 | cut -d: -f1)"
hung="$(grep -n 'did not finish within' "$WORK/hang.err" | head -1 | cut -d: -f1)"
[ "$gen2" -lt "$hung" ] ||
  fail "generation 2 was published only after the hanging discovery run ended"
expect_line "$WORK/hang.out" "final total=[0-9]+ size=3 resets=\[2, 3\]"
ELASTIC_STEPS=400 oracle_check "$WORK/hang.out"
no_orphans
echo "PASS"
