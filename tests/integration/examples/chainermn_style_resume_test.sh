#!/usr/bin/env bash
# examples.chainermn_style_resume: runs examples/pytorch/train_chainermn_style.py under
# `runrun --gloo` on 4 ranks for one epoch (saving a checkpoint), then on 2 ranks until epoch 2,
# and checks that the second run resumed from the first's checkpoint (epoch 1, saved with 4
# ranks, learning rate halved by the linear scaling) and evaluated. The package is this
# checkout's Python sources plus this build's extension, staged in WORK; `timeout` bounds each
# run.
# Usage: chainermn_style_resume_test.sh RUNRUN PYTHON CORE_MODULE WORK
set -uo pipefail
RUNRUN="$1"; PYTHON="$2"; CORE="$3"; WORK="$4"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$HERE/../../.."
fail() { echo "FAIL: $*"; exit 1; }
source "$ROOT/tests/support/stage_python_package.sh"

stage_python_package "$WORK" "$CORE"
EXAMPLE="$ROOT/examples/pytorch/train_chainermn_style.py"
ARGS=(--train-samples 512 --val-samples 128 --checkpoint "$WORK/ck.pt")

run() {  # run NP EPOCHS LOG
  timeout -k 10 150 "$RUNRUN" --gloo -np "$1" -H "localhost:$1" \
    "$PYTHON" "$EXAMPLE" --epochs "$2" "${ARGS[@]}" >"$3" 2>&1
  local rc=$?
  [ $rc -eq 0 ] || fail "$1 ranks exited $rc; output:
$(cat "$3")"
}

run 4 1 "$WORK/first.log"
grep -q "epoch 1: val loss" "$WORK/first.log" || fail "no evaluation in the 4-rank run:
$(cat "$WORK/first.log")"
[ -f "$WORK/ck.pt" ] || fail "the 4-rank run wrote no checkpoint"
run 2 2 "$WORK/second.log"
grep -q "resumed at epoch 1 (saved with 4 ranks, now 2); lr 0.1$" "$WORK/second.log" \
  || fail "the 2-rank run did not resume from the 4-rank checkpoint:
$(cat "$WORK/second.log")"
grep -q "epoch 2: val loss .* over 128 samples" "$WORK/second.log" \
  || fail "the 2-rank run did not train and evaluate epoch 2:
$(cat "$WORK/second.log")"
grep -q "epoch 1:" "$WORK/second.log" && fail "the 2-rank run repeated epoch 1"
echo "resumed at 2 ranks from a 4-rank checkpoint"
