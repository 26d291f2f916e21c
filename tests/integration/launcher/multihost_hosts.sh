#!/usr/bin/env bash
# runrun -np 4 -H ns1:2,ns2:2 across two network-namespace hosts: ranks, local and cross ranks
# per host, each rank in its host's namespace, a correct allreduce across hosts; the same with
# -np 3 -H ns1:2,ns2:1 (not homogeneous: hosts with different rank counts); then a rank on
# ns2 that fails, SIGTERM to the launcher, and kill -9 of the launcher, each leaving no process
# on any host; the ranks on both hosts run the launcher's virtualenv python and get its
# environment (not its secrets).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/netns_hosts.sh"
make_hosts 2
run=(timeout 150 "$RUNRUN" --rsh-agent "$AGENT" --network-interface "$SUBNET")

"${run[@]}" -np 4 -H ns1:2,ns2:2 "$PROBE" --token "$TOKEN" >"$WORK/hosts.out" 2>"$WORK/hosts.err"
expect_rc $? 0 "runrun -np 4 -H ns1:2,ns2:2"
for r in 0 1 2 3; do
  h=$((r / 2 + 1))
  expect_line "$WORK/hosts.out" "^\[$r\]<stdout>:PROBE rank=$r size=4 local_rank=$((r % 2)) local_size=2 cross_rank=$((r / 2)) cross_size=2 netns=$(netns_id $h | sed 's/[][]/\\&/g') host=ns$h allreduce=ok$"
  expect_line "$WORK/hosts.out" "^\[$r\]<stdout>:TOPOLOGY rank=$r homogeneous=1$"
done
hosts_empty
no_orphans

"${run[@]}" -np 3 -H ns1:2,ns2:1 "$PROBE" --token "$TOKEN" >"$WORK/uneven.out" 2>"$WORK/uneven.err"
expect_rc $? 0 "runrun -np 3 -H ns1:2,ns2:1"
expect_line "$WORK/uneven.out" "^\[1\]<stdout>:PROBE rank=1 size=3 local_rank=1 local_size=2 cross_rank=0 cross_size=1 netns=.* host=ns1 allreduce=ok$"
expect_line "$WORK/uneven.out" "^\[2\]<stdout>:PROBE rank=2 size=3 local_rank=0 local_size=1 cross_rank=1 cross_size=2 netns=.* host=ns2 allreduce=ok$"
for r in 0 1 2; do
  expect_line "$WORK/uneven.out" "^\[$r\]<stdout>:TOPOLOGY rank=$r homogeneous=0$"
done
hosts_empty
no_orphans

"${run[@]}" -np 4 -H ns1:2,ns2:2 "$PROBE" --exit-rank 3 3 --token "$TOKEN" >"$WORK/fail.out" 2>"$WORK/fail.err"
expect_rc $? 3 "a rank on ns2 exiting 3"
expect_line "$WORK/fail.err" "^runrun: rank 3 on host ns2 failed with exit code 3"
hosts_empty
no_orphans

"$RUNRUN" --rsh-agent "$AGENT" --network-interface "$SUBNET" -np 4 -H ns1:2,ns2:2 "$PROBE" --ready-and-wait --token "$TOKEN" >"$WORK/term.out" 2>"$WORK/term.err" &
launcher=$!
wait_for_lines "$WORK/term.out" "PROBE ready" 4 "$launcher"
kill -TERM "$launcher"
timeout 60 tail --pid="$launcher" -f /dev/null || fail "the launcher did not exit after SIGTERM"
wait "$launcher"
expect_rc $? 143 "SIGTERM to the launcher"
hosts_empty
no_orphans
# kill -9 of the launcher: mpirun, the daemons and the rank shims on both hosts stop by
# themselves (hosts_empty and no_orphans bound the wait).
"$RUNRUN" --rsh-agent "$AGENT" --network-interface "$SUBNET" -np 4 -H ns1:2,ns2:2 "$PROBE" --ready-and-wait --token "$TOKEN" >"$WORK/kill9.out" 2>"$WORK/kill9.err" &
launcher=$!
wait_for_lines "$WORK/kill9.out" "PROBE ready" 4 "$launcher"
kill -KILL "$launcher"
wait "$launcher" 2>/dev/null
hosts_empty
no_orphans

# The interpreter of the launcher's shell on every host: a venv first on PATH, /usr/bin later.
python3 -m venv --without-pip "$WORK/venv" >"$WORK/venv.err" 2>&1 || fail "cannot create a venv"
PATH="$WORK/venv/bin:$PATH" "${run[@]}" -np 2 -H ns1:1,ns2:1 python3 -c 'import os, sys; print("PREFIX", os.environ["RUNRUN_RANK"], sys.prefix) # '"$TOKEN" >"$WORK/venv.out" 2>"$WORK/venv.err"
expect_rc $? 0 "python3 from a venv on ns1 and ns2"
for r in 0 1; do
  grep -qxF "[$r]<stdout>:PREFIX $r $WORK/venv" "$WORK/venv.out" ||
    fail "rank $r (host ns$((r + 1))) did not run the venv's python3: $(grep PREFIX "$WORK/venv.out")"
done
hosts_empty
no_orphans

# The job's environment reaches the ranks on the other host as horovodrun's does (each host's
# agent starts from a login environment, as ssh): a variable of the launcher's shell does,
# a secret-looking one and one naming this host do not.
MY_JOB_SETTING="a b" AWS_SECRET_ACCESS_KEY=hidden CUDA_VISIBLE_DEVICES=7 "${run[@]}" \
  -np 2 -H ns1:1,ns2:1 python3 -c 'import os; e = os.environ.get; print("ENV", e("RUNRUN_RANK"), e("MY_JOB_SETTING"), e("AWS_SECRET_ACCESS_KEY"), e("CUDA_VISIBLE_DEVICES")) # '"$TOKEN" >"$WORK/env.out" 2>"$WORK/env.err"
expect_rc $? 0 "forwarding the launcher's environment"
for r in 0 1; do
  grep -qxF "[$r]<stdout>:ENV $r a b None None" "$WORK/env.out" ||
    fail "rank $r (host ns$((r + 1))) got: $(grep ENV "$WORK/env.out")"
done
hosts_empty
no_orphans
echo "PASS"
