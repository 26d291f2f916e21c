#!/usr/bin/env bash
# runrun on a real Slurm cluster (issue 35, points 1, 2 and 5): Debian's slurm-wlm and munge,
# started and stopped here as root (slurm_cluster.sh). Every training case runs train_check.py,
# which checks the size, equal parameters on every rank and one process on the global batch;
# after each case no rank of this test is left. One node (4 CPUs):
#   salloc -n 2 runrun (Gloo through srun; MPI through mpirun and Slurm), no -np, one line saying
#   what was taken from Slurm; -np above the allocation and -H outside it refused naming both;
#   sbatch --wait of a script that runs runrun; srun -n 4 direct (no launcher, no --mpi); srun
#   --mpi=pmix (MPI, as before); two steps of one allocation at once and two direct jobs at
#   once (each its own rendezvous); scancel mid-run; a task killed mid-run (direct
#   and under the launcher).
# Two nodes (slurmd in two network-namespace hosts): srun -N 2 -n 4 direct; salloc -N 2 runrun
# (Gloo through srun, MPI through mpirun and Slurm).
# `salloc CMD` runs CMD on the submitting host; the launcher is run "on" node 1 (nsenter into
# its namespaces, where node names resolve as on a cluster's login node).
# Usage: slurm_runrun_test.sh RUNRUN PYTHON CORE_MODULE
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../launcher/lib.sh" "$1" /bin/true
RUNRUN="$RUNRUN_BINARY"  # lib.sh's wrapper adds --mpi/--gloo; this test chooses per case
PYTHON="$2"
source "$here/../../support/stage_python_package.sh"
stage_python_package "$WORK/py" "$3"
CHECK="$here/../clusters/train_check.py"
source "$here/slurm_cluster.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export RUNRUN_PEER_TIMEOUT=10  # a killed task becomes an error on the others within seconds

started() {
  [ "$1" = 77 ] && { echo "SKIP: the Slurm cluster cannot start here (see above)"; exit 77; }
  [ "$1" = 0 ] || fail "the Slurm cluster did not start"
}
# trained FILE N: FILE has N 'TRAIN_CHECK OK rank R of N' lines for distinct ranks.
trained() {
  local got
  got="$(grep -o "TRAIN_CHECK OK rank [0-9]* of $2 " "$1" | sort -u | wc -l)"
  [ "$got" = "$2" ] || fail "$1: $got of $2 ranks trained and checked"
}
on_node1() { nsenter -t "${_SLURM_NODE_PIDS[0]}" -n -u -m -- "$@"; }
train=("$PYTHON" "$CHECK")

echo "== one node"
slurm_cluster_start_one_node "$WORK/slurm1" 4
started $?

for mode in gloo mpi; do
  echo "-- salloc -n 2 runrun --$mode (no -np)"
  salloc -n 2 nsenter -t "${_SLURM_NODE_PIDS[0]}" -n -u -m -- \
    "$RUNRUN" "--$mode" "${train[@]}" 2 --tag "$TOKEN" >"$WORK/salloc_$mode.out" 2>"$WORK/salloc_$mode.err"
  expect_rc $? 0 "salloc -n 2 runrun --$mode"
  trained "$WORK/salloc_$mode.out" 2
  expect_line "$WORK/salloc_$mode.err" \
    "^runrun: 2 processes on rrnode1:2, from the Slurm allocation of job [0-9]+ \(SLURM_NODELIST=rrnode1, SLURM_TASKS_PER_NODE=2\)"
  expect_line "$WORK/salloc_$mode.out" "^\[1\]<stdout>:TRAIN_CHECK OK rank 1 of 2"
  no_orphans
done

echo "-- refusals: -np above the allocation, -H outside it"
salloc -n 2 "$RUNRUN" --gloo -np 3 "${train[@]}" 3 >"$WORK/np.out" 2>"$WORK/np.err"
[ $? != 0 ] || fail "-np 3 in an allocation of 2 ran"
expect_line "$WORK/np.err" "-np 3 is more than the 2 slots given by the Slurm allocation of job"
salloc -n 2 "$RUNRUN" --gloo -H rrnode1:1,elsewhere:1 -np 2 "${train[@]}" 2 >"$WORK/h.out" 2>"$WORK/h.err"
[ $? != 0 ] || fail "-H with a host outside the allocation ran"
expect_line "$WORK/h.err" "host 'elsewhere' of -H rrnode1:1,elsewhere:1 is outside the Slurm allocation of job"

