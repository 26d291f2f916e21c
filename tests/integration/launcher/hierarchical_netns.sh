#!/usr/bin/env bash
# runrun --hierarchical-allreduce -np 4 -H ns1:2,ns2:2 across two network-namespace hosts (mpi,
# or gloo under RUNRUN_TEST_CONTROLLER=gloo): every rank's backend is the hierarchical one (a
# host group of 2 ranks, shared memory under gloo; a cross group of 2 ranks over the veths)
# and its allreduce is exact for every dtype and op (hierarchical_check.cc); without the flag
# the ranks see the knob off. With --autotune (and no --hierarchical-allreduce) the decorator is
# built switched off and the tuner tries it on (a CSV row with hierarchical_allreduce=1) while
# the probe's allreduces stay exact. Usage: hierarchical_netns.sh RUNRUN HIERARCHICAL_CHECK
# TOPOLOGY_PROBE
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/netns_hosts.sh"
make_hosts 2
run=(timeout 150 "$RUNRUN" --rsh-agent "$AGENT" --network-interface "$SUBNET")

"${run[@]}" -np 4 -H ns1:2,ns2:2 --hierarchical-allreduce "$PROBE" --token "$TOKEN" \
  >"$WORK/hier.out" 2>"$WORK/hier.err"
rc=$?
[ "$rc" = 0 ] || { cat "$WORK/hier.out" "$WORK/hier.err" >&2; fail "hierarchical job exited $rc"; }
for r in 0 1 2 3; do
  expect_line "$WORK/hier.out" "^\[$r\]<stdout>:HIER ok rank=$r local=2 cross=2 backend=$MODE$"
done
hosts_empty
no_orphans

"${run[@]}" -np 4 -H ns1:2,ns2:2 "$PROBE" --token "$TOKEN" >"$WORK/flat.out" 2>"$WORK/flat.err"
expect_rc $? 1 "the check without --hierarchical-allreduce"
expect_line "$WORK/flat.out" "HIER FAILED: rank [0-3]: RUNRUN_HIERARCHICAL_ALLREDUCE is not 1"
hosts_empty
no_orphans

# 1 warmup sample + 12 settings (defaults, 6 fusion, 4 cycle times, hierarchical on) of 2 rounds.
RUNRUN_AUTOTUNE_SAMPLES_PER_CANDIDATE=1 "${run[@]}" -np 4 -H ns1:2,ns2:2 \
  --autotune-log-file "$WORK/tune.csv" --autotune-warmup-samples 1 \
  --autotune-steps-per-sample 2 "$3" --steps 40 --token "$TOKEN" \
  >"$WORK/tune.out" 2>"$WORK/tune.err"
expect_rc $? 0 "runrun --autotune -np 4 -H ns1:2,ns2:2 probe --steps 40"
for r in 0 1 2 3; do
  expect_line "$WORK/tune.out" "^\[$r\]<stdout>:PROBE rank=$r size=4 .* allreduce=ok$"
done
expect_line "$WORK/tune.csv" '^13,sample,26,[0-9]+,[0-9.]+,1,'
expect_line "$WORK/tune.csv" '^14,final,26,'
hosts_empty
no_orphans
echo "PASS"
