#!/usr/bin/env bash
# runrun --autotune --autotune-log-file F -np 2: the job's results stay exact while the global
# set's fusion threshold and cycle time are searched; rank 0 (and only rank 0) logs the frozen
# values and writes the CSV log: a header, one row per sample, a final row.
source "$(dirname "$0")/lib.sh"
LOG="$WORK/autotune.csv"
# 1 warmup sample + 11 candidates (defaults, 6 fusion thresholds, 4 cycle times) of 2 rounds.
RUNRUN_AUTOTUNE_SAMPLES_PER_CANDIDATE=1 timeout 90 "$RUNRUN" -np 2 --autotune \
  --autotune-log-file "$LOG" --autotune-warmup-samples 1 --autotune-steps-per-sample 2 \
  --log-level info "$PROBE" --steps 60 --token "$TOKEN" >"$WORK/probe.out" 2>"$WORK/probe.err"
expect_rc $? 0 "runrun --autotune -np 2 probe --steps 60"
for r in 0 1; do
  expect_line "$WORK/probe.out" "^\[$r\]<stdout>:PROBE rank=$r size=2 .* allreduce=ok$"
done
[ -f "$LOG" ] || fail "--autotune-log-file $LOG was not written"
expect_line "$LOG" '^sample,kind,round,fusion_threshold_bytes,cycle_time_ms,hierarchical_allreduce,bytes,seconds,score_bytes_per_s$'
expect_line "$LOG" '^1,warmup,2,4194304,1,0,'
expect_line "$LOG" '^13,final,24,[0-9]+,[0-9.]+,0,0,0,'
[ "$(wc -l <"$LOG")" = 14 ] || fail "$LOG: expected 14 lines (header, 12 samples, final), got $(wc -l <"$LOG")"
[ "$(grep -c '^[0-9]*,sample,' "$LOG")" = 11 ] || fail "$LOG: expected 11 sample rows"
all="$(cat "$WORK/probe.out" "$WORK/probe.err")"
grep -Eq '^\[0\]<std(out|err)>:.*autotune: frozen after 12 samples \(24 rounds\): fusion_threshold=' <<<"$all" \
  || fail "rank 0 did not log the frozen values"
grep -Eq '^\[1\]<std(out|err)>:.*autotune: frozen' <<<"$all" && fail "rank 1 logged the frozen values too"
no_orphans
echo "PASS"
