#!/usr/bin/env bash
# runrun --profile and python -m runrun.plot on real output (docs/profiling.md):
# 1. a 2-rank torch job with DistributedOptimizer, no change to the script, rank 1 made late:
#    rank 0 (only) prints the table every 10 steps and at the end, with rank 1 named slowest;
#    the JSON lines hold one record per step (the gradients' bytes) and the summaries;
# 2. a custom loop with hvd.profile_step() and rank 0 made late: one record per step, rank 0
#    named slowest (from the negotiation: the loop's records have no wait in them); a
#    double-buffered DistributedOptimizer: one record per step, each step reporting the allreduce it waited for
#    (check_steps.py);
# 3. without --profile nothing is printed;
# 4. runrun_bench --json and the profile JSON turned into PNGs (valid images); bad input fails
#    with the file and line named.
# Asserts nothing about time except what the late rank's sleep makes certain (its readiness
# reaches the negotiation more than half the sleep after the other's; 150 ms is far above the
# noise of a step of this tiny model, one torch thread per rank, on a loaded machine).
# Usage: profile_plot.sh RUNRUN PYTHON CORE_MODULE BENCH WORK
set -uo pipefail
RUNRUN="$1"; PYTHON="$2"; CORE="$3"; BENCH="$4"; WORK="$5"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
fail() { echo "FAIL: $*"; exit 1; }
source "$HERE/../../support/stage_python_package.sh"
stage_python_package "$WORK" "$CORE"
"$PYTHON" -c "import torch, runrun.torch, matplotlib" || fail "$PYTHON lacks torch or matplotlib"
run=(timeout -k 10 150 "$RUNRUN" --gloo -np 2)

"${run[@]}" --profile --profile-interval 10 --profile-output "$WORK/profile.jsonl" \
  "$PYTHON" "$HERE/train_tiny.py" --steps 20 --late-rank 1 --late-ms 150 >"$WORK/dist.log" 2>&1
rc=$?; [ $rc -eq 0 ] || fail "--profile job: exit $rc: $(cat "$WORK/dist.log")"
grep -q '^\[0\]<stderr>:runrun profile (so far): 10 steps, 2 ranks' "$WORK/dist.log" &&
  grep -q '^\[0\]<stderr>:runrun profile (so far): 20 steps' "$WORK/dist.log" &&
  grep -q '^\[0\]<stderr>:runrun profile (final): 20 steps' "$WORK/dist.log" ||
  fail "rank 0 did not print the table at steps 10, 20 and the end: $(cat "$WORK/dist.log")"
grep -q '^\[1\]<stderr>:runrun profile' "$WORK/dist.log" && fail "rank 1 printed a table"
grep -q '^\[0\]<stderr>:  slowest rank: 1, late by' "$WORK/dist.log" ||
  fail "rank 1 (150 ms late every step) is not named slowest: $(grep -A14 '(final)' "$WORK/dist.log")"
grep -q '^\[0\]<stderr>:  link bandwidth measured for this job: not measured (one host)' \
  "$WORK/dist.log" || fail "one host: the link bandwidth must say it was not measured"
grep -q '^\[0\]<stderr>:  verdict: ' "$WORK/dist.log" || fail "no verdict line"
"$PYTHON" - "$WORK/profile.jsonl" <<'PY' || fail "the profile JSON lines are not as expected"
import json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
steps = [r for r in records if r["type"] == "step"]
summaries = [r for r in records if r["type"] == "summary"]
assert [s["step"] for s in steps] == list(range(1, 21)), [s["step"] for s in steps]
grad_bytes = 4 * (256 * 512 + 512 + 512 * 512 + 512 + 512 * 10 + 10)
for s in steps:
    assert s["rank"] == 0 and s["bytes"] == grad_bytes, s
    parts = s["compute_s"] + s["exposed_s"] + s["optimizer_s"]
    assert parts <= s["step_s"] + 1e-9 and min(s[k] for k in s if k.endswith("_s")) >= 0, s
    assert abs(s["hidden_s"] + s["exposed_s"] - s["communication_s"]) < 1e-9 or s["hidden_s"] == 0, s
    assert s["busbw_gbit"] > 0 and abs(s["busbw_gbit"] - s["algbw_gbit"]) < 1e-9, s  # 2 ranks
