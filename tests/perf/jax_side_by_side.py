"""runrun.jax's allreduce inside jax.jit, eagerly, and runrun.torch's on the same sizes (issue 12,
point 6). A benchmark, never a test: it asserts nothing about time.

Usage (from the repository root, runrun's package importable):
    runrun --gloo -np 2 python3 tests/perf/jax_side_by_side.py [--json] [--iters 50]

Cases: one float32 array of 4 B, one of 1 MiB, and 100 of 1 KiB; sum allreduce. Sides per case:
- torch: runrun.torch's out-of-place allreduce (100 x 1 KiB: 100 allreduce_async + synchronize,
  and one grouped_allreduce);
- jax eager: runrun.jax.allreduce on a concrete jax.Array (100 x 1 KiB: grouped_allreduce, and
  100 allreduce calls one after the other: the eager API waits for each);
- jax jit native / jax jit callback: a jitted function calling runrun.jax.allreduce, compiled
  on each of the two jit paths (docs/jax.md): one custom call to runrun's XLA FFI handler per
  op (the default), or one ordered io_callback per op (RUNRUN_JAX_JIT_PATH=callback)
  (100 x 1 KiB: one grouped_allreduce, one op; and 100 allreduces, 100 ops);
- and, to separate runrun's cost from JAX's: "jit, no collective" (the same jitted function
  with x * 1 instead of the allreduce) and "jit, empty io_callback" (an ordered io_callback that
  returns its input: the round trip into Python and back that every op inside jit pays).
Every side's result is checked against the exact sum first. Each timed iteration runs the side
once and waits for its result (block_until_ready); iterations alternate between sides after a
barrier. Reported: median (min) microseconds per iteration, the largest over ranks.
--json prints one object per line. Thread-safety: a script; one thread.
"""

import argparse
import json
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.experimental import io_callback

import runrun.jax as jhvd
import runrun.torch as hvd
from runrun.jax import ffi_ops

PATHS = ("native", "callback")


def jit_on(path, fn, *example):
    """`fn` jitted and compiled on jit path `path` (the path is chosen when ops are traced)."""
    saved = dict(ffi_ops._state)
    if path == "callback":
        ffi_ops._state["enabled"] = False
    try:
        return jax.jit(fn).lower(*example).compile()
    finally:
        ffi_ops._state.clear()
        ffi_ops._state.update(saved)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.add_argument("--iters", type=int, default=50, help="timed iterations per side and case")
    p.add_argument("--warmup", type=int, default=5, help="untimed iterations per side")
    return p.parse_args()


def single_sides(elements, tag):
    t = torch.ones(elements)
    x = jnp.ones(elements, jnp.float32)
    name = f"jsbs.{tag}"
    jit_allreduce = {
        p: jit_on(p, lambda a: jhvd.allreduce(a, op=jhvd.Sum, name=name + ".jit"), x)
        for p in PATHS}
    jit_plain = jax.jit(lambda a: a * 1.0)
    jit_empty = jax.jit(lambda a: io_callback(lambda v: v, jax.ShapeDtypeStruct(a.shape, a.dtype),
                                              a, ordered=True))
    return {
        "torch": lambda: [hvd.allreduce(t, op=hvd.Sum, name=name + ".torch")],
        "jax eager": lambda: [jhvd.allreduce(x, op=jhvd.Sum, name=name + ".eager")],
        "jax jit native": lambda: [jit_allreduce["native"](x)],
        "jax jit callback": lambda: [jit_allreduce["callback"](x)],
        "jit, no collective": lambda: [jit_plain(x)],
        "jit, empty io_callback": lambda: [jit_empty(x)],
    }


