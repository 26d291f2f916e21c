#!/usr/bin/env bash
# perf.per_tensor_cost_smoke: runs per_tensor_cost.py under `runrun --gloo -np 2` with a few
# small tensors and checks that it exits 0 and that rank 0 printed a run line and one valid JSON
# row per side with positive times (and rounds >= 1 for runrun's sides) and the machine's
# yardstick; then enqueue_alone.py in one process, checked the same way. Asserts nothing about
# time. The package is this checkout's Python sources plus
# this build's extension, copied into WORK (no install needed); `timeout` bounds the job.
# Usage: per_tensor_smoke.sh RUNRUN PYTHON CORE_MODULE WORK
set -uo pipefail
RUNRUN="$1"; PYTHON="$2"; CORE="$3"; WORK="$4"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
fail() { echo "FAIL: $*"; exit 1; }
source "$HERE/../support/stage_python_package.sh"

stage_python_package "$WORK" "$CORE"
"$PYTHON" -c "import torch, numpy, runrun.torch" || fail "$PYTHON cannot import torch, numpy, runrun.torch"

timeout -k 10 150 "$RUNRUN" --gloo -np 2 --output-filename "$WORK/out" \
  "$PYTHON" "$HERE/per_tensor_cost.py" --json --count 5 --bytes 64 --iters 2 --warmup 1 \
  >"$WORK/launcher.log" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "exit $rc; output:
$(cat "$WORK/launcher.log")"
"$PYTHON" - "$WORK/out/rank.0/stdout" <<'PY' || fail "rank 0's output is not what was expected"
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
run = [r for r in rows if r.get("op") == "run"]
assert len(run) == 1 and run[0]["backend"] == "gloo" and run[0]["count"] == 5, f"run: {run}"
sides = [r for r in rows if "side" in r]
assert [r["side"] for r in sides] == ["runrun.torch", "runrun.common+numpy",
                                      "runrun.torch grouped", "torch.distributed"], sides
for r in sides:
    for field in ("enqueue_us_per_tensor", "enqueue_us_per_tensor_min", "total_ms",
                  "total_ms_min"):
        assert r[field] > 0, f"{field} not positive in {r}"
    if r["side"].startswith("runrun"):  # Runtime.counters(): at least one round per block
        assert r["rounds"] >= 1 and r["rounds_max"] >= r["rounds"], f"rounds in {r}"
machine = [r for r in rows if r.get("op") == "machine"]
assert len(machine) == 1 and 0 < machine[0]["yardstick_ns_min"] <= machine[0]["yardstick_ns_max"], \
    f"machine: {machine}"
print(f"per_tensor_cost printed {len(sides)} valid rows")
PY

# enqueue_alone.py: the same calls in one process without a peer (no launcher).
timeout -k 10 120 "$PYTHON" "$HERE/enqueue_alone.py" --json --blocks 10 --count 5 \
  >"$WORK/alone.log" 2>&1 || fail "enqueue_alone.py failed; output:
$(cat "$WORK/alone.log")"
"$PYTHON" - "$WORK/alone.log" <<'PY' || fail "enqueue_alone.py's output is not what was expected"
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
assert [r["side"] for r in rows] == ["runrun.torch", "runrun.common+numpy"], rows
for r in rows:
    assert r["blocks"] == 10 and 0 < r["enqueue_us_per_tensor_min"] <= r["enqueue_us_per_tensor"], r
    assert r["fast_state_blocks"] >= 1 and r["yardstick_ns_min"] > 0, r
print(f"enqueue_alone printed {len(rows)} valid rows")
PY
