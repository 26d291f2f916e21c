#!/usr/bin/env bash
# Why: how runrun's cost grows with the number of hosts, on links shaped like a (scaled-down)
# cluster's, beside what users would otherwise run on the same hosts in the same run (issue 40,
# point 1). A benchmark, never a test: it prints numbers and asserts nothing about time.
#
# Makes up to 8 network-namespace hosts (tests/integration/launcher/netns_hosts.sh: veth pairs
# through a bridge), shapes every host's link with tc htb to RATE in both directions (netem is
# not in this kernel, so no added delay), and for each layout (N = hosts, HxR = H hosts of R
# ranks) runs, one rank per namespace slot:
#   - runrun_bench's allreduce over Gloo: the runtime beside raw Gloo in the same processes
#     (busbw, plottable with `python -m runrun.plot`);
#   - torch_side_by_side.py under `runrun --gloo` and under `runrun --mpi`: runrun (over Gloo,
#     or over MPI) beside torch.distributed's gloo in the same processes: the allreduce sizes,
#     a cached step of 100 four-byte tensors (negotiation and fusion), and a training step of a
#     synthetic MLP (DistributedOptimizer against DDP).
# Writes every JSON line under OUT (default /tmp/runrun_scale), one file per layout and run,
# and prints a table (tests/perf/scale/summarize_scale.py). Needs root (ip netns, tc).
#
# Usage: tests/perf/scale/scale_bench.sh BUILD_DIR [options]
#   --layouts "2 4 8 2x2"   layouts to run (default)
#   --rate 1gbit            per-host link rate for tc (default 1gbit; none: no shaping)
#   --sizes 4,64K,1M,16M,64M
#   --out DIR               where the JSON lines go (default /tmp/runrun_scale)
#   --skip-mpi              no `runrun --mpi` runs
#   --env NAME=VALUE        forwarded to the ranks (e.g. RUNRUN_GLOO_ALLREDUCE=direct); repeatable
#   --quick                 few iterations (the smoke test, perf.scale_smoke): numbers meaningless
set -uo pipefail
BUILD="$(cd "${1:?usage: scale_bench.sh BUILD_DIR [options]}" && pwd)"
shift
layouts="2 4 8 2x2"
rate="1gbit"
sizes="4,64K,1M,16M,64M"
out="/tmp/runrun_scale"
with_mpi=1
extra_env=()
timing=(--budget 4)
while [ $# -gt 0 ]; do
  case "$1" in
    --layouts) layouts="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --sizes) sizes="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --skip-mpi) with_mpi=0; shift ;;
    --env) extra_env+=("$2"); shift 2 ;;
    --quick) timing=(--iters 2 --warmup 1 --budget 0.1); shift ;;
    *) echo "scale_bench: unknown option $1" >&2; exit 2 ;;
  esac
done
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
export RUNRUN_TEST_CONTROLLER=gloo
source "$root/tests/integration/launcher/lib.sh" "$BUILD/launcher/runrun" "$BUILD/tests/perf/runrun_bench"
source "$root/tests/integration/launcher/netns_hosts.sh"
command -v tc >/dev/null || skip "tc (iproute2) is not installed"

most=0
for layout in $layouts; do
  hosts="${layout%x*}"
  [ "$hosts" -gt "$most" ] && most="$hosts"
done
[ "$most" -le 8 ] || fail "at most 8 hosts (asked for $most)"
make_hosts "$most"

# Both directions of every host's link: the host's egress on its end of the veth pair, its
# ingress as the bridge port's egress.
for i in $(seq 1 "$most"); do
  [ "$rate" = none ] && break
  ns="${HOST_NAMESPACES[$((i - 1))]}"
  tag="${ns%ns*}"
  for where in "ip netns exec $ns tc" "tc"; do
    dev="${tag}p$i"
    [ "$where" = tc ] && dev="${tag}h$i"
    $where qdisc add dev "$dev" root handle 1: htb default 1 &&
      $where class add dev "$dev" parent 1: classid 1:1 htb rate "$rate" ceil "$rate" quantum 60000 ||
      fail "cannot shape $dev to $rate"
  done
done
mkdir -p "$out"
env_args=()
for setting in "${extra_env[@]}"; do
  export "${setting?}"
  env_args+=(-x "${setting%%=*}")
done
echo "# scale_bench: layouts $layouts, every host's link shaped to $rate each way (tc htb)," \
     "sizes $sizes, ${extra_env[*]:-default settings}; $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"

# run_job LAYOUT MODE NAME COMMAND...: one job over the layout's hosts; rank 0's stdout (JSON
# lines) goes to $out/LAYOUT-NAME.jsonl.
run_job() {
  local layout="$1" mode="$2" name="$3"
  shift 3
  local hosts="${layout%x*}" per_host=1 list="" i
  [ "$layout" != "$hosts" ] && per_host="${layout#*x}"
  for i in $(seq 1 "$hosts"); do list+="${list:+,}ns$i:$per_host"; done
  local dir="$WORK/$layout-$name"
  timeout 900 "$RUNRUN_BINARY" "--$mode" --rsh-agent "$AGENT" --network-interface "$SUBNET" \
    "${env_args[@]}" -np "$((hosts * per_host))" -H "$list" --output-filename "$dir" "$@" \
    >"$dir.log" 2>&1 || { tail -n 30 "$dir.log" >&2; fail "$layout $name"; }
  grep '^{' "$dir/rank.0/stdout" >"$out/$layout-$name.jsonl"
}

for layout in $layouts; do
  echo "# $layout: runrun_bench over gloo" >&2
  run_job "$layout" gloo gloo-bench "$PROBE" --json --cases allreduce --sizes "$sizes" "${timing[@]}"
  echo "# $layout: torch_side_by_side under runrun --gloo" >&2
  run_job "$layout" gloo gloo-torch python3 "$root/tests/perf/torch_side_by_side.py" --json \
    --sizes "$sizes" --many-count 100 --many-bytes 4 --mlp "${timing[@]}" --timeout 60
  if [ "$with_mpi" = 1 ]; then
    echo "# $layout: torch_side_by_side under runrun --mpi" >&2
    run_job "$layout" mpi mpi-torch python3 "$root/tests/perf/torch_side_by_side.py" --json \
      --sizes "$sizes" --many-count 100 --many-bytes 4 --mlp "${timing[@]}" --timeout 60
  fi
done
python3 "$here/summarize_scale.py" --rate "$rate" "$out" $layouts