def many_sides(count, elements):
    ts = [torch.ones(elements) for _ in range(count)]
    xs = [jnp.ones(elements, jnp.float32) for _ in range(count)]
    names = [f"jsbs.many.{i}" for i in range(count)]

    def torch_async():
        handles = [hvd.allreduce_async(t, name=n + ".torch", op=hvd.Sum)
                   for t, n in zip(ts, names)]
        return [hvd.synchronize(h) for h in handles]

    jit_grouped = {p: jit_on(p, lambda a: jhvd.grouped_allreduce(a, op=jhvd.Sum,
                                                                 name="jsbs.g.jit"), xs)
                   for p in PATHS}
    jit_each = {p: jit_on(p, lambda a: [jhvd.allreduce(v, op=jhvd.Sum, name=n + ".jit")
                                        for v, n in zip(a, names)], xs)
                for p in PATHS}
    jit_plain = jax.jit(lambda a: [v * 1.0 for v in a])
    return {
        "torch 100 async": torch_async,
        "torch grouped": lambda: hvd.grouped_allreduce(ts, op=hvd.Sum, name="jsbs.g.torch"),
        "jax eager grouped": lambda: jhvd.grouped_allreduce(xs, op=jhvd.Sum, name="jsbs.g.e"),
        "jax eager 100 calls": lambda: [jhvd.allreduce(x, op=jhvd.Sum, name=n + ".e")
                                        for x, n in zip(xs, names)],
        "jax jit grouped native": lambda: jit_grouped["native"](xs),
        "jax jit grouped callback": lambda: jit_grouped["callback"](xs),
        "jax jit 100 ops native": lambda: jit_each["native"](xs),
        "jax jit 100 ops callback": lambda: jit_each["callback"](xs),
        "jit, no collective": lambda: jit_plain(xs),
    }


def wait(outputs):
    for o in outputs:
        if isinstance(o, jax.Array):
            o.block_until_ready()
    return outputs


def largest(value):
    return float(jhvd.allreduce(jnp.asarray([value], jnp.float32), op=jhvd.Max,
                                name="jsbs.largest")[0])


def run_case(case, sides, args, size):
    for side, run in sides.items():  # correctness first
        expected = 1.0 if "no collective" in side or "empty" in side else float(size)
        if not all(np.all(np.asarray(o) == expected) for o in wait(run())):
            print(f"jax_side_by_side: wrong result of {side} ({case})", file=sys.stderr)
            sys.exit(1)
    times = {k: [] for k in sides}
    order = list(sides)
    for it in range(args.warmup + args.iters):
        for k in order[it % len(order):] + order[:it % len(order)]:
            jhvd.barrier()
            start = time.perf_counter()
            wait(sides[k]())
            if it >= args.warmup:
                times[k].append((time.perf_counter() - start) * 1e6)
    rows = []
    for k in sides:
        rows.append({"case": case, "side": k, "us": largest(statistics.median(times[k])),
                     "us_min": largest(min(times[k]))})
    return rows


def main():
    args = parse_args()
    hvd.init()
    jhvd.init()
    size = jhvd.size()
    if not ffi_ops.enabled():
        print("jax_side_by_side: the native jit path is not available (see the warning above); "
              "its sides would measure the callback", file=sys.stderr)
        sys.exit(1)
    rows = []
    rows += run_case("4 B", single_sides(1, "4B"), args, size)
    rows += run_case("1 MiB", single_sides(262144, "1M"), args, size)
    rows += run_case("100 x 1 KiB", many_sides(100, 256), args, size)
    if jhvd.rank() == 0:
        head = {"op": "run", "backend": "mpi" if jhvd.mpi_enabled() else "gloo", "ranks": size}
        print(json.dumps(head) if args.json else
              f"jax_side_by_side: {size} ranks over {head['backend']}, float32 sum, median (min) "
              f"us per iteration over {args.iters}, the largest over ranks")
        for row in rows:
            print(json.dumps(row) if args.json else
                  f"{row['case']:12s} {row['side']:26s} {row['us']:10.1f} ({row['us_min']:.1f})",
                  flush=True)
    jhvd.shutdown()


if __name__ == "__main__":
    main()
