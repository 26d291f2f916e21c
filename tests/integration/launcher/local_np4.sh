#!/usr/bin/env bash
# runrun -np 4 -H localhost:4 (more ranks than this machine's cores on small machines): ranks,
# local ranks, the allreduce, and OMPI_MCA_mpi_yield_when_idle=1 exactly when ranks > cores.
source "$(dirname "$0")/lib.sh"
timeout 110 "$RUNRUN" -np 4 -H localhost:4 "$PROBE" --token "$TOKEN" >"$WORK/probe.out" 2>"$WORK/probe.err"
expect_rc $? 0 "runrun -np 4 probe"
for r in 0 1 2 3; do
  expect_line "$WORK/probe.out" "^\[$r\]<stdout>:PROBE rank=$r size=4 local_rank=$r local_size=4 cross_rank=0 cross_size=1 .* allreduce=ok$"
done
mpi_mode || { no_orphans; echo "PASS"; exit 0; }  # the rest is about Open MPI's ranks
cores=$(nproc)
expected=""
[ 4 -gt "$cores" ] && expected=1
timeout 60 env -u OMPI_MCA_mpi_yield_when_idle "$RUNRUN" -np 4 sh -c 'echo "yield=$OMPI_MCA_mpi_yield_when_idle"' >"$WORK/yield.out" 2>"$WORK/yield.err"
expect_rc $? 0 "runrun -np 4 sh"
[ "$(grep -c "<stdout>:yield=$expected\$" "$WORK/yield.out")" = 4 ] ||
  fail "OMPI_MCA_mpi_yield_when_idle should be '$expected' on every rank with $cores cores"
no_orphans
echo "PASS"
