#!/usr/bin/env bash
# launcher.python_run: Horovod's horovod.run from Python (runrun.run): a function, its args and
# kwargs, run on 2 ranks over the default controller and over gloo, returns each rank's result
# in rank order (a lambda too: cloudpickle), the ranks' output passes through, and a rank that
# raises makes runrun.run raise RuntimeError. The package is this checkout's sources plus this
# build's extension, staged in WORK; `timeout` bounds the run.
# Usage: python_run_test.sh RUNRUN PYTHON CORE_MODULE WORK
set -uo pipefail
RUNRUN="$1"; PYTHON="$2"; CORE="$3"; WORK="$4"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$HERE/../../.."
fail() { echo "FAIL: $*"; exit 1; }
source "$ROOT/tests/support/stage_python_package.sh"
stage_python_package "$WORK" "$CORE"
export RUNRUN_LAUNCHER="$RUNRUN" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cat >"$WORK/use_run.py" <<'PY'
import runrun


def work(scale, offset=0):
    runrun.init()
    print("ran on rank", runrun.rank(), flush=True)
    return {"rank": runrun.rank(), "size": runrun.size(), "value": scale * runrun.rank() + offset}


def fail_on_rank_1():
    runrun.init()
    if runrun.rank() == 1:
        raise ValueError("rank 1 fails on purpose")
    return runrun.rank()


expected = [{"rank": r, "size": 2, "value": 10 * r + 1} for r in range(2)]
assert runrun.run(work, args=(10,), kwargs={"offset": 1}, num_proc=2) == expected
assert runrun.run(work, args=(10,), kwargs={"offset": 1}, num_proc=2, use_gloo=True) == expected
marker = object()
assert runrun.run(lambda: marker is not None, num_proc=2, use_gloo=True) == [True, True]
try:
    runrun.run(fail_on_rank_1, num_proc=2, use_gloo=True)
except RuntimeError as e:
    assert "the launcher exited with status 1" in str(e), e
else:
    raise AssertionError("a failing rank did not fail runrun.run")
print("PYTHON_RUN_OK", flush=True)
PY
timeout -k 10 150 "$PYTHON" "$WORK/use_run.py" >"$WORK/run.log" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "use_run.py exited $rc; output:
$(cat "$WORK/run.log")"
grep -q "PYTHON_RUN_OK" "$WORK/run.log" || fail "no final line: $(cat "$WORK/run.log")"
grep -q "^\[1\]<stdout>:ran on rank 1$" "$WORK/run.log" || fail "the ranks' output did not pass through:
$(cat "$WORK/run.log")"
grep -q "rank 1 fails on purpose" "$WORK/run.log" || fail "the failing rank's traceback is missing"
grep -q "@@runrun-run-result@@" "$WORK/run.log" && fail "a result line was printed"
echo "runrun.run returned every rank's result"
