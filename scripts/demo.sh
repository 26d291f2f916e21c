#!/usr/bin/env bash
# Why: `make demo`: the 4-process example. Runs the C++ allreduce example until the PyTorch
# example lands.
set -euo pipefail
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if command -v runrun >/dev/null 2>&1; then
  exec runrun -np 4 -H localhost:4 runrun_example_allreduce
fi
exec mpirun -np 4 --oversubscribe --bind-to none runrun_example_allreduce