echo "-- sbatch --wait: a batch script that runs runrun"
printf '#!/bin/bash\nexec %q --gloo %q %q 4 --tag %q\n' "$RUNRUN" "${train[@]}" "$TOKEN" >"$WORK/job.sh"
slurm_sbatch_wait -n 4 -o "$WORK/sbatch.out" -e "$WORK/sbatch.err" "$WORK/job.sh" >/dev/null
expect_rc $? 0 "sbatch --wait"
trained "$WORK/sbatch.out" 4
no_orphans

echo "-- srun -n 4 direct, and two direct jobs at once"
srun -n 4 "${train[@]}" 4 --tag "$TOKEN" >"$WORK/direct.out" 2>"$WORK/direct.err"
expect_rc $? 0 "srun -n 4 direct"
trained "$WORK/direct.out" 4
srun -n 2 "${train[@]}" 2 --tag "$TOKEN" >"$WORK/twin1.out" 2>"$WORK/twin1.err" &
twin=$!
srun -n 2 "${train[@]}" 2 --tag "$TOKEN" >"$WORK/twin2.out" 2>"$WORK/twin2.err"
expect_rc $? 0 "the second of two concurrent steps"
wait $twin
expect_rc $? 0 "the first of two concurrent steps"
trained "$WORK/twin1.out" 2
trained "$WORK/twin2.out" 2
no_orphans
echo "-- two direct steps of one job at once"
printf '#!/bin/bash\nsrun -n 2 %q %q 2 --tag %q >%q 2>&1 &\nsrun -n 2 %q %q 2 --tag %q >%q 2>&1\nfirst=$?\nwait $!\nsecond=$?\nexit $((first + second))\n' \
  "${train[@]}" "$TOKEN" "$WORK/step1.out" "${train[@]}" "$TOKEN" "$WORK/step2.out" \
  >"$WORK/two_steps.sh"
RUNRUN_LOG_LEVEL=info salloc -n 4 bash "$WORK/two_steps.sh" >"$WORK/two_steps.out" 2>&1
expect_rc $? 0 "two steps of one allocation at once"
trained "$WORK/step1.out" 2
trained "$WORK/step2.out" 2
# The same job, two steps: each step's rendezvous is its own (job and step id in the identity).
steps="$(grep -ho 'without an MPI plugin: job [0-9]*\.[0-9]*' "$WORK"/step[12].out | sort -u)"
[ "$(echo "$steps" | wc -l)" = 2 ] && [ "$(echo "$steps" | sed 's/\..*//' | sort -u | wc -l)" = 1 ] ||
  fail "expected two steps of one job, got: $steps"
no_orphans

echo "-- srun --mpi=pmix direct: MPI forms the job, as before"
RUNRUN_LOG_LEVEL=info srun --mpi=pmix -n 2 "${train[@]}" 2 --tag "$TOKEN" \
  >"$WORK/pmix.out" 2>"$WORK/pmix.err"
expect_rc $? 0 "srun --mpi=pmix -n 2"
trained "$WORK/pmix.out" 2
expect_line "$WORK/pmix.err" "runrun started: backend mpi, rank 1/2"
expect_line "$WORK/pmix.err" "started by a Slurm step with an MPI plugin \(SLURM_MPI_TYPE=pmix"
no_orphans

echo "-- scancel mid-run (runrun in a batch job)"
printf '#!/bin/bash\nexec %q --gloo %q %q 2 --steps 100000 --sleep 0.05 --tag %q\n' \
  "$RUNRUN" "${train[@]}" "$TOKEN" >"$WORK/long.sh"
: >"$WORK/long.out"
job="$(sbatch --parsable -n 2 -o "$WORK/long.out" -e "$WORK/long.err" "$WORK/long.sh")" ||
  fail "sbatch of the long job"
