#!/usr/bin/env bash
# perf.torch_side_by_side_smoke: runs torch_side_by_side.py under `runrun --gloo -np 2` with tiny
# sizes and checks that it exits 0 and that rank 0 printed a run line (runrun over gloo) and one
# valid JSON row per case with positive times on both sides. Asserts nothing about time. The
# package is this checkout's Python sources plus this build's extension, copied into WORK (no
# install needed); `timeout` bounds the job.
# Usage: torch_smoke.sh RUNRUN PYTHON CORE_MODULE WORK
set -uo pipefail
RUNRUN="$1"; PYTHON="$2"; CORE="$3"; WORK="$4"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
fail() { echo "FAIL: $*"; exit 1; }
source "$HERE/../support/stage_python_package.sh"

stage_python_package "$WORK" "$CORE"
"$PYTHON" -c "import torch, runrun.torch" || fail "$PYTHON cannot import torch and runrun.torch"

timeout -k 10 150 "$RUNRUN" --gloo -np 2 --output-filename "$WORK/out" \
  "$PYTHON" "$HERE/torch_side_by_side.py" --json --sizes 4,4K --many-count 5 \
  --iters 2 --warmup 1 --out-of-place >"$WORK/launcher.log" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "exit $rc; output:
$(cat "$WORK/launcher.log")"
"$PYTHON" - "$WORK/out/rank.0/stdout" <<'PY' || fail "rank 0's output is not what was expected"
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
run = [r for r in rows if r["op"] == "run"]
assert len(run) == 1 and run[0]["backend"] == "gloo", f"run line: {run}"
cases = [r for r in rows if r["op"] != "run"]
assert [r["op"] for r in cases] == ["allreduce", "allreduce", "allreduce.many"], cases
for r in cases:
    for field in ("runrun_us", "runrun_min_us", "torch_us", "torch_min_us", "ratio", "ratio_min"):
        assert r[field] > 0, f"{field} not positive in {r}"
assert all(r["runrun_oop_us"] > 0 for r in cases[:2]), cases
print(f"torch_side_by_side printed {len(cases)} valid rows")
PY
