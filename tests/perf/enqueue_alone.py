"""Enqueue cost per tensor of each adapter with the host to itself (issue 12, point 6): one
process, one rank, no launcher, no peer. A benchmark, never a test: it asserts nothing about
time. per_tensor_cost.py times the same calls at 2 ranks, where each rank's enqueue shares the
CPUs with the other rank and both background threads; this shows what the call itself costs.

Usage (from the repository root, runrun's package importable):
    python3 tests/perf/enqueue_alone.py [--adapters tensorflow,jax] [--blocks 200] [--json]

Sides, block by block in turn: runrun.torch (hvd.allreduce_async_, in place), numpy
(runrun.common.collectives.allreduce in place), and with --adapters TensorFlow and JAX
(common allreduce out of place, as runrun.tensorflow's and runrun.jax's eager ops). A block
enqueues 100 float32 tensors of 1 KiB under fixed names, then waits for all; timed is the
enqueue. Before each block, the pure-Python yardstick of per_tensor_cost.py. Printed per side:
the median enqueue in us per tensor, its minimum, and the median over the blocks in the host's
faster state (yardstick within 25 % of the run's fastest).
Thread-safety: a script; one thread.
"""

import argparse
import json
import statistics
import time

import numpy as np
import torch

import runrun.torch as hvd
from runrun.common import collectives as common
from runrun.common.numpy_tensors import ADAPTER as NUMPY


def yardstick_ns():
    """ns per iteration of a fixed pure-Python loop: how fast the host runs this process now."""
    x = 0
    start = time.perf_counter()
    for i in range(3000):
        x += i & 1023
    return (time.perf_counter() - start) / 3000 * 1e9


def make_sides(adapters, count, elements):
    names = [f"enqueue_alone.{i}" for i in range(count)]
    tensors = [torch.ones(elements) for _ in range(count)]
    arrays = [np.ones(elements, dtype=np.float32) for _ in range(count)]
    sides = {
        "runrun.torch": lambda: [hvd.allreduce_async_(t, name=n, op=hvd.Sum)
                                 for t, n in zip(tensors, names)],
        "runrun.common+numpy": lambda: [common.allreduce(NUMPY, a, name=n, op=hvd.Sum,
                                                         in_place=True)
                                        for a, n in zip(arrays, names)],
    }
    for framework in filter(None, adapters.split(",")):
        if framework == "tensorflow":
            import tensorflow as tf

            from runrun.tensorflow.tensor_bridge import ADAPTER
            inputs = [tf.ones([elements]) for _ in range(count)]
        elif framework == "jax":
            import jax.numpy as jnp

            from runrun.jax.tensor_bridge import ADAPTER
            inputs = [jnp.ones([elements]) for _ in range(count)]
        else:
            raise SystemExit(f"enqueue_alone: unknown adapter {framework!r}")
        sides[f"runrun.common+{framework}"] = (
            lambda adapter=ADAPTER, inputs=inputs:
            [common.allreduce(adapter, x, name=n, op=hvd.Sum) for x, n in zip(inputs, names)])
    return sides


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--adapters", default="", help="extra sides: tensorflow, jax")
    p.add_argument("--blocks", type=int, default=200, help="timed blocks per side")
    p.add_argument("--count", type=int, default=100, help="tensors per block")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    args = p.parse_args()
    hvd.init()
    sides = make_sides(args.adapters, args.count, 256)
    samples = {k: [] for k in sides}
    for block in range(args.blocks + 3):
        for side, enqueue in sides.items():
            yard = yardstick_ns()
            start = time.perf_counter()
            handles = enqueue()
            elapsed = time.perf_counter() - start
            for h in handles:
                h.wait()
            if block >= 3:
                samples[side].append((yard, elapsed / args.count * 1e6))
    fastest = min(y for rows in samples.values() for y, _ in rows)
    for side, rows in samples.items():
        fast = [us for y, us in rows if y <= 1.25 * fastest]
        row = {"side": side, "blocks": len(rows),
               "enqueue_us_per_tensor": statistics.median(us for _, us in rows),
               "enqueue_us_per_tensor_min": min(us for _, us in rows),
               "fast_state_blocks": len(fast),
               "enqueue_us_per_tensor_fast_state": statistics.median(fast) if fast else None,
               "yardstick_ns_min": fastest}
        print(json.dumps(row) if args.json else
              f"{side:26s} enqueue {row['enqueue_us_per_tensor']:6.2f} us/tensor "
              f"(min {row['enqueue_us_per_tensor_min']:.2f}); {len(fast)} blocks in the faster "
              f"state: {row['enqueue_us_per_tensor_fast_state'] or float('nan'):.2f}", flush=True)
    hvd.shutdown()


if __name__ == "__main__":
    main()
