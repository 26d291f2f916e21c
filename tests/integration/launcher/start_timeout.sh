#!/usr/bin/env bash
# --start-timeout: a host whose remote shell never starts mpirun's daemon. The launcher stops
# the job once the timeout passed, names the ranks that did not start and their hosts, exits 1
# and leaves nothing behind (not even the stuck remote-shell client).
source "$(dirname "$0")/lib.sh"
cat >"$WORK/stuck_agent.sh" <<AGENT
#!/bin/sh
# Answers the reachability check, then never starts anything.
shift
[ "\$*" = "true" ] && exit 0
exec sh -c "sleep 100; : $TOKEN"
AGENT
chmod +x "$WORK/stuck_agent.sh"
# (--network-interface: with --gloo the ranks must reach the launcher, and "stuckhost" has no
# address to find a route by.)
timeout 60 "$RUNRUN" -np 2 -H localhost:1,stuckhost:1 --rsh-agent "$WORK/stuck_agent.sh" \
  --network-interface 127.0.0.0/8 --start-timeout 2 sh -c "sleep 100; : $TOKEN" \
  >"$WORK/stuck.out" 2>"$WORK/stuck.err"
expect_rc $? 1 "a host that never starts"
if mpi_mode; then  # mpirun starts no rank before every host's daemon is up
  expect_line "$WORK/stuck.err" "^runrun: only 0 of 2 ranks started within --start-timeout 2 s; not started: 0 \(localhost\), 1 \(stuckhost\)"
else
  expect_line "$WORK/stuck.err" "^runrun: only 1 of 2 ranks started within --start-timeout 2 s; not started: 1 \(stuckhost\)"
fi
no_orphans
echo "PASS"
