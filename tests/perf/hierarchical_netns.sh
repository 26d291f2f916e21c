#!/usr/bin/env bash
# Hierarchical against flat allreduce on two network-namespace hosts of two ranks each (as the
# test launcher.hierarchical_netns builds them; needs root for ip netns): ROUNDS rounds, each
# running runrun_bench's allreduce with RUNRUN_HIERARCHICAL_ALLREDUCE=0 and then =1 under
# `runrun --MODE -np 4 -H ns1:2,ns2:2`, and prints per size each round's runtime medians (us)
# and the ratio hierarchical / flat. The namespaces share this machine's kernel and cores: the
# "network" is a veth pair through a bridge (memory copies, no wire), so this measures the
# algorithm's overheads, not what a real network would give (docs/perf-notes/
# hierarchical-cpu.md).
# Usage: tests/perf/hierarchical_netns.sh RUNRUN RUNRUN_BENCH [mpi|gloo] [ROUNDS] [SIZES]
export RUNRUN_TEST_CONTROLLER="${3:-gloo}"
rounds="${4:-3}"
sizes="${5:-4,1M,64M}"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../integration/launcher/lib.sh" "$1" "$2"
source "$here/../integration/launcher/netns_hosts.sh"
make_hosts 2
for round in $(seq 1 "$rounds"); do
  for hier in 0 1; do
    RUNRUN_HIERARCHICAL_ALLREDUCE=$hier timeout 600 "$RUNRUN" --rsh-agent "$AGENT" \
      --network-interface "$SUBNET" -np 4 -H ns1:2,ns2:2 --output-filename "$WORK/r$round-h$hier" \
      "$PROBE" --json --cases allreduce --sizes "$sizes" --shared-clock \
      >"$WORK/r$round-h$hier.log" 2>&1 || { cat "$WORK/r$round-h$hier.log"; fail "run $round/$hier"; }
  done
  python3 - "$WORK/r$round-h0/rank.0/stdout" "$WORK/r$round-h1/rank.0/stdout" "$round" <<'PY'
import json, sys
rows = [{r["bytes"]: r for r in map(json.loads, open(p)) if r["op"] == "allreduce"} for p in sys.argv[1:3]]
load = open("/proc/loadavg").read().split()[0]
for size, flat in rows[0].items():
    hier = rows[1][size]
    print(f"round {sys.argv[3]} (load {load}) {size:>10} B: flat {flat['runtime_us']:.0f} "
          f"({flat['runtime_min_us']:.0f}) us, hierarchical {hier['runtime_us']:.0f} "
          f"({hier['runtime_min_us']:.0f}) us, ratio {hier['runtime_us'] / flat['runtime_us']:.2f}")
PY
done
