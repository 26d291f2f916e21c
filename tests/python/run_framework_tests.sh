#!/usr/bin/env bash
# Why: the TensorFlow and Keras 3 suites (issue 12) run in processes of their own: TensorFlow
# costs seconds to import per rank (kept out of the torch suite's processes), and Keras fixes
# its backend (KERAS_BACKEND) when it is imported, so each backend is one launcher run. The
# TensorFlow suite and the Keras suite on the TensorFlow backend share their processes
# (`tensorflow+keras`): one import of TensorFlow per rank instead of two, and the Keras tests
# then run after a script's worth of other TF functions, as a user's would (the run that found
# tf.cond branch names differing between ranks). To keep CI short every suite runs once on 2
# ranks and once on 4 (issue 12: each Keras adapter at 2 and 4), the controllers alternating
# (mpi, gloo). Each run goes through run_pytest.sh (bounded by its timeout; per-rank logs in
# BUILD_DIR/pytest/<tag><mpi|gloo>-np<N>/).
# Usage: tests/python/run_framework_tests.sh [BUILD_DIR [pytest args...]]
# RUNRUN_FRAMEWORK_SUITES (default "tensorflow+keras keras-torch keras-jax"; also "tensorflow"
# and "keras-tensorflow" alone) chooses.
set -uo pipefail
BUILD_DIR="${1:-build}"
shift || true
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PYTHON="${PYTHON:-python3}"
export TF_CPP_MIN_LOG_LEVEL=3

# suite -> "controller:np ..." runs
declare -A RUNS=(
  [tensorflow+keras]="mpi:2 gloo:4"
  [tensorflow]="mpi:2 gloo:4"
  [keras-tensorflow]="gloo:2 mpi:4"
  [keras-torch]="gloo:2 mpi:4"
  [keras-jax]="mpi:2 gloo:4"
)
status=0
for suite in ${RUNRUN_FRAMEWORK_SUITES:-tensorflow+keras keras-torch keras-jax}; do
  more_dirs=()
  case "$suite" in
    tensorflow+keras) module=tensorflow; dir="$HERE/tensorflow"; backend=""
                      more_dirs=("$HERE/keras") ;;
    tensorflow) module=tensorflow; dir="$HERE/tensorflow"; backend="" ;;
    keras-*) module="${suite#keras-}"; dir="$HERE/keras"; backend="${suite#keras-}" ;;
    *) echo "run_framework_tests: unknown suite $suite"; status=1; continue ;;
  esac
  if ! "$PYTHON" -c "import $module" 2>/dev/null; then
    echo "run_framework_tests: $suite FAILED: $PYTHON cannot import $module" \
         "(scripts/install_deps.sh installs it)"
    status=1; continue
  fi
  for run in ${RUNS[$suite]}; do
    start=$(date +%s)
    KERAS_BACKEND="${backend:-tensorflow}" RUNRUN_PYTEST_DIR="$dir" RUNRUN_PYTEST_TAG="$suite-" \
      RUNRUN_PYTEST_CONTROLLERS="${run%%:*}" RUNRUN_PYTEST_NP="${run##*:}" \
      bash "$HERE/run_pytest.sh" "$BUILD_DIR" "${more_dirs[@]}" -W ignore::DeprecationWarning "$@" ||
      status=1
    echo "run_framework_tests: $suite ${run%%:*} np=${run##*:} took $(( $(date +%s) - start )) s"
  done
done
exit $status
