#!/usr/bin/env bash
# runrun -np 4 -H ns1:2,ns2:2 across two network-namespace hosts: ranks, local and cross ranks
# per host, each rank in its host's namespace, a correct allreduce across hosts; then a rank on
# ns2 that fails, and SIGTERM to the launcher, each leaving no process on any host.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/netns_hosts.sh"
make_hosts 2
run=(timeout 150 "$RUNRUN" --rsh-agent "$AGENT" --network-interface "$SUBNET")

"${run[@]}" -np 4 -H ns1:2,ns2:2 "$PROBE" --token "$TOKEN" >"$WORK/hosts.out" 2>"$WORK/hosts.err"
expect_rc $? 0 "runrun -np 4 -H ns1:2,ns2:2"
for r in 0 1 2 3; do
  h=$((r / 2 + 1))
  expect_line "$WORK/hosts.out" "^\[$r\]<stdout>:PROBE rank=$r size=4 local_rank=$((r % 2)) local_size=2 cross_rank=$((r / 2)) cross_size=2 netns=$(netns_id $h | sed 's/[][]/\\&/g') host=ns$h allreduce=ok$"
done
hosts_empty
no_orphans

"${run[@]}" -np 4 -H ns1:2,ns2:2 "$PROBE" --exit-rank 3 3 --token "$TOKEN" >"$WORK/fail.out" 2>"$WORK/fail.err"
expect_rc $? 3 "a rank on ns2 exiting 3"
expect_line "$WORK/fail.err" "^runrun: rank 3 on host ns2 failed with exit code 3"
hosts_empty
no_orphans

"$RUNRUN" --rsh-agent "$AGENT" --network-interface "$SUBNET" -np 4 -H ns1:2,ns2:2 "$PROBE" --ready-and-wait --token "$TOKEN" >"$WORK/term.out" 2>"$WORK/term.err" &
launcher=$!
wait_for_lines "$WORK/term.out" "PROBE ready" 4
kill -TERM "$launcher"
timeout 60 tail --pid="$launcher" -f /dev/null || fail "the launcher did not exit after SIGTERM"
wait "$launcher"
expect_rc $? 143 "SIGTERM to the launcher"
hosts_empty
no_orphans
echo "PASS"
