#!/usr/bin/env bash
# The job's rendezvous server refuses a wrong or a missing secret, in a real `runrun --gloo`
# job: rank 0 (rendezvous_intruder, the "probe" here) connects to the server it finds in its
# environment with a wrong secret and with none, while the other ranks connect through it, and
# again once the mesh is up. Each attempt is refused with its reason; the launcher reports each
# refusal with the peer's address (never the secret); the job is unaffected: it finishes with
# exit 0 and a correct allreduce on every rank.
source "$(dirname "$0")/lib.sh"
gloo_mode || fail "run this test with RUNRUN_TEST_CONTROLLER=gloo"
INTRUDER="$PROBE"

timeout 90 "$RUNRUN" -np 3 "$INTRUDER" --token "$TOKEN" >"$WORK/job.out" 2>"$WORK/job.err"
expect_rc $? 0 "a runrun --gloo job with an intruder"
[ "$(grep -c "^\[0\]<stdout>:INTRUDER refused wrong secret: .*refused this rank (the intruder): wrong job secret" "$WORK/job.out")" = 2 ] ||
  fail "rank 0 did not see both connections with a wrong secret refused with that reason"
expect_line "$WORK/job.out" "^\[0\]<stdout>:INTRUDER refused missing secret: .*refused this rank \(the intruder\): no job secret presented"
for r in 0 1 2; do
  expect_line "$WORK/job.out" "^\[$r\]<stdout>:INTRUDER rank=$r size=3 backend=gloo allreduce=ok$"
done
# The launcher's own report of each refusal: the peer's address and the reason.
[ "$(grep -Ec "^runrun: rendezvous: refused the connection from 127\.0\.0\.1:[0-9]+: wrong job secret$" "$WORK/job.err")" = 2 ] ||
  fail "the launcher did not report both refusals of a wrong secret"
expect_line "$WORK/job.err" "^runrun: rendezvous: refused the connection from 127\.0\.0\.1:[0-9]+: no job secret presented$"
[ "$(grep -c "refused the connection" "$WORK/job.err")" = 3 ] ||
  fail "the launcher reported refusals other than the intruder's three"
grep -Eq "[0-9a-f]{64}" "$WORK/job.out" "$WORK/job.err" && fail "a 64-hex-digit secret was printed"
no_orphans
echo "PASS"
