#!/usr/bin/env bash
# --dry-run prints the exact mpirun command (shell-quoted), contacts no host, starts nothing.
source "$(dirname "$0")/lib.sh"
mpirun_path="$(command -v mpirun)"
root=""
[ "$(id -u)" = 0 ] && root="--allow-run-as-root "
env -i PATH="$PATH" HOME=/nonexistent RUNRUN_LOG_LEVEL=info RUNRUN_API_TOKEN=hidden \
  RUNRUN_RANK=7 MY_SETTING=1 \
  "$RUNRUN" --dry-run -np 3 -H nohost-a:2,nohost-b:2 -x MY_SETTING -x OMP_NUM_THREADS=2 \
  --fusion-threshold-mb 1 --network-interface 10.0.0.0/8 -p 2222 -i /k/id \
  python -c 'print(1)' >"$WORK/dry.out" 2>"$WORK/dry.err"
expect_rc $? 0 "--dry-run"
# (PATH is written unquoted: this test runs with a PATH of plain characters only.)
expected="$mpirun_path ${root}--noprefix -np 3 -H nohost-a:2,nohost-b:1 --bind-to none --map-by slot --tag-output --mca plm_rsh_args '-p 2222 -i /k/id' --mca btl_tcp_if_include 10.0.0.0/8 --mca oob_tcp_if_include 10.0.0.0/8 --mca oob_tcp_keepalive_time 10 --mca oob_tcp_keepalive_intvl 5 --mca oob_tcp_keepalive_probes 2 -x PATH -x RUNRUN_LOG_LEVEL -x MY_SETTING -x RUNRUN_FUSION_THRESHOLD=1048576 -x OMP_NUM_THREADS=2 -x RUNRUN_RANK_PATH=$PATH $RUNRUN_BINARY --rank-shim 2,1 -- python -c 'print(1)'"
[ "$(cat "$WORK/dry.out")" = "$expected" ] ||
  fail "dry run printed
$(cat "$WORK/dry.out")
expected
$expected"
grep -Eq "hidden|RUNRUN_API_TOKEN|RUNRUN_RANK( |=)" "$WORK/dry.out" && fail "a secret or topology variable was forwarded"
echo "PASS"