assert [(r["steps"], r["final"]) for r in summaries] == [(10, False), (20, False), (20, True)]
final = summaries[-1]
assert final["slowest_rank"] == 1 and final["lateness_s"] > 0.075, final
assert final["rank_lateness_s"][0] < 0.075, final
assert final["link_gbit"] is None and final["verdict"], final
PY

"${run[@]}" --profile --profile-output "$WORK/custom.jsonl" \
  "$PYTHON" "$HERE/train_tiny.py" --steps 7 --custom --late-rank 0 --late-ms 150 \
  >"$WORK/custom.log" 2>&1
rc=$?; [ $rc -eq 0 ] || fail "custom loop: exit $rc: $(cat "$WORK/custom.log")"
[ "$(grep -c '"type": "step"' "$WORK/custom.jsonl")" = 7 ] || fail "custom loop: not 7 step records"
grep -q '^\[0\]<stderr>:runrun profile (final): 7 steps' "$WORK/custom.log" || fail "custom: no table"
"$PYTHON" - "$WORK/custom.jsonl" <<'PY' || fail "custom loop: rank 0 (late) is not named slowest"
import json, sys
final = [json.loads(line) for line in open(sys.argv[1])][-1]
assert final["final"] and final["slowest_rank"] == 0 and final["lateness_s"] > 0.075, final
PY

"${run[@]}" --profile --profile-output "$WORK/double.jsonl" \
  "$PYTHON" "$HERE/train_tiny.py" --steps 12 --double-buffering >"$WORK/double.log" 2>&1
rc=$?; [ $rc -eq 0 ] || fail "double buffering: exit $rc: $(cat "$WORK/double.log")"
"$PYTHON" "$HERE/check_steps.py" "$WORK/double.jsonl" 12 \
  $((4 * (256 * 512 + 512 + 512 * 512 + 512 + 512 * 10 + 10))) --double-buffering ||
  fail "double buffering: the step records are not as expected"

"${run[@]}" "$PYTHON" "$HERE/train_tiny.py" --steps 3 >"$WORK/off.log" 2>&1
rc=$?; [ $rc -eq 0 ] || fail "job without --profile: exit $rc: $(cat "$WORK/off.log")"
grep -q 'runrun profile' "$WORK/off.log" && fail "a table was printed without --profile"

"${run[@]}" --output-filename "$WORK/bench" "$BENCH" --json --cases allreduce \
  --sizes 4K,64K,1M --iters 2 --warmup 1 >"$WORK/bench.log" 2>&1
rc=$?; [ $rc -eq 0 ] || fail "runrun_bench: exit $rc: $(cat "$WORK/bench.log")"
cp "$WORK/bench/rank.0/stdout" "$WORK/bench.jsonl"
"$PYTHON" -m runrun.plot "$WORK/bench.jsonl" "$WORK/profile.jsonl" --out-dir "$WORK/png" \
  >"$WORK/plot.out" 2>&1 || fail "runrun.plot: $(cat "$WORK/plot.out")"
"$PYTHON" - "$WORK/png/bench-bandwidth.png" "$WORK/png/profile-steps.png" <<'PY' ||
import sys
import matplotlib.image
for path in sys.argv[1:]:
    assert open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    height, width = matplotlib.image.imread(path).shape[:2]
    assert height > 100 and width > 100, (path, height, width)
PY
  fail "the PNGs are not valid images"
printf '{"op":"allreduce","bytes":4}\nnot json\n' >"$WORK/bad.jsonl"
"$PYTHON" -m runrun.plot "$WORK/bad.jsonl" --out-dir "$WORK/png" >"$WORK/bad.out" 2>&1
rc=$?; [ $rc -eq 2 ] || fail "bad input: exit $rc, expected 2"
grep -q "bad.jsonl:2: not a JSON object" "$WORK/bad.out" || fail "bad input: $(cat "$WORK/bad.out")"
echo "PASS"
