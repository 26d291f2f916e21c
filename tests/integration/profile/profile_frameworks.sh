#!/usr/bin/env bash
# runrun --profile with no script change beyond the framework's DistributedOptimizer
# (docs/profiling.md), 2 ranks each, check_steps.py on rank 0's JSON lines (one record per step,
# the gradients' bytes, sane times):
# 1. Keras model.fit on the TensorFlow backend (the hooks run inside the compiled train step:
#    the allreduce's py_function and graph ops after the update writing a tf.Variable ring);
# 2. a JAX/optax loop, jitted (native XLA FFI markers, records built by the drain thread) and
#    eager.
# The Keras backends JAX and torch are covered in the Keras pytest suite (test_keras.py,
# test_profile_*). About 30 s on an idle 2-core machine (TensorFlow's import is most of it).
# Usage: profile_frameworks.sh RUNRUN PYTHON CORE_MODULE WORK
set -uo pipefail
RUNRUN="$1"; PYTHON="$2"; CORE="$3"; WORK="$4"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
fail() { echo "FAIL: $*"; exit 1; }
source "$HERE/../../support/stage_python_package.sh"
stage_python_package "$WORK" "$CORE"
export TF_CPP_MIN_LOG_LEVEL=3
run=(timeout -k 10 150 "$RUNRUN" --gloo -np 2 --profile)

# check NAME STEPS LOG JSON: the job trained, and its records are as expected.
check() {
  local bytes
  bytes="$(sed -n 's/^\[0\]<stdout>:TRAINED rank=0 grad_bytes=\([0-9]*\)$/\1/p' "$3")"
  [ -n "$bytes" ] || fail "$1: rank 0 did not train: $(cat "$3")"
  grep -q "^\[0\]<stderr>:runrun profile (final): $2 steps, 2 ranks" "$3" ||
    fail "$1: no final table of $2 steps: $(cat "$3")"
  "$PYTHON" "$HERE/check_steps.py" "$4" "$2" "$bytes" || fail "$1: the step records are wrong"
}

if "$PYTHON" -c "import keras, tensorflow" 2>/dev/null; then
  KERAS_BACKEND=tensorflow "${run[@]}" --profile-output "$WORK/keras.jsonl" \
    "$PYTHON" "$HERE/keras_fit.py" --steps 12 >"$WORK/keras.log" 2>&1 ||
    fail "Keras (TensorFlow backend) job: exit $?: $(cat "$WORK/keras.log")"
  check "Keras (TensorFlow backend)" 12 "$WORK/keras.log" "$WORK/keras.jsonl"
else
  fail "$PYTHON cannot import keras and tensorflow (scripts/install_deps.sh installs them)"
fi

"$PYTHON" -c "import jax, optax" 2>/dev/null ||
  fail "$PYTHON cannot import jax and optax (scripts/install_deps.sh installs them)"
for mode in jit eager; do
  flag=(); [ "$mode" = eager ] && flag=(--eager)
  "${run[@]}" --profile-output "$WORK/jax-$mode.jsonl" \
    "$PYTHON" "$HERE/jax_loop.py" --steps 12 "${flag[@]}" >"$WORK/jax-$mode.log" 2>&1 ||
    fail "JAX/optax ($mode) job: exit $?: $(cat "$WORK/jax-$mode.log")"
  check "JAX/optax ($mode)" 12 "$WORK/jax-$mode.log" "$WORK/jax-$mode.jsonl"
done
echo "PASS"
