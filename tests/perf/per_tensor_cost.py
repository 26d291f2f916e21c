"""Per-tensor cost from Python to the queue (issue 12, point 6), per adapter, side by side with
torch.distributed over gloo. A benchmark, never a test: it asserts nothing about time.

Usage (from the repository root, runrun's package importable):
    runrun --gloo -np 2 python3 tests/perf/per_tensor_cost.py [--json] [--count 100 --bytes 1K]
    runrun --mpi  -np 2 python3 tests/perf/per_tensor_cost.py ...

Every rank initializes runrun and a torch process group with backend "gloo" (as
torch_side_by_side.py does). Sides, each enqueuing --count float32 tensors of --bytes, one async
call per tensor under a fixed name per tensor (as a backward pass does), then waiting for all:
- runrun.torch: hvd.allreduce_async_(t, name=..., op=hvd.Sum), then hvd.synchronize;
- runrun.common+numpy: runrun.common.collectives.allreduce(numpy adapter, array, in_place=True),
  the path a non-torch adapter takes;
- runrun.torch grouped: one hvd.grouped_allreduce_async_ of the whole list (one call);
- torch.distributed: dist.all_reduce(t, async_op=True), then work.wait();
- with --adapters tensorflow,jax (opt-in: TensorFlow's import alone takes seconds):
  runrun.common+tensorflow / +jax, runrun.common.collectives.allreduce(adapter, tensor) out of
  place (both frameworks' tensors are immutable: the extension allocates each output and the
  handle's wait() makes it a tf.Tensor / jax.Array), the path runrun.tensorflow's and
  runrun.jax's eager allreduce take, then each handle waited (output built).
  "... grouped": runrun.common.collectives.grouped_allreduce(adapter, list) of the same tensors
  (the path runrun.tensorflow's grouped_allreduce takes), one handle waited.
Results are checked against the exact sum before timing. Blocks alternate between the sides
(rotating which goes first), each after a torch barrier. Reported per side, median and minimum
over blocks: `enqueue_us_per_tensor` (this rank's time to enqueue all, / count; the largest
over ranks), `total_ms` (enqueue of the first to the last one synchronized, the slowest
rank's), `cpu_ms` (the CPU time the block took in the whole process, every thread: the
caller's and runrun's background thread; the largest over ranks, median over blocks) and,
for runrun's sides, `rounds` (negotiation rounds rank 0 ran for the block, Runtime.counters();
absent on a runrun without it). Before each block every rank times a fixed pure-Python loop
(the yardstick: how fast the host runs this process just then); the run ends with its range and,
per side, the medians over the blocks in the host's faster state. --json prints one object per
line.
Thread-safety: a script; one thread.
"""

import argparse
import json
import statistics
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
from torch_side_by_side import init_torch_gloo, parse_bytes

import runrun.torch as hvd

try:
    from runrun.common import collectives as common
    from runrun.common.numpy_tensors import ADAPTER as NUMPY
except ImportError:  # a runrun before issue 12 point 4 (to measure "before"): no numpy side
    common = NUMPY = None


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.add_argument("--count", type=int, default=100, help="tensors per block")
    p.add_argument("--bytes", default="1K", help="bytes per tensor (4, 1K, 1M)")
    p.add_argument("--iters", type=int, default=30, help="timed blocks per side")
    p.add_argument("--warmup", type=int, default=5, help="untimed blocks per side")
    p.add_argument("--no-torch-distributed", action="store_true",
                   help="leave torch.distributed out (no gloo process group: its threads take "
                        "CPU from runrun's on a small machine); barriers and maxima by runrun")
    p.add_argument("--adapters", default="",
                   help="extra sides, comma-separated: tensorflow, jax (out of place, one call "
                        "per tensor and one grouped call)")
    return p.parse_args()


def framework_sides(adapters, count, elements, names):
    """The opt-in TensorFlow and JAX sides: (sides, outputs-getters)."""
    sides, outputs = {}, {}
    for framework in filter(None, adapters.split(",")):
        if framework == "tensorflow":
            import tensorflow as tf

            from runrun.tensorflow.tensor_bridge import ADAPTER
            inputs = [tf.ones([elements], dtype=tf.float32) for _ in range(count)]
        elif framework == "jax":
            import jax.numpy as jnp

            from runrun.jax.tensor_bridge import ADAPTER
            inputs = [jnp.ones([elements], dtype=jnp.float32) for _ in range(count)]
        else:
            raise SystemExit(f"per_tensor_cost: unknown adapter {framework!r}")
        results = [None] * count

        def side(adapter=ADAPTER, inputs=inputs, results=results):
            start = time.perf_counter()
            handles = [common.allreduce(adapter, t, name=n, op=hvd.Sum)
                       for t, n in zip(inputs, names)]
            enqueued = time.perf_counter()
            for i, h in enumerate(handles):
                results[i] = h.wait()
            return start, enqueued

        grouped_results = [None] * count

        def grouped(adapter=ADAPTER, inputs=inputs, results=grouped_results, tag=framework):
            start = time.perf_counter()
            handle = common.grouped_allreduce(adapter, inputs, name=f"per_tensor_cost.{tag}",
                                              op=hvd.Sum)
            enqueued = time.perf_counter()
            results[:] = handle.wait()
            return start, enqueued

        key = f"runrun.common+{framework}"
        sides[key] = side
        outputs[key] = results
        sides[key + " grouped"] = grouped
        outputs[key + " grouped"] = grouped_results
    return sides, outputs


