#!/usr/bin/env bash
# A hostfile with three namespace hosts of uneven slots (both line formats, a comment, a blank
# line), the agent given through RUNRUN_RSH_AGENT: -np 4 puts 2 ranks on ns1, 1 on ns2, 1 on
# ns3; cross ranks group the ranks with the same local rank.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/netns_hosts.sh"
make_hosts 3
printf '# three test hosts\nns1 slots=2\n\nns2:1\nns3 slots=1   # last\n' >"$WORK/hostfile"
RUNRUN_RSH_AGENT="$AGENT" timeout 150 "$RUNRUN" -np 4 --hostfile "$WORK/hostfile" \
  --network-interface "$SUBNET" "$PROBE" --token "$TOKEN" >"$WORK/file.out" 2>"$WORK/file.err"
expect_rc $? 0 "runrun -np 4 --hostfile"
#        rank host local_rank local_size cross_rank cross_size
expected=("0 1 0 2 0 3" "1 1 1 2 0 1" "2 2 0 1 1 3" "3 3 0 1 2 3")
for row in "${expected[@]}"; do
  read -r r h lr ls cr cs <<<"$row"
  expect_line "$WORK/file.out" "^\[$r\]<stdout>:PROBE rank=$r size=4 local_rank=$lr local_size=$ls cross_rank=$cr cross_size=$cs netns=$(netns_id $h | sed 's/[][]/\\&/g') host=ns$h allreduce=ok$"
done
hosts_empty
no_orphans
echo "PASS"
