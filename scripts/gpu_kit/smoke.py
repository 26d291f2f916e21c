"""One rank of the GPU kit's smoke check (scripts/gpu_kit.sh run, part smoke), run on 2 ranks.

Why: before any GPU part, proves that the runrun built against the kit imports in this python3
and moves data between processes over the launcher's transport (the kit's Open MPI, or Gloo):
an allreduce, an allgather with uneven rows and a broadcast of numpy arrays through
runrun.common, checked exactly on every rank. Needs no GPU and no framework.
"""

import sys

import numpy as np

import runrun
from runrun.common import basics
from runrun.common import collectives as c
from runrun.common.numpy_tensors import ADAPTER as NP


def main():
    runrun.init()
    rank, size = runrun.rank(), runrun.size()
    mine = np.arange(6, dtype=np.float32) * (rank + 1)
    total = c.allreduce(NP, mine, op=runrun.Sum, name="smoke.sum").wait()
    expected = np.arange(6, dtype=np.float32) * (size * (size + 1) / 2)
    rows = np.full((rank + 1, 2), rank, dtype=np.int64)
    gathered = c.allgather(NP, rows, name="smoke.gather").wait()
    expected_rows = np.concatenate([np.full((r + 1, 2), r, dtype=np.int64) for r in range(size)])
    root = c.broadcast(NP, np.full(3, rank, dtype=np.int32), root_rank=size - 1,
                       name="smoke.bcast").wait()
    ok = (np.array_equal(total, expected) and np.array_equal(gathered, expected_rows)
          and np.array_equal(root, np.full(3, size - 1, dtype=np.int32)))
    print(f"smoke rank {rank}/{size} ({basics.backend_name()}): "
          f"{'exact' if ok else 'WRONG'} sum={total.tolist()} rows={gathered.shape[0]}",
          flush=True)
    runrun.shutdown()
    sys.exit(0 if ok and size == 2 else 1)


if __name__ == "__main__":
    main()
