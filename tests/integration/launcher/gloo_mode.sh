#!/usr/bin/env bash
# runrun --gloo specifics: --dry-run prints each rank's command (no mpirun, no secret); the job's
# rendezvous secret is on no process's command line and gone from every rank's environment once
# runrun started; without mpirun on PATH, runrun picks Gloo by itself and says so once.
source "$(dirname "$0")/lib.sh"
gloo_mode || fail "run this test with RUNRUN_TEST_CONTROLLER=gloo"

"$RUNRUN" --dry-run -np 3 -H localhost:2,nohost-b:1 -p 2222 -i /k/id python -c 'print(1)' \
  >"$WORK/dry.out" 2>"$WORK/dry.err"
expect_rc $? 0 "--gloo --dry-run"
expected="$RUNRUN_BINARY --rank-shim 2,1 --gloo-rank 0 -- python -c 'print(1)'
$RUNRUN_BINARY --rank-shim 2,1 --gloo-rank 1 -- python -c 'print(1)'
ssh -o BatchMode=yes -p 2222 -i /k/id nohost-b 'cd -- $(printf %q "$PWD") 2>/dev/null; exec $RUNRUN_BINARY --rank-shim 2,1 --gloo-rank 2 -- python -c '\\''print(1)'\\'''"
[ "$(cat "$WORK/dry.out")" = "$expected" ] || fail "dry run printed
$(cat "$WORK/dry.out")
expected
$expected"
expect_line "$WORK/dry.err" "environment on its stdin"

# The secret: never on a command line, and removed from the rank's environment by init.
"$RUNRUN" -np 2 python3 -c '
import os, sys, time, runrun.torch as hvd
hvd.init()
print("SECRET_LEFT", "RUNRUN_RENDEZVOUS_SECRET" in os.environ, hvd.gloo_enabled(), flush=True)
print("ready", flush=True)
time.sleep(60)  # '"$TOKEN" >"$WORK/secret.out" 2>"$WORK/secret.err" &
launcher=$!
wait_for_lines "$WORK/secret.out" "ready" 2 "$launcher"
# Only the job's own processes (the launcher and its descendants): another program on the machine
# may carry 64 hex digits (a checksum, a container id) on its command line.
job_tree_args "$launcher" >"$WORK/ps.txt"
[ "$(wc -l <"$WORK/ps.txt")" -ge 3 ] ||
  fail "expected the launcher and 2 ranks in: $(cat "$WORK/ps.txt")"
grep -Eq "[0-9a-f]{64}" "$WORK/ps.txt" && fail "a 64-hex-digit secret is on a command line: $(grep -E '[0-9a-f]{64}' "$WORK/ps.txt")"
kill -TERM "$launcher"
wait "$launcher"
[ "$(grep -c "<stdout>:SECRET_LEFT False True" "$WORK/secret.out")" = 2 ] ||
  fail "a rank still had the secret in its environment after init, or did not run Gloo: $(grep SECRET_LEFT "$WORK/secret.out")"
no_orphans

# No mpirun on PATH: Gloo, said once. (The probe is given by absolute path.)
mkdir -p "$WORK/bin"
ln -s "$(command -v sh)" "$WORK/bin/sh"
env PATH="$WORK/bin" "$RUNRUN_BINARY" -np 2 "$PROBE" --token "$TOKEN" >"$WORK/auto.out" 2>"$WORK/auto.err"
expect_rc $? 0 "runrun without mpirun on PATH"
[ "$(grep -c "mpirun is not installed: starting the ranks without MPI" "$WORK/auto.err")" = 1 ] ||
  fail "the automatic choice of Gloo was not said exactly once"
for r in 0 1; do
  expect_line "$WORK/auto.out" "^\[$r\]<stdout>:PROBE rank=$r size=2 .* allreduce=ok$"
done
# --mpi insists on mpirun: a preflight error naming the package.
env PATH="$WORK/bin" "$RUNRUN_BINARY" --mpi -np 2 "$PROBE" >"$WORK/mpi.out" 2>"$WORK/mpi.err"
expect_rc $? 2 "runrun --mpi without mpirun"
expect_line "$WORK/mpi.err" "mpirun was not found on PATH .*openmpi-bin"
no_orphans
echo "PASS"
