"""Latency of small runrun ops from Python: init, repeated and first-seen tiny allreduces, shutdown.

Why: the cost of the small ops a test suite or a training script's bookkeeping runs (the Python
suite is ~4x slower over gloo than over MPI at -np 4; docs/perf-notes/gloo.md). A benchmark,
not a test. Usage: runrun --gloo|--mpi -np N python3 tests/perf/small_op_latency.py
Every rank prints one line: hvd.init() time, the first allreduce, 300 allreduces of one float
under one name (median, min, 90th percentile), 50 of new names (each a coordinator round),
shutdown time.
"""

import os
import time

import torch

import runrun.torch as hvd


def main():
    t0 = time.perf_counter()
    hvd.init()
    t1 = time.perf_counter()
    x = torch.ones(1)
    hvd.allreduce_(x, op=hvd.Sum, name="first")
    t2 = time.perf_counter()
    repeated = []
    for _ in range(300):
        start = time.perf_counter()
        hvd.allreduce_(x, op=hvd.Sum, name="tiny")
        repeated.append(time.perf_counter() - start)
    fresh = []
    for i in range(50):
        start = time.perf_counter()
        hvd.allreduce_(x, op=hvd.Sum, name=f"new.{i}")
        fresh.append(time.perf_counter() - start)
    repeated.sort()
    fresh.sort()
    t3 = time.perf_counter()
    hvd.shutdown()
    t4 = time.perf_counter()
    print(f"rank {os.environ.get('RUNRUN_RANK', '?')}: init {t1 - t0:.3f} s, first op "
          f"{1e3 * (t2 - t1):.1f} ms, repeated tiny allreduce median {1e6 * repeated[150]:.0f} us "
          f"min {1e6 * repeated[0]:.0f} us p90 {1e6 * repeated[270]:.0f} us, new name median "
          f"{1e6 * fresh[25]:.0f} us, shutdown {t4 - t3:.3f} s", flush=True)


if __name__ == "__main__":
    main()
