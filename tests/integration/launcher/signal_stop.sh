#!/usr/bin/env bash
# SIGTERM and SIGINT (Ctrl-C) to the launcher stop every rank: exit 128+N, nothing left.
source "$(dirname "$0")/lib.sh"
for sig in TERM INT; do
  : >"$WORK/$sig.out"
  # --default-signal: a background job of a non-interactive shell starts with SIGINT ignored.
  env --default-signal=INT "$RUNRUN" -np 2 "$PROBE" --ready-and-wait --token "$TOKEN" >"$WORK/$sig.out" 2>"$WORK/$sig.err" &
  launcher=$!
  wait_for_lines "$WORK/$sig.out" "PROBE ready" 2 "$launcher"
  kill -"$sig" "$launcher"
  timeout 60 tail --pid="$launcher" -f /dev/null || fail "the launcher did not exit after SIG$sig"
  wait "$launcher"
  rc=$?
  expected=143
  [ "$sig" = INT ] && expected=130
  expect_rc $rc $expected "SIG$sig to the launcher"
  expect_line "$WORK/$sig.err" "^runrun: stopped by .*; every rank was stopped$"
  no_orphans
done
echo "PASS"
