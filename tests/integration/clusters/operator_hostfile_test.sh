#!/usr/bin/env bash
# The Kubeflow MPI Operator's hostfile (issue 35, point 4): with neither -H nor --hostfile,
# `runrun` takes the hosts and slots from the file OMPI_MCA_orte_default_hostfile names (as the
# operator sets it in the launcher pod; OMPI_MCA_prte_default_hostfile for Open MPI 5), -np
# defaulting to every slot, and says so in one line. Two network-namespace hosts of 2 slots
# each, reached through a remote-shell agent as the operator's ssh would reach its workers,
# over mpirun and over Gloo: train_check.py checks the size, equal parameters on every rank and
# one process on the global batch; nothing is left running in the hosts.
# Usage: operator_hostfile_test.sh RUNRUN PYTHON CORE_MODULE
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../launcher/lib.sh" "$1" /bin/true
PYTHON="$2"
source "$here/../../support/stage_python_package.sh"
stage_python_package "$WORK/py" "$3"
source "$here/../launcher/netns_hosts.sh"
make_hosts 2
printf '# written by the MPI Operator\nns1 slots=2\nns2 slots=2\n' >"$WORK/hostfile"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Open MPI 5's variable takes the same path: over one controller only.
for variable in OMPI_MCA_orte_default_hostfile OMPI_MCA_prte_default_hostfile; do
  modes=(mpi gloo)
  [ "$variable" = OMPI_MCA_prte_default_hostfile ] && modes=(gloo)
  for mode in "${modes[@]}"; do
    echo "-- $variable, --$mode"
    env "$variable=$WORK/hostfile" "$RUNRUN_BINARY" "--$mode" --rsh-agent "$AGENT" \
      --network-interface "$SUBNET" \
      -x PYTHONPATH "$PYTHON" "$here/train_check.py" 4 --tag "$TOKEN" \
      >"$WORK/$mode.out" 2>"$WORK/$mode.err"
    expect_rc $? 0 "runrun --$mode with $variable"
    [ "$(grep -c 'TRAIN_CHECK OK rank [0-3] of 4 local_rank [01] of 2 cross_rank [01] of 2' \
      "$WORK/$mode.out")" = 4 ] || fail "--$mode: expected 4 ranks checked, 2 on each host"
    expect_line "$WORK/$mode.err" \
      "^runrun: 4 processes on ns1:2,ns2:2, from the hostfile $WORK/hostfile that $variable names$"
    hosts_empty
  done
done
echo "PASS"
