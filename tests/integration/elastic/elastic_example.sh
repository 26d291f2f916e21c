#!/usr/bin/env bash
# examples/pytorch/elastic_mnist_like.py runs (so it cannot rot): 3 ranks, 97 samples in batches
# of 8, so the ElasticSampler's shares are 33, 32, 32 (no padding) and rank 0 takes a fifth,
# one-sample batch the others do not: the example's hvd.join() after its batches lets the others
# take part in that step's allreduces instead of hanging. Two epochs, no process left behind.
source "$(dirname "$0")/elastic_lib.sh"
EXAMPLE="$WORK/elastic_mnist_like-$TOKEN.py"  # the token in its path, for no_orphans
cp "$HERE_ELASTIC/../../../examples/pytorch/elastic_mnist_like.py" "$EXAMPLE"
timeout -k 10 150 "$RUNRUN" -np 3 --min-np 2 "$PYTHON_BIN" "$EXAMPLE" --samples 97 \
  --batch-size 8 --epochs 2 --commit-every 2 >"$WORK/example.out" 2>"$WORK/example.err"
expect_rc $? 0 "the elastic example with an uneven last batch"
expect_line "$WORK/example.out" "^\[0\]<stdout>:epoch 1 batch 4 loss [0-9.]+ size 3"
expect_line "$WORK/example.out" "^\[0\]<stdout>:done"
no_orphans
echo "PASS"
