#!/usr/bin/env bash
# examples.keras_synthetic: runs examples/keras/keras_synthetic.py (the Horovod Keras flow,
# only the import changed) under `runrun --gloo` on 2 ranks on Keras' TensorFlow backend, and
# checks that it trained 2 epochs and ended with identical weights on every rank. The package
# is this checkout's Python sources plus this build's extension, staged in WORK; `timeout`
# bounds the run.
# Usage: keras_synthetic_test.sh RUNRUN PYTHON CORE_MODULE WORK
set -uo pipefail
RUNRUN="$1"; PYTHON="$2"; CORE="$3"; WORK="$4"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$HERE/../../.."
fail() { echo "FAIL: $*"; exit 1; }
source "$ROOT/tests/support/stage_python_package.sh"

"$PYTHON" -c "import tensorflow, keras" 2>/dev/null \
  || fail "$PYTHON cannot import tensorflow and keras (scripts/install_deps.sh installs them)"
stage_python_package "$WORK" "$CORE"
export KERAS_BACKEND=tensorflow TF_CPP_MIN_LOG_LEVEL=3
timeout -k 10 240 "$RUNRUN" --gloo -np 2 -H localhost:2 \
  "$PYTHON" "$ROOT/examples/keras/keras_synthetic.py" --epochs 2 >"$WORK/run.log" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "the example exited $rc; output:
$(cat "$WORK/run.log")"
grep -q "Epoch 2/2" "$WORK/run.log" || fail "no second epoch:
$(cat "$WORK/run.log")"
grep -q "keras_synthetic: backend tensorflow, 2 ranks, .* weights identical on every rank" \
  "$WORK/run.log" || fail "no final check line:
$(cat "$WORK/run.log")"
echo "keras example trained on 2 ranks with identical weights"
