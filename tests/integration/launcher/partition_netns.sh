#!/usr/bin/env bash
# A network partition is not blamed on a healthy rank (issue 36, point 3): two network-namespace
# hosts of two ranks each allreduce in a loop under `runrun --gloo`; then ns2's link is cut
# (its veth taken down). Every rank loses the ranks across the cut (RUNRUN_PEER_TIMEOUT) and
# fails; the launcher's summary must say that the link between ns1 (ranks 0-1) and ns2 (ranks
# 2-3) was lost, and must not name a rank as the cause. No process is left on either host.
# Then a rank that crashes on one host is still named as the cause (not a partition).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/netns_hosts.sh"
gloo_mode || { echo "SKIP: a partition under mpirun is another story (issue 36, point 5)"; exit 77; }
make_hosts 2
export RUNRUN_PEER_TIMEOUT=3
run=(timeout 100 "$RUNRUN" --rsh-agent "$AGENT" --network-interface "$SUBNET")

"${run[@]}" -np 4 -H ns1:2,ns2:2 "$PROBE" --allreduce-loop --token "$TOKEN" >"$WORK/cut.out" 2>"$WORK/cut.err" &
launcher=$!
for i in $(seq 1 300); do
  [ "$(grep -c "PROBE looping" "$WORK/cut.out")" = 4 ] && break
  kill -0 "$launcher" 2>/dev/null || break
  sleep 0.1
done
[ "$(grep -c "PROBE looping" "$WORK/cut.out")" = 4 ] || fail "the four ranks did not start looping"
cut_at=$(date +%s.%N)
ns2_link="rr$(( $$ % 100000 ))h2"  # the bridge's end of ns2's veth (netns_hosts.sh)
ip link set "$ns2_link" down || fail "cannot take ns2's link down"
wait "$launcher"
rc=$?
echo "partition: the launcher ended $(echo "$(date +%s.%N) - $cut_at" | bc) s after the cut (rc $rc)"
[ "$rc" = 0 ] && fail "the job succeeded across a cut link"
expect_line "$WORK/cut.err" "^runrun: the network link between host ns1 \(ranks 0-1\) and host ns2 \(ranks 2-3\) was lost \(a network partition, or one side's hosts went down\): every rank on each side lost the ranks on the other side; no rank caused the failure"
grep -E "^runrun: rank [0-9]+ on host ns[12] failed|failing because of" "$WORK/cut.err" &&
  fail "a rank was blamed for the partition"
hosts_empty
no_orphans
ip link set "$ns2_link" up || fail "cannot bring ns2's link up again"

# One rank crashing (SIGKILL) on ns2 while the others loop: that rank is the cause, named; its
# host's other rank lost it too, which is not a partition.
"${run[@]}" -np 4 -H ns1:2,ns2:2 "$PROBE" --allreduce-loop --token "$TOKEN" >"$WORK/crash.out" 2>"$WORK/crash.err" &
launcher=$!
for i in $(seq 1 300); do
  [ "$(grep -c "PROBE looping" "$WORK/crash.out")" = 4 ] && break
  sleep 0.1
done
[ "$(grep -c "PROBE looping" "$WORK/crash.out")" = 4 ] || fail "the four ranks did not start looping"
ip netns pids "${HOST_NAMESPACES[1]}" | while read -r pid; do
  case "$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" in
    *topology_probe*--allreduce-loop*) [ "$(tr '\0' '\n' <"/proc/$pid/environ" | grep '^RUNRUN_RANK=')" = RUNRUN_RANK=3 ] && kill -9 "$pid" ;;
  esac
done
wait "$launcher"
expect_rc $? 137 "rank 3 killed by SIGKILL"
expect_line "$WORK/crash.err" "^runrun: rank 3 on host ns2 failed with signal 9 "
grep -q "network link" "$WORK/crash.err" && fail "a crash was called a partition"
hosts_empty
no_orphans
echo "PASS"