def make_sides(count, elements):
    torch_tensors = [torch.ones(elements) for _ in range(count)]
    arrays = [np.ones(elements, dtype=np.float32) for _ in range(count)]
    names = [f"per_tensor_cost.{i}" for i in range(count)]
    dist_tensors = [torch.ones(elements) for _ in range(count)]

    def runrun_torch():
        start = time.perf_counter()
        handles = [hvd.allreduce_async_(t, name=n, op=hvd.Sum)
                   for t, n in zip(torch_tensors, names)]
        enqueued = time.perf_counter()
        for h in handles:
            hvd.synchronize(h)
        return start, enqueued

    def runrun_numpy():
        start = time.perf_counter()
        handles = [common.allreduce(NUMPY, a, name=n, op=hvd.Sum, in_place=True)
                   for a, n in zip(arrays, names)]
        enqueued = time.perf_counter()
        for h in handles:
            h.wait()
        return start, enqueued

    def runrun_grouped():
        start = time.perf_counter()
        handle = hvd.grouped_allreduce_async_(torch_tensors, name="per_tensor_cost.grouped",
                                              op=hvd.Sum)
        enqueued = time.perf_counter()
        hvd.synchronize(handle)
        return start, enqueued

    def torch_dist():
        start = time.perf_counter()
        works = [dist.all_reduce(t, async_op=True) for t in dist_tensors]
        enqueued = time.perf_counter()
        for w in works:
            w.wait()
        return start, enqueued

    def reset():
        for t in torch_tensors + dist_tensors:
            t.fill_(1.0)
        for a in arrays:
            a.fill(1.0)

    sides = {"runrun.torch": runrun_torch, "runrun.common+numpy": runrun_numpy,
             "runrun.torch grouped": runrun_grouped, "torch.distributed": torch_dist}
    if common is None:
        del sides["runrun.common+numpy"]
    outputs = {"runrun.torch": torch_tensors, "runrun.common+numpy": arrays,
               "runrun.torch grouped": torch_tensors, "torch.distributed": dist_tensors}
    return sides, outputs, reset


def yardstick_ns():
    """ns per iteration of a fixed pure-Python loop (no runrun, no allocation): the speed the
    host gives this process right now. This VM's host alternates between two speeds ~1.9x apart
    for tens to hundreds of milliseconds at a time (docs/perf-notes/mpi-2026-11-21.md, "Open
    issue: an intermittent slow state"); timed right before a block, it tells which one the
    block ran in."""
    x = 0
    start = time.perf_counter()
    for i in range(3000):
        x += i & 1023
    return (time.perf_counter() - start) / 3000 * 1e9


def negotiation_rounds():
    """Rank 0's negotiation rounds of the global set so far (None: this runrun has no counters)."""
    from runrun.common import basics
    counters = getattr(basics.runtime(), "counters", None)
    return counters(0)["negotiation_rounds"] if counters else None


def largest(value, with_dist=True):
    t = torch.tensor([value], dtype=torch.float64)
    if not with_dist:
        return float(hvd.allreduce(t, name="per_tensor_cost.largest", op=hvd.Max).item())
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return float(t.item())


def print_machine_state(sides, yard, enqueue, total, as_json):
    """The yardstick over the run and, when the run saw both of the host's states (the median
    block 1.4x slower than the fastest), each side's medians over the blocks in the faster
    one (yardstick within 25 % of the run's fastest), when there were at least 5."""
    every = [y for k in sides for y in yard[k]]
    fastest = min(every)
    state = {"op": "machine", "yardstick_ns_min": fastest,
             "yardstick_ns_median": statistics.median(every), "yardstick_ns_max": max(every)}
    print(json.dumps(state) if as_json else
          f"machine: pure-Python yardstick {state['yardstick_ns_min']:.1f} / "
          f"{state['yardstick_ns_median']:.1f} / {state['yardstick_ns_max']:.1f} ns per iteration "
          "(min / median / max over blocks, the slower rank's)", flush=True)
    if statistics.median(every) < 1.4 * fastest:
        return  # one state throughout (most blocks near the fastest): the rows above are it
    for k in sides:
        fast = [i for i, y in enumerate(yard[k]) if y <= 1.25 * fastest]
        if len(fast) < 5:
            continue
        row = {"op": "faster_state", "of_side": k, "blocks": len(fast),
               "yardstick_ns_median": statistics.median(yard[k][i] for i in fast),
               "enqueue_us_per_tensor_fast_state": statistics.median(enqueue[k][i] for i in fast),
               "total_ms_fast_state": statistics.median(total[k][i] for i in fast)}
        print(json.dumps(row) if as_json else
              f"{k:22s} faster state, {len(fast):2d} blocks at "
              f"{row['yardstick_ns_median']:.0f} ns: enqueue "
              f"{row['enqueue_us_per_tensor_fast_state']:7.2f} us/tensor   enqueue to all "
              f"synchronized {row['total_ms_fast_state']:7.3f} ms", flush=True)


