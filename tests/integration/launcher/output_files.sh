#!/usr/bin/env bash
# --output-filename DIR: each rank's stdout and stderr also go to DIR/rank.N/{stdout,stderr}.
source "$(dirname "$0")/lib.sh"
timeout 60 "$RUNRUN" -np 2 --output-filename "$WORK/logs" sh -c 'echo "out $RUNRUN_RANK"; echo "err $RUNRUN_RANK" >&2' >"$WORK/run.out" 2>"$WORK/run.err"
expect_rc $? 0 "runrun --output-filename"
for r in 0 1; do
  [ "$(cat "$WORK/logs/rank.$r/stdout")" = "out $r" ] || fail "rank.$r/stdout is wrong"
  [ "$(cat "$WORK/logs/rank.$r/stderr")" = "err $r" ] || fail "rank.$r/stderr is wrong"
  expect_line "$WORK/run.out" "^\[$r\]<stdout>:out $r$"
done
echo "PASS"
