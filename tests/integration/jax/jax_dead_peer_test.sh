#!/usr/bin/env bash
# jax.dead_peer_in_jit: rank 2 of 4 dies while the others are inside a jitted allreduce
# (jax_dead_peer.py). Checks, for the jit path given (ffi: the native XLA FFI handler; callback:
# io_callback), that each survivor's jitted call raised JaxRuntimeError carrying runrun's
# PeerFailureError naming rank 2 and that the job ended: a native handler blocked in XLA must
# not turn a dead peer into a hang. The bound is the whole job's `timeout` (generous).
# Usage: jax_dead_peer_test.sh RUNRUN PYTHON CORE_MODULE WORK ffi|callback
set -uo pipefail
RUNRUN="$1"; PYTHON="$2"; CORE="$3"; WORK="$4"; JIT_PATH="$5"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$HERE/../../.."
TOKEN="rrjaxdead$$x$RANDOM"
trap 'pkill -KILL -f "$TOKEN" 2>/dev/null' EXIT
fail() { echo "FAIL: $*"; exit 1; }
source "$ROOT/tests/support/stage_python_package.sh"

"$PYTHON" -c "import jax" || fail "jax is needed (scripts/install_deps.sh)"
stage_python_package "$WORK" "$CORE"
export RUNRUN_PEER_TIMEOUT=3 RUNRUN_JAX_JIT_PATH="$JIT_PATH"
SECONDS=0
timeout -k 5 120 "$RUNRUN" --gloo -np 4 -H localhost:4 \
  "$PYTHON" "$HERE/jax_dead_peer.py" 2 "$TOKEN" >"$WORK/run.log" 2>&1
rc=$?
cat "$WORK/run.log"
[ "$SECONDS" -lt 120 ] || fail "the job did not end within 120 s (a survivor hung)"
[ $rc -ne 0 ] || fail "the launcher exited 0 although rank 2 died"
for r in 0 1 3; do
  grep -q "^\[$r\]<stdout>:rank $r: jit path $JIT_PATH warm" "$WORK/run.log" ||
    fail "rank $r never ran its jitted allreduces on the $JIT_PATH path"
  grep -Eq "^\[$r\]<stdout>:rank $r: jit error after [0-9.]+ s: .*PeerFailureError.*rank 2" \
    "$WORK/run.log" || fail "rank $r did not raise runrun's peer failure naming rank 2"
done
echo "PASS: every survivor's jitted call failed naming rank 2 ($JIT_PATH path, ${SECONDS}s)"
