#!/usr/bin/env bash
# Elastic training across three network-namespace hosts (tests/integration/launcher/
# netns_hosts.sh), one worker each: (1) -H ns1:1,ns2:1,ns3:1 --min-np 2, the ranks of ns3 are
# killed in the middle of training: the job goes on on ns1 and ns2 and finishes with the oracle's
# state; (1b) three hosts of two slots, one worker of ns3 killed: by default (Horovod's) the
# whole host leaves the job (4 ranks), with --keep-failed-hosts its other worker stays (5);
# (2) the same with --min-np 3 (fewer than min-np survivors) and with --reset-limit 0: the
# job ends with status 1 and a clear error; (3) a discovery script that lists ns1 and ns2, then
# ns3 too (rank 0 rewrites its file): the size grows to 3 at the next commit; (4) a discovery
# script that lists only this host at first (one rank here), then ns1 too: the job listens on
# the --network-interface network from the start, so ns1's worker can join and the size grows
# to 2; (5) the same with the launcher itself on ns1 (no default route there) and no
# --network-interface: it says at the start that it listens on loopback, refuses ns2 with a
# message naming --network-interface, and finishes at size 1. No process is left on any host.
source "$(dirname "$0")/elastic_lib.sh"
source "$(dirname "$0")/../launcher/netns_hosts.sh"
make_hosts 3
run=(timeout -k 10 240 "$RUNRUN" --rsh-agent "$AGENT" --network-interface "$SUBNET"
     -x PYTHONPATH -x ELASTIC_STEP_SLEEP -x ELASTIC_KILL_WORKER -x ELASTIC_KILL_STEP)

export ELASTIC_KILL_WORKER=2 ELASTIC_KILL_STEP=10
"${run[@]}" -np 3 --min-np 2 -H ns1:1,ns2:1,ns3:1 "$PYTHON_BIN" "$TRAIN" "$TOKEN" \
  >"$WORK/lose.out" 2>"$WORK/lose.err"
expect_rc $? 0 "an elastic job that lost host ns3's rank"
expect_line "$WORK/lose.err" "^runrun: elastic: generation 1: 3 ranks on ns1:1,ns2:1,ns3:1"
expect_line "$WORK/lose.err" "^runrun: elastic: worker 2 \(rank 2 of generation 1\) on host ns3: signal 9"
expect_line "$WORK/lose.err" "^runrun: elastic: generation 2: 2 ranks on ns1:1,ns2:1"
expect_line "$WORK/lose.out" "final total=[0-9]+ size=2 resets=\[2\]"
oracle_check "$WORK/lose.out"
hosts_empty
no_orphans

# (1b) Horovod's default: a failed worker's host leaves the job, its other workers with it. Three
# hosts of two slots, worker 4 (on ns3) killed: the next generation has 4 ranks on ns1 and ns2;
# with --keep-failed-hosts ns3's other worker stays (5 ranks).
export ELASTIC_KILL_WORKER=4 ELASTIC_KILL_STEP=10
run_default=(timeout -k 10 240 "$RUNRUN_DEFAULT" --rsh-agent "$AGENT" --network-interface "$SUBNET"
             -x PYTHONPATH -x ELASTIC_STEP_SLEEP -x ELASTIC_KILL_WORKER -x ELASTIC_KILL_STEP)
"${run_default[@]}" -np 6 --min-np 2 -H ns1:2,ns2:2,ns3:2 "$PYTHON_BIN" "$TRAIN" "$TOKEN" \
  >"$WORK/host.out" 2>"$WORK/host.err"
expect_rc $? 0 "an elastic job that lost a worker of host ns3"
expect_line "$WORK/host.err" "^runrun: elastic: worker 4 \(rank 4 of generation 1\) on host ns3: signal 9"
expect_line "$WORK/host.err" "^runrun: elastic: generation 2: 4 ranks on ns1:2,ns2:2$"
expect_line "$WORK/host.out" "final total=[0-9]+ size=4 resets=\[4\]"
oracle_check "$WORK/host.out"
hosts_empty
no_orphans
"${run_default[@]}" --keep-failed-hosts -np 6 --min-np 2 -H ns1:2,ns2:2,ns3:2 "$PYTHON_BIN" \
  "$TRAIN" "$TOKEN" >"$WORK/keep.out" 2>"$WORK/keep.err"
expect_rc $? 0 "an elastic job that kept host ns3's other worker"
expect_line "$WORK/keep.err" "^runrun: elastic: generation 2: 5 ranks on ns1:2,ns2:2,ns3:1$"
expect_line "$WORK/keep.out" "final total=[0-9]+ size=5 resets=\[5\]"
hosts_empty
no_orphans

# (2) ns3's rank lost with --min-np 3 ends the job; with --reset-limit 0 the first reset does.
export ELASTIC_KILL_WORKER=2 ELASTIC_KILL_STEP=5
"${run[@]}" -np 3 --min-np 3 -H ns1:1,ns2:1,ns3:1 "$PYTHON_BIN" "$TRAIN" "$TOKEN" \
  >"$WORK/min.out" 2>"$WORK/min.err"
