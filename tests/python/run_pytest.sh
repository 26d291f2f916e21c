#!/usr/bin/env bash
# Why: `make test` runs the Python suite on 2 and on 4 processes, each rank a pytest run under
# the `runrun` launcher of the build, once through mpirun (--mpi) and once with the launcher
# starting the ranks itself over Gloo (--gloo). Fails when any rank of any run fails; `timeout`
# bounds every run so nothing can hang. Per-rank junit XML and logs go to
# BUILD_DIR/pytest/<mpi|gloo>-np<N>/.
# RUNRUN_PYTEST_NP (default "2 4") and RUNRUN_PYTEST_CONTROLLERS (default "mpi gloo") choose;
# RUNRUN_PYTEST_DIR (default: this folder) the tests, RUNRUN_PYTEST_TAG a prefix of the log dirs.
# Usage: tests/python/run_pytest.sh [BUILD_DIR [pytest args...]]
set -uo pipefail
BUILD_DIR="$(cd "${1:-build}" && pwd)"
shift || true  # the rest goes to pytest
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# The real interpreter, not a shim: ranks may start with a different PATH or directory.
PYTHON="$("${PYTHON:-python3}" -c 'import sys; print(sys.executable)')"
PER_RUN_TIMEOUT="${RUNRUN_PYTEST_TIMEOUT:-300}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Ranks outnumber cores here: MPI must yield when idle instead of spinning.
export OMPI_MCA_mpi_yield_when_idle=1
# A collective stuck on a peer becomes an error (named in the log) instead of a hang.
export RUNRUN_COLLECTIVE_TIMEOUT="${RUNRUN_COLLECTIVE_TIMEOUT:-120}"

RUNRUN="$BUILD_DIR/launcher/runrun"
[ -x "$RUNRUN" ] || RUNRUN="$(command -v runrun)" || { echo "run_pytest: no runrun launcher"; exit 1; }

status=0
for controller in ${RUNRUN_PYTEST_CONTROLLERS:-mpi gloo}; do
for np in ${RUNRUN_PYTEST_NP:-2 4}; do
  out="$BUILD_DIR/pytest/${RUNRUN_PYTEST_TAG:-}$controller-np$np"
  rm -rf "$out" && mkdir -p "$out"
  launch=("$RUNRUN" "--$controller" -np "$np" -H "localhost:$np")
  echo "run_pytest: ${launch[*]} ($np ranks, logs in $out)"
  timeout -k 20 "$PER_RUN_TIMEOUT" "${launch[@]}" \
    "$PYTHON" "$HERE/run_rank.py" "$out" "${RUNRUN_PYTEST_DIR:-$HERE}" "$@"
  rc=$?
  for log in "$out"/rank_*.log; do
    [ -f "$log" ] || continue
    if ! grep -q "RUNRUN_RANK_PASSED" "$log"; then
      echo "run_pytest: $controller np=$np: $(basename "$log" .log) failed; its log:"
      tail -n 80 "$log"
      rc=1
    fi
  done
  if [ "$(ls "$out"/rank_*.log 2>/dev/null | wc -l)" -ne "$np" ]; then
    echo "run_pytest: $controller np=$np: expected $np rank logs in $out"; rc=1
  fi
  if [ $rc -ne 0 ]; then
    [ $rc -eq 124 ] && echo "run_pytest: $controller np=$np timed out after ${PER_RUN_TIMEOUT}s"
    status=1
  else
    echo "run_pytest: $controller np=$np passed on every rank ($(grep -h -o '[0-9]* passed[^=]*' "$out/rank_0.log" | tail -1))"
  fi
done
done
exit $status
