#!/usr/bin/env bash
# Why: the cost of a small op between hosts, and what the peer monitor adds to it (issue 40,
# point 4: between two namespace hosts a 4-byte allreduce over Gloo once took 3.0 ms with the
# peer monitor on and 0.29 ms with RUNRUN_PEER_TIMEOUT=0). A benchmark, not a test: two
# network-namespace hosts of one rank each, runrun_bench's allreduce (runtime beside raw Gloo in
# the same processes) at 4 B and 4 KiB, alternating the monitor on (30 s) and off (0), ROUNDS
# times. Prints one line per run. Needs root (ip netns).
# Usage: tests/perf/cross_host_small_op.sh BUILD_DIR [ROUNDS]
set -uo pipefail
BUILD="$(cd "${1:-build}" && pwd)"
rounds="${2:-2}"
here="$(cd "$(dirname "$0")" && pwd)"
export RUNRUN_TEST_CONTROLLER=gloo
source "$here/../integration/launcher/lib.sh" "$BUILD/launcher/runrun" "$BUILD/tests/perf/runrun_bench"
source "$here/../integration/launcher/netns_hosts.sh"
make_hosts 2
for round in $(seq 1 "$rounds"); do
  for timeout_s in 30 0; do
    out="$WORK/r$round-pt$timeout_s"
    RUNRUN_PEER_TIMEOUT=$timeout_s timeout 120 "$RUNRUN" --rsh-agent "$AGENT" \
      -x RUNRUN_PEER_TIMEOUT --network-interface "$SUBNET" -np 2 -H ns1:1,ns2:1 \
      --output-filename "$out" "$PROBE" --json --cases allreduce --sizes 4,4K --iters 200 \
      >"$out.log" 2>&1 || { cat "$out.log"; fail "round $round, RUNRUN_PEER_TIMEOUT=$timeout_s"; }
    python3 - "$out/rank.0/stdout" "$round" "$timeout_s" <<'PY'
import json, sys
rows = [r for r in map(json.loads, open(sys.argv[1])) if r.get("op") == "allreduce"]
load = open("/proc/loadavg").read().split()[0]
cells = ", ".join(f"{r['bytes']} B runtime {r['runtime_us']:.0f} us raw gloo {r['raw_us']:.0f} us"
                  for r in rows)
print(f"round {sys.argv[2]} RUNRUN_PEER_TIMEOUT={sys.argv[3]:>2} (load {load}): {cells}")
PY
  done
done
