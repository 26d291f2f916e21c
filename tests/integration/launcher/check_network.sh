#!/usr/bin/env bash
# runrun --check-network over three network-namespace hosts, one link shaped slow with tc: the
# link ns2 -> ns3 carries 50 Mbit/s (htb on ns2's veth, for ns3's address only), every other
# path is an unshaped veth (Gbit/s). The verdict must name the pair ns2 <-> ns3 and no other;
# --min-bandwidth above it makes the exit status 3 and runs no command; below it, the check
# passes and the training command then runs. --profile on these hosts measures the link
# bandwidth for the job first. The transport is the job's: MPI under
# RUNRUN_TEST_CONTROLLER=mpi, Gloo under gloo.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/netns_hosts.sh"
command -v tc >/dev/null || skip "tc (iproute2) is not installed"
make_hosts 3
ns2="${HOST_NAMESPACES[1]}"
ns3_address="${SUBNET%.0/24}.13"
veth2="$(ip netns exec "$ns2" ip -o link show | sed -n 's/^[0-9]*: \([^@:]*\)@.*/\1/p' | grep -v '^lo$' | head -1)"
# Unclassified traffic goes out unshaped (htb's default class 99 does not exist); traffic to
# ns3 goes through a 50 Mbit/s class.
ip netns exec "$ns2" tc qdisc add dev "$veth2" root handle 1: htb default 99 2>"$WORK/tc.err" ||
  skip "tc cannot add an htb qdisc here: $(cat "$WORK/tc.err")"
ip netns exec "$ns2" tc class add dev "$veth2" parent 1: classid 1:20 htb rate 50mbit 2>/dev/null &&
  ip netns exec "$ns2" tc filter add dev "$veth2" parent 1: protocol ip prio 1 u32 \
    match ip dst "$ns3_address/32" flowid 1:20 2>"$WORK/tc.err" ||
  skip "tc cannot shape by destination here: $(cat "$WORK/tc.err")"
run=(timeout 150 "$RUNRUN" --rsh-agent "$AGENT" --network-interface "$SUBNET")
# 0.5 s per measurement (default 0.15): on a loaded CI machine a process can be descheduled for
# a tenth of a second, which a short measurement of an unshaped pair would take for a slow link.
check=(--check-network --check-network-seconds 0.5)
hosts=(-H ns1:1,ns2:1,ns3:1)

# --min-bandwidth 1 Gbit/s: the shaped pair is below it: exit 3, the command is not run.
"${run[@]}" "${check[@]}" --min-bandwidth 1 -np 3 "${hosts[@]}" "$PROBE" --token "$TOKEN" \
  >"$WORK/slow.out" 2>"$WORK/slow.err"
expect_rc $? 3 "runrun --check-network --min-bandwidth 1 with a 50 Mbit/s pair"
expect_line "$WORK/slow.out" "^runrun --check-network: 3 host\(s\), one process each, over $MODE$"
for pair in "ns1 <-> ns2" "ns1 <-> ns3" "ns2 <-> ns3"; do
  expect_line "$WORK/slow.out" "^$pair +[0-9.]+ +[0-9.]+ +[0-9.]+"
done
expect_line "$WORK/slow.out" "^ns2 <-> ns3 .*<- outlier below-minimum$"
[ "$(grep -c outlier "$WORK/slow.out")" = 1 ] || fail "only ns2 <-> ns3 is an outlier"
expect_line "$WORK/slow.out" "^verdict: host ns2 <-> ns3: 0\.0[0-9]+ Gbit/s, others [0-9.]+ Gbit/s - check --network-interface"
expect_line "$WORK/slow.out" "^below --min-bandwidth 1\.00 Gbit/s: ns2 <-> ns3 \(0\.0[0-9]+\)$"
for size in "64 KiB" "1 MiB" "16 MiB"; do expect_line "$WORK/slow.out" "^$size +[0-9.]+ +[0-9.]+ +[0-9.]+$"; done
grep -q PROBE "$WORK/slow.out" && fail "the command ran although the check failed"
hosts_empty
no_orphans

# --min-bandwidth 0.01 (10 Mbit/s): every pair passes; the check comes first, then the job.
"${run[@]}" "${check[@]}" --min-bandwidth 0.01 -np 3 "${hosts[@]}" "$PROBE" --token "$TOKEN" \
  >"$WORK/ok.out" 2>"$WORK/ok.err"
expect_rc $? 0 "runrun --check-network --min-bandwidth 0.01, then the command"
expect_line "$WORK/ok.out" "^verdict: host ns2 <-> ns3: "
grep -q "below --min-bandwidth" "$WORK/ok.out" && fail "no pair is below 0.01 Gbit/s"
verdict_line="$(grep -n '^verdict:' "$WORK/ok.out" | cut -d: -f1)"
first_probe="$(grep -n 'PROBE rank=' "$WORK/ok.out" | head -1 | cut -d: -f1)"
[ -n "$first_probe" ] && [ "$first_probe" -gt "$verdict_line" ] ||
  fail "the command's output must follow the check's report"
[ "$(grep -c 'PROBE rank=.*allreduce=ok' "$WORK/ok.out")" = 3 ] || fail "the job did not run on 3 ranks"
hosts_empty
no_orphans

# --profile on several hosts: a quick check first (report not printed), whose median pair
# bandwidth every rank gets as RUNRUN_PROFILE_LINK_GBIT (runrun.common.profile's table uses it).
"${run[@]}" --profile -np 3 "${hosts[@]}" sh -c 'echo "LINK=$RUNRUN_PROFILE_LINK_GBIT PROFILE=$RUNRUN_PROFILE # '"$TOKEN"'"' \
  >"$WORK/profile.out" 2>"$WORK/profile.err"
expect_rc $? 0 "runrun --profile over three hosts"
expect_line "$WORK/profile.err" "^runrun: --profile: link bandwidth measured for this job: [0-9.]+ Gbit/s \(median host pair\)$"
[ "$(grep -cE '^\[[0-2]\]<stdout>:LINK=[0-9]+\.[0-9]+ PROFILE=1 ' "$WORK/profile.out")" = 3 ] ||
  fail "every rank must get RUNRUN_PROFILE=1 and the measured RUNRUN_PROFILE_LINK_GBIT"
grep -q "host pair" "$WORK/profile.out" && fail "--profile's quick check must not print its report"
hosts_empty
no_orphans
echo "PASS"
