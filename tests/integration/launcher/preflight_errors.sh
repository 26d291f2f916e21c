#!/usr/bin/env bash
# Every preflight error exits 2 with a message saying what is wrong, before anything starts
# (the command would create a file; it must not exist afterwards).
source "$(dirname "$0")/lib.sh"
started="$WORK/started"
cmd=(/usr/bin/touch "$started")
n=0
# check_error EXPECTED_MESSAGE_REGEX RUNRUN_ARGS...
check_error() {
  local regex="$1"
  shift
  n=$((n + 1))
  timeout 60 "$@" >"$WORK/case$n.out" 2>"$WORK/case$n.err"
  local rc=$?
  [ "$rc" = 2 ] || fail "case $n ($*): exit status $rc, expected 2"
  grep -Eq -- "$regex" "$WORK/case$n.err" || fail "case $n ($*): no message matching $regex"
  [ -e "$started" ] && fail "case $n ($*): the command ran"
  return 0
}
printf 'good slots=1\nbad slots=many\n' >"$WORK/hostfile"
cat >"$WORK/deny_agent.sh" <<'AGENT'
#!/bin/sh
echo "ssh: connect to host $1 port 22: Connection refused" >&2
exit 255
AGENT
chmod +x "$WORK/deny_agent.sh"

check_error "^runrun: error: no -np given \(or -np 0\): give the number of processes" \
  "$RUNRUN" -np 0 "${cmd[@]}"
check_error "^runrun: error: no -np given \(or -np 0\)" "$RUNRUN" "${cmd[@]}"
check_error "-np 5 is more than the 4 slots given by -H localhost:4" "$RUNRUN" -np 5 -H localhost:4 "${cmd[@]}"
check_error "entry 'a:2:3' .* is malformed: more than one ':'" "$RUNRUN" -np 2 -H a:2:3 "${cmd[@]}"
check_error "hostfile .*hostfile line 2 'bad slots=many' is malformed" "$RUNRUN" -np 2 --hostfile "$WORK/hostfile" "${cmd[@]}"
check_error "no command given" "$RUNRUN" -np 2
check_error "mpirun was not found on PATH .*openmpi-bin" env PATH=/nonexistent "$RUNRUN" -np 1 "${cmd[@]}"
mkdir -p "$WORK/fakebin"
printf '#!/bin/sh\necho "HYDRA build details: Version: 4.0"\n' >"$WORK/fakebin/mpirun"
chmod +x "$WORK/fakebin/mpirun"
check_error "fakebin/mpirun is not Open MPI's mpirun .*HYDRA" env PATH="$WORK/fakebin:$PATH" "$RUNRUN" -np 1 "${cmd[@]}"
check_error "host 'far-host': ssh: connect to host far-host port 22: Connection refused" "$RUNRUN" -np 2 -H localhost:1,far-host:1 --rsh-agent "$WORK/deny_agent.sh" "${cmd[@]}"
check_error "host 'nohost.invalid': .*nohost.invalid" "$RUNRUN" -np 1 -H nohost.invalid:1 "${cmd[@]}"
check_error "host 'a' is listed twice" "$RUNRUN" -np 2 -H a:1,a:1 "${cmd[@]}"
check_error "'localhost' and '127.0.0.1' are both this machine" "$RUNRUN" -np 2 -H localhost:1,127.0.0.1:1 "${cmd[@]}"
check_error "--gloo and --mpi both given" "$RUNRUN_BINARY" --gloo --mpi -np 1 "${cmd[@]}"
check_error "--mpi-args passes arguments to mpirun, which --gloo does not run" "$RUNRUN_BINARY" --gloo --mpi-args "-v" -np 1 "${cmd[@]}"
check_error "--network-interface 'nosuchif0' is not an interface" "$RUNRUN" -np 1 --network-interface nosuchif0 "${cmd[@]}"
check_error "-x UNSET_VAR_$$: UNSET_VAR_$$ is not set" "$RUNRUN" -np 1 -x "UNSET_VAR_$$" "${cmd[@]}"
check_error "command 'no-such-program-$$' was not found on PATH \(.*\): check the spelling" "$RUNRUN" -np 2 "no-such-program-$$"
check_error "command '$WORK/missing' does not exist" "$RUNRUN" -np 2 "$WORK/missing"
check_error "command '$WORK' is a directory" "$RUNRUN" -np 2 "$WORK"
printf 'echo hi\n' >"$WORK/not_executable.sh"
check_error "command '$WORK/not_executable.sh' is not an executable file: .*chmod \+x" "$RUNRUN" -np 2 "$WORK/not_executable.sh"
# Found on the PATH the ranks get (-x PATH=...), not only the launcher's.
check_error "command 'touch' was not found on PATH \($WORK\)" "$RUNRUN" -np 1 -x PATH="$WORK" touch "$started"
# An unknown single-dash word is an error naming it, never the help text with exit 0 (CLI11
# would read -hostfilex as -h plus a cluster); horovodrun's -hostfile itself is accepted.
check_error "^runrun: error: unknown option '-hostfilex'" "$RUNRUN" -np 1 -hostfilex "$WORK/hostfile" "${cmd[@]}"
check_error "^runrun: error: unknown option '-hx'" "$RUNRUN" -np 1 -hx "${cmd[@]}"
check_error "^runrun: error: unknown option '-verbose'" "$RUNRUN" -verbose -np 1 "${cmd[@]}"
# (-hostfile reaches the hostfile check: its line 2 is the malformed one above.)
check_error "hostfile .*hostfile line 2 'bad slots=many' is malformed" "$RUNRUN" -np 2 -hostfile "$WORK/hostfile" "${cmd[@]}"
echo "PASS ($n preflight errors)"
