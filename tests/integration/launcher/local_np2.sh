#!/usr/bin/env bash
# runrun -np 2 on localhost with a real program (the C-API probe), and a command whose
# arguments look like options (passed on untouched).
source "$(dirname "$0")/lib.sh"
timeout 90 "$RUNRUN" -np 2 "$PROBE" --token "$TOKEN" >"$WORK/probe.out" 2>"$WORK/probe.err"
expect_rc $? 0 "runrun -np 2 probe"
for r in 0 1; do
  expect_line "$WORK/probe.out" "^\[$r\]<stdout>:PROBE rank=$r size=2 local_rank=$r local_size=2 cross_rank=0 cross_size=1 .* allreduce=ok$"
done
[ "$(grep -c PROBE "$WORK/probe.out")" = 2 ] || fail "expected exactly 2 PROBE lines"
grep -q "rank-event" "$WORK/probe.out" "$WORK/probe.err" && fail "a rank marker leaked to the output"

timeout 60 "$RUNRUN" -np 2 python3 -c 'import os, sys; print("py", os.environ["RUNRUN_RANK"], sys.argv[1:])' -np 3 --verbose >"$WORK/py.out" 2>"$WORK/py.err"
expect_rc $? 0 "runrun -np 2 python3 -c ..."
expect_line "$WORK/py.out" "^\[0\]<stdout>:py 0 \['-np', '3', '--verbose'\]$"
expect_line "$WORK/py.out" "^\[1\]<stdout>:py 1 \['-np', '3', '--verbose'\]$"

timeout 60 "$RUNRUN" -np 1 -- sh -c 'echo "separated $RUNRUN_SIZE"' >"$WORK/sep.out" 2>"$WORK/sep.err"
expect_rc $? 0 "runrun -np 1 -- sh -c ..."
expect_line "$WORK/sep.out" '^\[0\]<stdout>:separated 1$'
no_orphans
echo "PASS"
