#!/usr/bin/env bash
# KerasState (Keras 3 on TensorFlow, model.fit with the elastic callbacks), JaxState (a jitted
# optax step) and TensorFlowState (a TF custom loop: tf.function, DistributedGradientTape) in a
# 3-rank elastic job (-H localhost:3 --min-np 2): worker 2 kills itself with
# SIGKILL in the middle of training; the survivors (whose failure arrives inside tf.function /
# jax.jit as the framework's error) roll back to their last commit, join generation 2 with 2
# ranks and finish with the state the commit log and a one-process run give (oracle_check); the
# launcher exits 0 and leaves no process behind.
source "$(dirname "$0")/elastic_lib.sh"
TRAIN="$HERE_ELASTIC/elastic_framework_train.py"
export KERAS_BACKEND=tensorflow TF_CPP_MIN_LOG_LEVEL=3 JAX_PLATFORMS=cpu
export ELASTIC_STEPS=10 ELASTIC_KILL_WORKER=2 ELASTIC_KILL_STEP=4
for framework in keras jax tensorflow; do
  module=$([ "$framework" = jax ] && echo optax || echo tensorflow)
  "$PYTHON_BIN" -c "import importlib.util as u, sys; sys.exit(not (u.find_spec('keras') and u.find_spec('$module')))" ||
    { echo "SKIP: no keras/$module for $PYTHON_BIN"; exit 77; }
  export ELASTIC_FRAMEWORK=$framework
  out="$WORK/$framework.out" err="$WORK/$framework.err"
  timeout -k 10 200 "$RUNRUN" -np 3 --min-np 2 -H localhost:3 "$PYTHON_BIN" "$TRAIN" "$TOKEN" \
    >"$out" 2>"$err"
  rc=$?
  [ $rc -eq 0 ] || { tail -40 "$err"; }
  expect_rc $rc 0 "an elastic $framework job that lost a worker"
  expect_line "$err" "^runrun: elastic: generation 1: 3 ranks on localhost:3"
  expect_line "$err" "^runrun: elastic: worker 2 \(rank 2 of generation 1\) on host localhost: signal 9"
  expect_line "$err" "^runrun: elastic: generation 2: 2 ranks on localhost:2"
  expect_line "$out" "commit step=3 size=3"
  expect_line "$out" "commit step=10 size=2"
  expect_line "$out" "final total=[0-9]+ size=2 resets=\[2\]"
  oracle_check "$out"
  no_orphans
  echo "$framework: PASS"
done
echo "PASS"
