#!/usr/bin/env bash
# Start-up at N ranks over the Gloo backend's TCP transport (issue 40, point 5): for each N it
# runs `runrun --gloo -np N runrun_startup_probe` on this host with RUNRUN_GLOO_SHM=0 (TCP
# between ranks, as between hosts) and RUNRUN_LOG_LEVEL=debug (the backend's start-up phase
# lines), and prints one row per N:
#
#   N | launch->last init (ms) | slowest init (ms) | hosts / data mesh / control mesh (ms, max over
#   ranks) | TCP sockets per rank (established/listening, max) | store requests per rank (max) |
#   store bytes read per rank (max) | load (1 min) before
#
# A benchmark, never a test: no assertion on times. Usage:
#   tests/perf/scale/startup_bench.sh [BUILD_DIR] [N ...]     (default: build, 2 4 8 16 32 64)
# Keep the raw output with KEEP=DIR.
set -euo pipefail
build=${1:-build}
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(2 4 8 16 32 64)
launcher=$build/launcher/runrun
probe=$build/tests/perf/scale/runrun_startup_probe
[ -x "$launcher" ] && [ -x "$probe" ] || { echo "build $launcher and $probe first" >&2; exit 2; }
work=${KEEP:-$(mktemp -d)}
mkdir -p "$work"

echo "| N | launch→last init ms | slowest init ms | hosts / data / control mesh ms (max) |" \
     "TCP sockets per rank est/listen (max) | store requests per rank (max) |" \
     "store bytes read per rank (max) | load 1 min |"
echo "|---|---|---|---|---|---|---|---|"
for n in "${sizes[@]}"; do
  load=$(cut -d' ' -f1 /proc/loadavg)
  out=$work/np$n.out
  launch_ms=$(date +%s%3N)
  if ! RUNRUN_GLOO_SHM=0 RUNRUN_LOG_LEVEL=debug "$launcher" --gloo -np "$n" "$probe" \
      >"$out" 2>&1; then
    echo "| $n | failed: see $out |"
    continue
  fi
  awk -v n="$n" -v launch="$launch_ms" -v load="$load" '
    function max(a, b) { return a > b ? a : b }
    /startup_probe rank/ {
      for (i = 1; i <= NF; ++i) {
        if ($i == "init_return_ms") last = max(last, $(i + 1) - launch)
        if ($i == "init_ms") slowest = max(slowest, $(i + 1))
        if ($i == "after_barrier") { split($(i + 1), s, "/"); est = max(est, s[1]); lis = max(lis, s[2]) }
      }
      ranks++
    }
    /gloo start-up rank/ && /hosts exchange/ {
      for (i = 1; i <= NF; ++i) {
        if ($i == "exchange") hosts = max(hosts, $(i + 1) + 0)
        if ($i == "mesh" && $(i - 1) == "data") data = max(data, $(i + 1) + 0)
      }
    }
    /gloo start-up rank/ && /control mesh/ {
      for (i = 1; i <= NF; ++i) {
        if ($i == "mesh") control = max(control, $(i + 1) + 0)
        if ($i == "store" && $(i + 1) == "requests,") requests = max(requests, $(i - 1) + 0)
        if ($i == "bytes" && $(i + 1) == "read") bytes = max(bytes, $(i - 1) + 0)
      }
    }
    END {
      if (ranks != n) { printf "| %d | only %d of %d ranks reported |\n", n, ranks, n; exit }
      printf "| %d | %d | %.0f | %.0f / %.0f / %.0f | %d/%d | %d | %d | %s |\n",
             n, last, slowest, hosts, data, control, est, lis, requests, bytes, load
    }' "$out"
done
[ -n "${KEEP:-}" ] || rm -rf "$work"