expect_rc $? 1 "fewer than --min-np across the hosts"
expect_line "$WORK/min.err" "^runrun: elastic job failed: only 2 ranks can run, fewer than --min-np 3 \(no --host-discovery-script to find more hosts\); lost: worker 2 \(rank 2 of generation 1\) on host ns3: signal 9"
hosts_empty
no_orphans
"${run[@]}" -np 3 --min-np 2 --reset-limit 0 -H ns1:1,ns2:1,ns3:1 "$PYTHON_BIN" "$TRAIN" \
  "$TOKEN" >"$WORK/reset.out" 2>"$WORK/reset.err"
expect_rc $? 1 "a reset beyond --reset-limit 0 across the hosts"
expect_line "$WORK/reset.err" "^runrun: elastic job failed: the job was reset 1 times, more than --reset-limit 0; lost: worker 2 \(rank 2 of generation 1\) on host ns3"
hosts_empty
no_orphans

printf 'ns1:1\nns2:1\n' >"$WORK/hosts"
printf '#!/bin/sh\ncat %q\n' "$WORK/hosts" >"$WORK/discover.sh"
chmod +x "$WORK/discover.sh"
unset ELASTIC_KILL_WORKER ELASTIC_KILL_STEP
export ELASTIC_GROW_FILE="$WORK/hosts" ELASTIC_GROW_STEP=8 ELASTIC_GROW_HOSTS=ns1:1,ns2:1,ns3:1
export ELASTIC_STEPS=40
timeout -k 10 240 "$RUNRUN" --rsh-agent "$AGENT" --network-interface "$SUBNET" \
  -x PYTHONPATH -x ELASTIC_STEP_SLEEP -x ELASTIC_GROW_FILE -x ELASTIC_GROW_STEP \
  -x ELASTIC_GROW_HOSTS -x ELASTIC_STEPS -np 2 --min-np 2 --max-np 3 \
  --host-discovery-script "$WORK/discover.sh" "$PYTHON_BIN" "$TRAIN" "$TOKEN" \
  >"$WORK/grow.out" 2>"$WORK/grow.err"
expect_rc $? 0 "an elastic job that grew to ns3"
expect_line "$WORK/grow.err" "^runrun: elastic: generation 1: 2 ranks on ns1:1,ns2:1"
expect_line "$WORK/grow.err" "^runrun: elastic: generation 2: 3 ranks on ns1:1,ns2:1,ns3:1"
expect_line "$WORK/grow.out" "final total=[0-9]+ size=3 resets=\[3\]"
oracle_check "$WORK/grow.out"
hosts_empty
no_orphans

printf 'localhost:1\n' >"$WORK/local_hosts"
printf '#!/bin/sh\ncat %q\n' "$WORK/local_hosts" >"$WORK/discover_local.sh"
chmod +x "$WORK/discover_local.sh"
export ELASTIC_GROW_FILE="$WORK/local_hosts" ELASTIC_GROW_STEP=8
export ELASTIC_GROW_HOSTS=localhost:1,ns1:1 ELASTIC_STEPS=40
timeout -k 10 240 "$RUNRUN" --rsh-agent "$AGENT" --network-interface "$SUBNET" \
  -x PYTHONPATH -x ELASTIC_STEP_SLEEP -x ELASTIC_GROW_FILE -x ELASTIC_GROW_STEP \
  -x ELASTIC_GROW_HOSTS -x ELASTIC_STEPS -np 1 --min-np 1 --max-np 2 \
  --host-discovery-script "$WORK/discover_local.sh" "$PYTHON_BIN" "$TRAIN" "$TOKEN" \
  >"$WORK/local.out" 2>"$WORK/local.err"
expect_rc $? 0 "an elastic job that started on this host alone and grew to ns1"
expect_line "$WORK/local.err" "^runrun: elastic: generation 1: 1 rank on localhost:1"
expect_line "$WORK/local.err" "^runrun: elastic: generation 2: 2 ranks on localhost:1,ns1:1"
expect_line "$WORK/local.out" "final total=[0-9]+ size=2 resets=\[2\]"
oracle_check "$WORK/local.out"
hosts_empty
no_orphans

printf 'localhost:1\n' >"$WORK/local_hosts"
export ELASTIC_GROW_HOSTS=localhost:1,ns2:1 ELASTIC_GROW_STEP=3
timeout -k 10 240 ip netns exec "${HOST_NAMESPACES[0]}" "$RUNRUN" --rsh-agent "$AGENT" \
  -np 1 --min-np 1 --max-np 2 --host-discovery-script "$WORK/discover_local.sh" \
  "$PYTHON_BIN" "$TRAIN" "$TOKEN" >"$WORK/loop.out" 2>"$WORK/loop.err"
expect_rc $? 0 "an elastic job on loopback that was offered a remote host"
expect_line "$WORK/loop.err" "^runrun: elastic: the discovery script lists only this host and this host has no default route: the job listens on loopback"
expect_line "$WORK/loop.err" "^runrun: elastic: host ns2 cannot join: this job listens on loopback .* --network-interface"
expect_line "$WORK/loop.out" "final total=[0-9]+ size=1 resets=\[\]"
hosts_empty
no_orphans
echo "PASS"
