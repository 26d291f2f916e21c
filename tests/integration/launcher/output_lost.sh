#!/usr/bin/env bash
# --output-filename where the output cannot be kept (issue 36, point 4): a folder on a tiny tmpfs
# that fills up while two ranks write about 1.5 MB each, and an existing read-only folder. The
# launcher says which file lost how many bytes and why (the OS's reason), keeps showing the lines
# on the terminal, and exits non-zero although every rank exited 0. Needs root (mount, and a
# read-only folder that root cannot write: a read-only bind mount); skipped with the reason
# otherwise.
source "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to mount a small tmpfs"; exit 77; }
mkdir -p "$WORK/full"
mount -t tmpfs -o size=256k runrun-test-full "$WORK/full" 2>"$WORK/mount.err" ||
  { echo "SKIP: cannot mount a tmpfs: $(cat "$WORK/mount.err")"; exit 77; }
CLEANUPS+=("umount -l '$WORK/full'")
writer='i=0; while [ $i -lt 20000 ]; do echo "rank $RUNRUN_RANK line $i ........................................................"; i=$((i+1)); done'
timeout 120 "$RUNRUN" -np 2 --output-filename "$WORK/full/logs" sh -c "$writer" \
  >"$WORK/full.out" 2>"$WORK/full.err"
rc=$?
[ "$rc" != 0 ] || fail "a job whose output files filled the disk exited 0"
expect_line "$WORK/full.err" "^runrun: $WORK/full/logs/rank\.[01]/stdout: writing failed after [0-9]+ bytes: No space left on device"
expect_line "$WORK/full.err" "^runrun: output lost: $WORK/full/logs/rank\.[01]/stdout: [0-9]+ bytes of rank [01]'s stdout not kept \(writing failed after [0-9]+ bytes: No space left on device\)"
expect_line "$WORK/full.err" "^runrun: every rank succeeded, but [0-9]+ output file\(s\) under $WORK/full/logs are incomplete: exiting 1"
# The terminal still got every line.
[ "$(grep -c '<stdout>:rank' "$WORK/full.out")" = 40000 ] || fail "lines were lost on the terminal too"

mkdir -p "$WORK/ro/logs"
mount --bind -o ro "$WORK/ro" "$WORK/ro" 2>/dev/null && mount -o remount,bind,ro "$WORK/ro" ||
  { echo "SKIP: cannot make a read-only bind mount"; exit 77; }
CLEANUPS+=("umount -l '$WORK/ro'")
timeout 60 "$RUNRUN" -np 2 --output-filename "$WORK/ro/logs" sh -c 'echo "out $RUNRUN_RANK"' \
  >"$WORK/ro.out" 2>"$WORK/ro.err"
rc=$?
[ "$rc" != 0 ] || fail "a job whose output folder is read-only exited 0"
expect_line "$WORK/ro.err" "^runrun: $WORK/ro/logs/rank\.[01]/stdout: cannot create $WORK/ro/logs/rank\.[01]: Read-only file system"
expect_line "$WORK/ro.out" "^\[1\]<stdout>:out 1$"
echo "PASS"
