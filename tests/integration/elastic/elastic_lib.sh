# Shared setup of the elastic end-to-end tests. Usage: source elastic_lib.sh RUNRUN PYTHON_CORE
# (the launcher and the built extension runrun._core). On top of the launcher tests' lib.sh
# (scratch directory, token, no_orphans...): a runrun package of this checkout with the built
# extension in $WORK/py, the training script $TRAIN, and `oracle_check OUT` that compares rank
# 0's final line with what its commit log and a one-process run give.
HERE_ELASTIC="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export RUNRUN_TEST_CONTROLLER=gloo
source "$HERE_ELASTIC/../launcher/lib.sh" "$1" "$2"
# Most of these tests kill a worker of a host that keeps others (often the only host, this one)
# and check how the job goes on with its survivors there: they run with --keep-failed-hosts.
# The default, Horovod's (the failed worker's host leaves the job until its cooldown ends), is
# checked across namespace hosts in elastic_netns.sh, where $RUNRUN_DEFAULT runs without it.
RUNRUN_DEFAULT="$RUNRUN"
RUNRUN="$WORK/runrun-elastic"
printf '#!/bin/sh
case " $* " in *" --min-np "*|*" --max-np "*|*" --host-discovery-script "*)
  exec %q --keep-failed-hosts "$@" ;;
esac
exec %q "$@"
' \
  "$RUNRUN_DEFAULT" "$RUNRUN_DEFAULT" >"$RUNRUN"
chmod +x "$RUNRUN"
PYTHON_BIN="$("${PYTHON:-python3}" -c 'import sys; print(sys.executable)')"
"$PYTHON_BIN" -c 'import torch' 2>/dev/null || { echo "SKIP: no torch for $PYTHON_BIN"; exit 77; }
mkdir -p "$WORK/py"
cp -r "$HERE_ELASTIC/../../../frameworks/python/runrun" "$WORK/py/"
cp "$2" "$WORK/py/runrun/"
export PYTHONPATH="$WORK/py"
TRAIN="$HERE_ELASTIC/elastic_train.py"
export ELASTIC_STEP_SLEEP="${ELASTIC_STEP_SLEEP:-0.05}"

# oracle_check OUT: the job's final total equals the sum of the sizes of the committed steps
# (the last commit line of each step wins: a step redone after a rollback is committed again),
# and the final weights equal STEPS plain steps in one process.
oracle_check() {
  local out="$1" expected weights oracle
  expected="$(grep -Eo 'commit step=[0-9]+ size=[0-9]+' "$out" |
    awk '{split($2,a,"="); split($3,b,"="); size[a[2]]=b[2]} END {t=0; for (s in size) t+=size[s]; print t}')"
  expect_line "$out" "final total=$expected size="
  weights="$(grep -Eo 'final weights .*' "$out" | sed 's/final weights //')"
  oracle="$("$PYTHON_BIN" "$TRAIN" --oracle)"
  [ "$weights" = "$oracle" ] || fail "final weights '$weights' differ from the oracle '$oracle'"
}
