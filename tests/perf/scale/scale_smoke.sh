#!/usr/bin/env bash
# perf.scale_smoke: runs scale_bench.sh --quick on 2 shaped namespace hosts at 4 bytes (runrun
# over Gloo and MPI beside raw Gloo and torch's gloo) and checks that every job wrote the rows it
# should (allreduce, the 100-tensor step, the MLP step on both sides, positive times) and that
# the summary printed its tables. Asserts nothing about time. Needs root and the installed
# runrun package (make install); exits 77 (skip) where namespaces are not permitted.
# Usage: scale_smoke.sh BUILD_DIR OUT_DIR
set -uo pipefail
BUILD="$1"; OUT="$2"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
fail() { echo "FAIL: $*"; exit 1; }
(cd / && python3 -c "import torch, runrun.torch") ||
  fail "python3 cannot import torch and runrun.torch: make install"
rm -rf "$OUT"
timeout -k 10 400 bash "$HERE/scale_bench.sh" "$BUILD" --layouts 2 --sizes 4 --quick \
  --out "$OUT" >"$OUT.log" 2>&1
rc=$?
[ $rc -eq 77 ] && { cat "$OUT.log"; exit 77; }
[ $rc -eq 0 ] || fail "scale_bench exited $rc:
$(tail -n 40 "$OUT.log")"
python3 - "$OUT" <<'PY' || fail "the rows are not what was expected"
import json, sys
out = sys.argv[1]
def rows(name):
    return [json.loads(l) for l in open(f"{out}/2-{name}.jsonl") if l.strip()]
bench = [r for r in rows("gloo-bench") if r["op"] == "allreduce"]
assert len(bench) == 1 and bench[0]["bytes"] == 4 and bench[0]["runtime_us"] > 0 \
    and bench[0]["raw_us"] > 0, bench
for name, backend in (("gloo-torch", "gloo"), ("mpi-torch", "mpi")):
    got = rows(name)
    assert got[0]["op"] == "run" and got[0]["backend"] == backend and got[0]["ranks"] == 2, got[0]
    assert [r["op"] for r in got[1:]] == ["allreduce", "allreduce.many", "mlp_step"], got
    for r in got[1:]:
        assert r["runrun_us"] > 0 and r["torch_us"] > 0, r
print("scale_smoke: every job wrote its rows")
PY
grep -q "^| 4 B |" "$OUT.log" && grep -q "^| 2 | 2 | 1 |" "$OUT.log" ||
  fail "the summary tables are missing:
$(tail -n 20 "$OUT.log")"
echo "scale_smoke: ok"
