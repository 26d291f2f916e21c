#!/usr/bin/env bash
# A network partition under --mpi (issue 36, point 5): two network-namespace hosts of two ranks
# each allreduce in a loop under mpirun, whose daemons (orted) are started through a remote
# shell that connects over TCP across each host's link, as ssh does (tcp_remote_shell.py); then
# ns2's link is cut. Every rank and daemon on both sides must end while the link is still cut
# (bounded by RUNRUN_PEER_TIMEOUT plus margins), the launcher's summary must name the lost link,
# mpirun's own crash while shutting down (if any) must not reach the terminal, and the job
# must fail. With RUNRUN_TEST_CHATTER=1 every rank prints after each allreduce, so the daemons'
# connections hold unacknowledged output when the link is cut: TCP keepalive never probes such
# a connection, and only the reaper a failed rank's shim leaves
# (launcher/processes/daemon_reaper.h) ends
# ns2's daemon in time. Usage: partition_mpi_netns.sh RUNRUN TOPOLOGY_PROBE
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/netns_hosts.sh"
mpi_mode || { echo "SKIP: --gloo's partition is partition_netns.sh"; exit 77; }
make_hosts 2
serve_tcp_shells
export RUNRUN_PEER_TIMEOUT=3
ns2_link="rr$(( $$ % 100000 ))h2"  # the bridge's end of ns2's veth (netns_hosts.sh)
CLEANUPS+=("ip link set $ns2_link up 2>/dev/null")

# job_processes NS: the job's processes (Open MPI's daemon, the shims and the probes) in NS.
job_processes() {
  local pid
  for pid in $(ip netns pids "$1"); do
    case "$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" in
      *orted* | *"$TOKEN"*) echo "$pid $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" ;;
    esac
  done
}

chatter=()
[ "${RUNRUN_TEST_CHATTER:-0}" = 1 ] && chatter=(--chatter)
timeout 100 "$RUNRUN" --rsh-agent "$TCP_AGENT" --network-interface "$SUBNET" -np 4 \
  -H ns1:2,ns2:2 "$PROBE" --allreduce-loop "${chatter[@]}" --token "$TOKEN" \
  >"$WORK/cut.out" 2>"$WORK/cut.err" &
launcher=$!
wait_for_lines "$WORK/cut.out" "PROBE looping" 4 "$launcher"
[ -n "$(job_processes "${HOST_NAMESPACES[1]}" | grep orted)" ] || fail "no orted runs in ns2"
cut_at=$(date +%s.%N)
ip link set "$ns2_link" down || fail "cannot take ns2's link down"
wait "$launcher"
rc=$?
[ "${#chatter[@]}" = 0 ] || echo "partition: the ranks printed $(grep -c "PROBE chatter" "$WORK/cut.out") lines"
echo "partition: the launcher ended $(echo "$(date +%s.%N) - $cut_at" | bc) s after the cut (rc $rc)"
[ "$rc" = 0 ] && fail "the job succeeded across a cut link"
[ "$rc" = 124 ] && fail "the launcher did not end within 100 s of the cut"
# Both sides are left to end by themselves while the link stays cut (at most 20 s more: this
# bounds the wait, it does not time anything).
for ns in "${HOST_NAMESPACES[@]}"; do
  for i in $(seq 1 200); do
    [ -z "$(job_processes "$ns")" ] && break
    sleep 0.1
  done
  left="$(job_processes "$ns")"
  [ -z "$left" ] ||
    fail "processes of the job are left in $ns $(echo "$(date +%s.%N) - $cut_at" | bc) s after the cut: $left"
done
echo "partition: nothing of the job runs on either side $(echo "$(date +%s.%N) - $cut_at" | bc) s after the cut"
# Who noticed first (mpirun's keepalive on its daemon's connection, or the ranks' peer monitors)
grep "^runrun:" "$WORK/cut.err"
# decides which of the two accounts the summary gives; both name the cut link, no rank.
expect_line "$WORK/cut.err" "^runrun: the network link (between host ns1 \(ranks 0-1\) and host ns2 \(ranks 2-3\)|to host ns2 \(ranks 2-3\)) was lost"
grep -E "PMIx_Finalize|\*\*\* Process received signal|^\[[^]]*:[0-9]+\] " "$WORK/cut.err" &&
  fail "mpirun's crash report reached the terminal"
if grep -q "^runrun: mpirun crashed" "$WORK/cut.err"; then
  report="$(sed -n 's/.* Its report is in \(.*\)$/\1/p' "$WORK/cut.err")"
  grep -q "Process received signal" "$report" || fail "mpirun's crash report is not in '$report'"
  rm -f "$report"
fi
grep -E "^runrun: rank [0-9]+ on host ns[12] failed|failing because of" "$WORK/cut.err" &&
  fail "a rank was blamed for the partition"
ip link set "$ns2_link" up || fail "cannot bring ns2's link up again"
no_orphans
echo "PASS"
