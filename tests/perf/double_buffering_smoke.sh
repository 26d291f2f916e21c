#!/usr/bin/env bash
# perf.double_buffering_smoke: runs double_buffering_bench.py under `runrun --gloo -np 2` with a
# tiny model and checks that it exits 0 and that rank 0 printed the five rows (no
# communication; none and fp16, each without and with double buffering) with positive step
# times. Asserts nothing about time; `timeout` bounds the job.
# Usage: double_buffering_smoke.sh RUNRUN PYTHON CORE_MODULE WORK
set -uo pipefail
RUNRUN="$1"; PYTHON="$2"; CORE="$3"; WORK="$4"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
fail() { echo "FAIL: $*"; exit 1; }
source "$HERE/../support/stage_python_package.sh"

stage_python_package "$WORK" "$CORE"
timeout -k 10 150 "$RUNRUN" --gloo -np 2 --output-filename "$WORK/out" \
  "$PYTHON" "$HERE/double_buffering_bench.py" --width 32 --layers 2 --steps 3 --warmup 1 \
  --rounds 1 >"$WORK/launcher.log" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "exit $rc; output:
$(cat "$WORK/launcher.log")"
"$PYTHON" - "$WORK/out/rank.0/stdout" <<'PY' || fail "rank 0's output is not what was expected"
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
kinds = [(r["compression"], r["double_buffering"]) for r in rows]
assert kinds == [("local (no allreduce)", False), ("none", False), ("none", True),
                 ("fp16", False), ("fp16", True)], kinds
for r in rows:
    assert r["size"] == 2 and r["step_ms"] > 0 and r["step_min_ms"] > 0, r
print(f"double_buffering_bench printed {len(rows)} valid rows")
PY
