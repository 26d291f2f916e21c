#!/usr/bin/env bash
# Every rank runs the interpreter of the shell that ran runrun: in a virtualenv (first on PATH,
# with Debian's /usr/bin/python3 later on PATH), `python3`, `python` and a script with a
# `#!/usr/bin/env python3` line each run the venv's Python on every rank. (An mpirun started by
# absolute path used to put /usr/bin first on the ranks' PATH.) Also: exactly the launcher's
# PATH reaches the ranks, even with an explicit --prefix for mpirun.
source "$(dirname "$0")/lib.sh"
python3 -m venv --without-pip "$WORK/venv" >"$WORK/venv.err" 2>&1 || fail "cannot create a venv"
venv_python="$("$WORK/venv/bin/python3" -c 'import sys; print(sys.prefix)')"
system_python="$(/usr/bin/python3 -c 'import sys; print(sys.prefix)' 2>/dev/null)"
[ "$venv_python" != "$system_python" ] || fail "the venv's python3 is the system one"
export PATH="$WORK/venv/bin:$PATH" VIRTUAL_ENV="$WORK/venv"
show='import os, sys; print("PREFIX", os.environ["RUNRUN_RANK"], sys.prefix)'
printf '#!/usr/bin/env python3\n%s\n' "$show" >"$WORK/script.py"
chmod +x "$WORK/script.py"
n=0
# check_interpreter RUNRUN_ARGS...: both ranks print the venv's sys.prefix.
check_interpreter() {
  n=$((n + 1))
  timeout 60 "$RUNRUN" -np 2 "$@" >"$WORK/case$n.out" 2>"$WORK/case$n.err"
  expect_rc $? 0 "case $n (runrun -np 2 $*)"
  for r in 0 1; do
    grep -qxF "[$r]<stdout>:PREFIX $r $WORK/venv" "$WORK/case$n.out" ||
      fail "case $n (runrun -np 2 $*): rank $r did not run the venv's python ($(grep PREFIX "$WORK/case$n.out"))"
  done
}
check_interpreter python3 -c "$show"
check_interpreter python -c "$show"
check_interpreter "$WORK/script.py"
mpi_mode && check_interpreter --mpi-args "--prefix /usr" python3 -c "$show"

timeout 60 "$RUNRUN" -np 2 sh -c 'echo "RANKPATH $PATH"; env | grep -c "^RUNRUN_RANK_PATH=" || true' \
  >"$WORK/path.out" 2>"$WORK/path.err"
expect_rc $? 0 "printing the ranks' PATH"
for r in 0 1; do
  grep -qxF "[$r]<stdout>:RANKPATH $PATH" "$WORK/path.out" ||
    fail "rank $r's PATH is not the launcher's: $(grep "^\[$r\]<stdout>:RANKPATH" "$WORK/path.out")"
  grep -qxF "[$r]<stdout>:0" "$WORK/path.out" || fail "rank $r's command sees RUNRUN_RANK_PATH"
done
echo "PASS"
