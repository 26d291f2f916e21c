#!/usr/bin/env bash
# examples.jax_train_optax: runs examples/jax/train_optax.py under `runrun --gloo` on 2 ranks
# with --check (each rank also trains one process on the global batch and exits 1 when the
# losses or parameters differ), and checks that both ranks said so. The package is this
# checkout's Python sources plus this build's extension, staged in WORK; `timeout` bounds the
# run. Needs jax and optax for PYTHON (scripts/install_deps.sh installs them).
# Usage: jax_train_optax_test.sh RUNRUN PYTHON CORE_MODULE WORK
set -uo pipefail
RUNRUN="$1"; PYTHON="$2"; CORE="$3"; WORK="$4"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$HERE/../../.."
fail() { echo "FAIL: $*"; exit 1; }
source "$ROOT/tests/support/stage_python_package.sh"

"$PYTHON" -c "import jax, optax" || fail "jax and optax are needed (scripts/install_deps.sh)"
stage_python_package "$WORK" "$CORE"
timeout -k 10 150 "$RUNRUN" --gloo -np 2 -H localhost:2 \
  "$PYTHON" "$ROOT/examples/jax/train_optax.py" --steps 5 --check >"$WORK/run.log" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "the example exited $rc; output:
$(cat "$WORK/run.log")"
for r in 0 1; do
  grep -q "rank $r: matches the single-process run" "$WORK/run.log" || fail "rank $r did not match:
$(cat "$WORK/run.log")"
done
grep -q "step 4: loss" "$WORK/run.log" || fail "no training log: $(cat "$WORK/run.log")"
echo "2 ranks match one process on the global batch"