def all_sides(args, elements, with_dist):
    """Every side to run: (sides, outputs, reset)."""
    sides, outputs, reset = make_sides(args.count, elements)
    if not with_dist:
        del sides["torch.distributed"]
    if args.adapters and common is not None:
        names = [f"per_tensor_cost.{i}" for i in range(args.count)]
        extra, extra_outputs = framework_sides(args.adapters, args.count, elements, names)
        sides.update(extra)
        outputs.update(extra_outputs)
    return sides, outputs, reset


def check_results(sides, outputs, reset, size):
    """Correctness first: each side sums ones over the ranks; exits 1 on a wrong result."""
    for name, run in sides.items():
        reset()
        run()
        if not all(bool((np.asarray(t) == size).all()) for t in outputs[name]):
            print(f"per_tensor_cost: wrong result of {name}", file=sys.stderr, flush=True)
            sys.exit(1)


def time_blocks(args, sides, reset, with_dist):
    """The timed blocks, sides alternating: per side, lists enqueue, total, rounds, cpu, yard."""
    series = {m: {k: [] for k in sides} for m in ("enqueue", "total", "rounds", "cpu", "yard")}
    order = list(sides)
    for block in range(args.warmup + args.iters):
        for k in order[block % len(order):] + order[:block % len(order)]:
            reset()
            block_yard = yardstick_ns()
            dist.barrier() if with_dist else hvd.barrier()
            rounds_before = negotiation_rounds()
            cpu_before = time.process_time()
            start, enqueued = sides[k]()
            done = time.perf_counter()
            cpu_used = time.process_time() - cpu_before
            if rounds_before is not None and k != "torch.distributed":
                series["rounds"][k].append(negotiation_rounds() - rounds_before)
            if block >= args.warmup:
                series["enqueue"][k].append(
                    largest((enqueued - start) / args.count * 1e6, with_dist))
                series["total"][k].append(largest((done - start) * 1e3, with_dist))
                series["cpu"][k].append(largest(cpu_used * 1e3, with_dist))
                series["yard"][k].append(largest(block_yard, with_dist))
    return series


def side_row(k, series, warmup):
    """One side's medians and minima over the timed blocks."""
    enqueue, total, rounds = series["enqueue"], series["total"], series["rounds"]
    yard, cpu = series["yard"], series["cpu"]
    row = {"side": k,
           "enqueue_us_per_tensor": statistics.median(enqueue[k]),
           "enqueue_us_per_tensor_min": min(enqueue[k]),
           "total_ms": statistics.median(total[k]), "total_ms_min": min(total[k]),
           "cpu_ms": statistics.median(cpu[k])}
    # The block's time in yardstick iterations: comparable across the host's states
    # (as far as the slow state slows everything alike; see yardstick_ns).
    row["total_yardsticks"] = statistics.median(
        t * 1e6 / y for t, y in zip(total[k], yard[k]))
    if rounds[k]:
        timed = rounds[k][warmup:] or rounds[k]
        row.update(rounds=statistics.median(timed), rounds_max=max(timed))
    return row


def print_results(args, sides, series, size, elements):
    run = {"op": "run", "backend": hvd.mpi_enabled() and "mpi" or "gloo", "ranks": size,
           "count": args.count, "bytes": elements * 4}
    print(json.dumps(run) if args.json else
          f"per_tensor_cost: {size} ranks over {run['backend']}, {args.count} x "
          f"{elements * 4} B float32 sum, median (min) over {args.iters} blocks")
    for k in sides:
        row = side_row(k, series, args.warmup)
        text_rounds = (f"   rounds {row['rounds']:g} (max {row['rounds_max']})"
                       if "rounds" in row else "")
        print(json.dumps(row) if args.json else
              f"{k:22s} enqueue {row['enqueue_us_per_tensor']:7.2f} us/tensor "
              f"({row['enqueue_us_per_tensor_min']:.2f})   enqueue to all synchronized "
              f"{row['total_ms']:7.3f} ms ({row['total_ms_min']:.3f})   cpu "
              f"{row['cpu_ms']:.3f} ms{text_rounds}   = {row['total_yardsticks']:.0f} "
              "yardstick iterations",
              flush=True)


def main():
    args = parse_args()
    hvd.init()
    with_dist = not args.no_torch_distributed
    if with_dist:
        init_torch_gloo(120)
    elements = max(1, parse_bytes(args.bytes) // 4)
    sides, outputs, reset = all_sides(args, elements, with_dist)
    size = hvd.size()
    check_results(sides, outputs, reset, size)
    series = time_blocks(args, sides, reset, with_dist)
    if hvd.rank() == 0:
        print_results(args, sides, series, size, elements)
    if hvd.rank() == 0:
        print_machine_state(sides, series["yard"], series["enqueue"], series["total"], args.json)
    if with_dist:
        dist.destroy_process_group()
    hvd.shutdown()


if __name__ == "__main__":
    main()