wait_for_lines "$WORK/long.out" "TRAIN_CHECK STARTED" 2
scancel "$job"
for i in $(seq 1 300); do
  squeue -h -j "$job" 2>/dev/null | grep -q . || break
  sleep 0.1
done
squeue -h -j "$job" 2>/dev/null | grep -q . && fail "job $job still listed 30 s after scancel"
no_orphans

echo "-- a killed task: srun direct, then under the launcher"
srun -n 2 --kill-on-bad-exit=0 "${train[@]}" 2 --steps 100000 --sleep 0.05 --tag "$TOKEN" \
  >"$WORK/kill_direct.out" 2>"$WORK/kill_direct.err" &
step=$!
: >"$WORK/kill_direct.out"
wait_for_lines "$WORK/kill_direct.out" "TRAIN_CHECK STARTED" 2 $step
victim="$(sed -n 's/.*STARTED rank 1 of 2 pid \([0-9]*\).*/\1/p' "$WORK/kill_direct.out")"
kill -9 "$victim"
wait $step
[ $? != 0 ] || fail "srun direct with a killed task exited 0"
expect_line "$WORK/kill_direct.err" "rank 1"
sed 's/^/    /' "$WORK/kill_direct.err"
no_orphans

salloc -n 2 nsenter -t "${_SLURM_NODE_PIDS[0]}" -n -u -m -- "$RUNRUN" --gloo "${train[@]}" 2 \
  --steps 100000 --sleep 0.05 --tag "$TOKEN" >"$WORK/kill_launcher.out" 2>"$WORK/kill_launcher.err" &
alloc=$!
wait_for_lines "$WORK/kill_launcher.out" "TRAIN_CHECK STARTED" 2 $alloc
victim="$(sed -n 's/.*STARTED rank 1 of 2 pid \([0-9]*\).*/\1/p' "$WORK/kill_launcher.out")"
kill -9 "$victim"
wait $alloc
[ $? != 0 ] || fail "runrun in an allocation with a killed task exited 0"
expect_line "$WORK/kill_launcher.err" "rank 1 .*(killed|signal|SIGKILL)"
sed 's/^/    /' "$WORK/kill_launcher.err"
no_orphans
slurm_cluster_stop || fail "the one-node cluster left something running"

echo "== two nodes"
slurm_cluster_start_two_nodes "$WORK/slurm2" 2
started $?
echo "-- srun -N 2 -n 4 direct"
srun -N 2 -n 4 "${train[@]}" 4 --tag "$TOKEN" >"$WORK/two_direct.out" 2>"$WORK/two_direct.err"
expect_rc $? 0 "srun -N 2 -n 4 direct"
trained "$WORK/two_direct.out" 4
[ "$(grep -c 'local_rank [01] of 2 cross_rank [01] of 2' "$WORK/two_direct.out")" = 4 ] ||
  fail "srun -N 2 -n 4: the ranks do not see 2 hosts of 2"
no_orphans
for mode in gloo mpi; do
  echo "-- salloc -N 2 -n 4 runrun --$mode"
  salloc -N 2 -n 4 nsenter -t "${_SLURM_NODE_PIDS[0]}" -n -u -m -- "$RUNRUN" "--$mode" \
    "${train[@]}" 4 --tag "$TOKEN" >"$WORK/two_salloc_$mode.out" 2>"$WORK/two_salloc_$mode.err"
  expect_rc $? 0 "salloc -N 2 -n 4 runrun --$mode"
  trained "$WORK/two_salloc_$mode.out" 4
  expect_line "$WORK/two_salloc_$mode.err" \
    "^runrun: 4 processes on rrnode1:2,rrnode2:2, from the Slurm allocation"
  [ "$(grep -c 'cross_rank [01] of 2' "$WORK/two_salloc_$mode.out")" = 4 ] ||
    fail "salloc -N 2 runrun --$mode: the ranks do not see 2 hosts"
  no_orphans
done
slurm_cluster_stop || fail "the two-node cluster left something running"
echo "PASS"
