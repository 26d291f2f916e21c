#!/usr/bin/env bash
# The torchrun convention (issue 35, points 3 and 5): ranks that torchrun starts form one runrun
# job over Gloo (WORLD_SIZE, RANK, MASTER_ADDR, ...), rank 0 serving the rendezvous on a port
# of its own; variables that say "several ranks" but cannot form a job make init() raise, never
# a job of one. Cases: torchrun --standalone on this host (2 ranks); torchrun --nnodes 2 across
# two network-namespace hosts (2 x 2 ranks, static rendezvous at host 1); incomplete variables.
# Every case checks the size, equal parameters on every rank and the result of one process on
# the global batch (train_check.py), and that nothing is left running.
# Usage: torchrun_test.sh RUNRUN PYTHON CORE_MODULE (this build's package is staged on
# PYTHONPATH, which torchrun passes on to its workers)
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../launcher/lib.sh" "$1" /bin/true
PYTHON="$2"
source "$here/../../support/stage_python_package.sh"
stage_python_package "$WORK/py" "$3"
CHECK="$here/train_check.py"
"$PYTHON" -c "import torch" 2>/dev/null || fail "torch is not installed for $PYTHON"
TORCHRUN=("$PYTHON" -m torch.distributed.run)



echo "== torchrun --standalone --nproc_per_node 2 (one host)"
"${TORCHRUN[@]}" --standalone --nproc_per_node 2 "$CHECK" 2 --tag "$TOKEN" \
  >"$WORK/standalone.out" 2>"$WORK/standalone.err"
expect_rc $? 0 "torchrun --standalone"
[ "$(grep -c 'TRAIN_CHECK OK rank [01] of 2 local_rank [01] of 2' "$WORK/standalone.out")" = 2 ] ||
  fail "torchrun: expected 2 ranks of a job of 2 (standalone.out)"
no_orphans

echo "== WORLD_SIZE=2 without MASTER_ADDR: init() raises naming the variables"
WORLD_SIZE=2 RANK=0 LOCAL_RANK=0 "$PYTHON" "$CHECK" 2 --tag "$TOKEN" \
  >"$WORK/incomplete.out" 2>"$WORK/incomplete.err"
rc=$?
[ "$rc" != 0 ] || fail "an incomplete torchrun environment trained (as a job of one?)"
expect_line "$WORK/incomplete.err" "MASTER_ADDR is not set.*WORLD_SIZE, RANK, LOCAL_RANK"
grep -q "TRAIN_CHECK" "$WORK/incomplete.out" && fail "the incomplete environment reached training"

echo "== torchrun --nnodes 2 --nproc_per_node 2 across two namespace hosts"
source "$here/../launcher/netns_hosts.sh"
make_hosts 2
master="10.231.$(( $$ % 200 + 20 )).11"
pids=()
for node in 0 1; do
  ns="${HOST_NAMESPACES[$node]}"
  ip netns exec "$ns" "${TORCHRUN[@]}" --nnodes 2 --nproc_per_node 2 --node_rank "$node" \
    --master_addr "$master" --master_port 29531 "$CHECK" 4 --tag "$TOKEN" \
    >"$WORK/node$node.out" 2>"$WORK/node$node.err" &
  pids+=($!)
done
for node in 0 1; do
  wait "${pids[$node]}"
  expect_rc $? 0 "torchrun node $node"
done
cat "$WORK/node0.out" "$WORK/node1.out"
[ "$(cat "$WORK"/node*.out | grep -c 'TRAIN_CHECK OK rank [0-3] of 4 local_rank [01] of 2 cross_rank [01] of 2')" = 4 ] ||
  fail "torchrun --nnodes 2: expected 4 ranks, 2 per host"
hosts_empty
no_orphans
echo "PASS"
