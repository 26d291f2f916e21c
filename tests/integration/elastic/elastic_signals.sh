#!/usr/bin/env bash
# Stopping the launcher of an elastic job while it trains and while a discovery-script run is in
# progress (the script's second run hangs): Ctrl-C (SIGINT) and SIGTERM stop every worker and the
# launcher exits 128+N; kill -9 of the launcher stops them too (each worker's lifeline closes,
# the discovery run gets SIGTERM). In every case no process of the job is left: worker, shim,
# Python rank or discovery script.
source "$(dirname "$0")/elastic_lib.sh"
script="$WORK/discover-$TOKEN.sh"  # the token in its path: no_orphans sees a run left behind
cat >"$script" <<SCRIPT
#!/bin/sh
n=\$(cat "$WORK/count" 2>/dev/null || echo 0)
echo \$((n + 1)) >"$WORK/count"
[ "\$n" -ge 1 ] && while :; do sleep 1; done
echo localhost:3
SCRIPT
chmod +x "$script"
for sig in INT TERM KILL; do
  rm -f "$WORK/count"
  ELASTIC_STEPS=100000 "$RUNRUN" -np 3 --min-np 2 --host-discovery-script "$script" \
    "$PYTHON_BIN" "$TRAIN" "$TOKEN" >"$WORK/$sig.out" 2>"$WORK/$sig.err" &
  launcher=$!
  wait_for_lines "$WORK/$sig.out" "commit step=5 size=3" 1
  wait_for_lines "$WORK/count" "^[2-9]" 1  # a discovery run in progress (hanging)
  kill -"$sig" "$launcher"
  # Bounded, and nothing left behind once the launcher is gone (a `( sleep 60; kill ) &`
  # watchdog's sleep kept ctest's output pipe open for its whole 60 s after every case).
  timeout 60 tail --pid="$launcher" -f /dev/null ||
    { kill -KILL "$launcher"; fail "the launcher did not exit within 60 s of SIG$sig"; }
  wait "$launcher"
  rc=$?
  case "$sig" in
    INT) expect_rc "$rc" 130 "the launcher stopped by SIGINT"
         expect_line "$WORK/$sig.err" "^runrun: stopped by Interrupt; every rank was stopped" ;;
    TERM) expect_rc "$rc" 143 "the launcher stopped by SIGTERM"
          expect_line "$WORK/$sig.err" "^runrun: stopped by Terminated; every rank was stopped" ;;
    KILL) expect_rc "$rc" 137 "the launcher killed with SIGKILL" ;;
  esac
  no_orphans
done
echo "PASS"
