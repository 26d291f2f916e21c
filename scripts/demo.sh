#!/usr/bin/env bash
# Why: `make demo`: the 4-process example: the PyTorch MNIST example (examples/pytorch), whose
# loss falls epoch by epoch, on 4 ranks under the launcher (mpirun until it is installed).
set -euo pipefail
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
PYTHON="$("${PYTHON:-python3}" -c 'import sys; print(sys.executable)')"
EXAMPLE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/examples/pytorch/train_mnist.py"
if command -v runrun >/dev/null 2>&1; then
  exec runrun -np 4 -H localhost:4 "$PYTHON" "$EXAMPLE"
fi
export OMPI_MCA_mpi_yield_when_idle=1
exec mpirun -np 4 --oversubscribe --bind-to none "$PYTHON" "$EXAMPLE"
