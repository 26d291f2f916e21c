"""The steps of one out-of-place allreduce from the TensorFlow and JAX adapters, timed one by
one, and the framework primitives they rest on (issue 12, point 6: the floor per tensor).
A benchmark, never a test: it asserts nothing about time.

Usage (one process, runrun's package importable; no launcher needed):
    python3 tests/perf/adapter_enqueue_steps.py [--frameworks tensorflow,jax] [--count 100]
Each row: microseconds per tensor, best (median) over --repeat blocks of --count float32
tensors of --bytes. "fresh" rows use arrays produced just before (a framework may cache an
export on the array; a backward pass's gradients are always fresh). `enqueue` is
runrun.common.collectives.allreduce (what runrun.tensorflow / runrun.jax eager call),
`wait` the handle's wait() after the op completed (builds the output tensor).
Thread-safety: a script; one thread.
"""

import argparse
import statistics
import time

import numpy as np

import runrun.common.basics as basics
from runrun.common import collectives as common
from runrun.common.ops import Sum


def timed(label, make, step, count, repeat):
    """Times step(x) over `count` inputs from make(count), `repeat` blocks; prints a row."""
    per = []
    for _ in range(repeat):
        xs = make(count)
        start = time.perf_counter()
        for x in xs:
            step(x)
        per.append((time.perf_counter() - start) / count * 1e6)
    print(f"{label:58s} {min(per):8.2f} ({statistics.median(per):.2f}) us", flush=True)


def allreduce_steps(label, adapter, make, count, repeat):
    """enqueue and wait of common.allreduce, timed apart."""
    names = [f"steps.{i}" for i in range(count)]
    enq, fin = [], []
    for _ in range(repeat):
        xs = make(count)
        start = time.perf_counter()
        handles = [common.allreduce(adapter, x, name=n, op=Sum) for x, n in zip(xs, names)]
        mid = time.perf_counter()
        for h in handles:
            h.poll()
        while not all(h.poll() for h in handles):
            pass
        mid2 = time.perf_counter()
        for h in handles:
            h.wait()
        end = time.perf_counter()
        enq.append((mid - start) / count * 1e6)
        fin.append((end - mid2) / count * 1e6)
    print(f"{label + ': enqueue':58s} {min(enq):8.2f} ({statistics.median(enq):.2f}) us")
    print(f"{label + ': wait (output built)':58s} {min(fin):8.2f} ({statistics.median(fin):.2f}) "
          "us", flush=True)


def tensorflow_rows(count, repeat, elements):
    import tensorflow as tf
    from tensorflow.experimental import dlpack as tf_dlpack

    from runrun.tensorflow.tensor_bridge import ADAPTER

    base = tf.ones([elements], tf.float32)
    same = [base] * count
    make_same = lambda n: same  # noqa: E731
    make_fresh = lambda n: [base + float(i) for i in range(n)]  # noqa: E731
    host = np.ones(elements, np.float32)
    print(f"TensorFlow {tf.__version__}")
    timed("tf: to_dlpack(x)", make_same, tf_dlpack.to_dlpack, count, repeat)
    timed("tf: to_dlpack(x), fresh", make_fresh, tf_dlpack.to_dlpack, count, repeat)
    timed("tf: memoryview(x) (buffer protocol)", make_same, memoryview, count, repeat)
    timed("tf: memoryview(x), fresh", make_fresh, memoryview, count, repeat)
    timed("tf: x._numpy()", make_same, lambda x: x._numpy(), count, repeat)
    timed("tf: x.shape, x.dtype", make_same, lambda x: (x.shape, x.dtype), count, repeat)
    timed("tf: from_dlpack(numpy capsule) (adopt a host buffer)", make_same,
          lambda x: tf_dlpack.from_dlpack(host.__dlpack__()), count, repeat)
    timed("tf: tf.constant(numpy) (copy)", make_same, lambda x: tf.constant(host), count, repeat)
    timed("tf: adapter.empty_like(x)", make_same, ADAPTER.empty_like, count, repeat)
    allreduce_steps("tf: common.allreduce", ADAPTER, make_same, count, repeat)
    allreduce_steps("tf: common.allreduce, fresh", ADAPTER, make_fresh, count, repeat)


def jax_rows(count, repeat, elements):
    import jax
    import jax.numpy as jnp

    from runrun.jax.tensor_bridge import ADAPTER

    base = jnp.ones([elements], jnp.float32)
    same = [base] * count

    def make_fresh(n):
        xs = [base + float(i) for i in range(n)]
        for x in xs:
            x.block_until_ready()
        return xs

    make_same = lambda n: same  # noqa: E731
    host = np.ones(elements, np.float32)
    print(f"JAX {jax.__version__}")
    timed("jax: x.__dlpack__()", make_same, lambda x: x.__dlpack__(), count, repeat)
    timed("jax: x.__dlpack__(), fresh", make_fresh, lambda x: x.__dlpack__(), count, repeat)
    timed("jax: np.asarray(x)", make_same, np.asarray, count, repeat)
    timed("jax: np.asarray(x), fresh", make_fresh, np.asarray, count, repeat)
    timed("jax: memoryview(x) (buffer protocol)", make_same, memoryview, count, repeat)
    timed("jax: memoryview(x), fresh", make_fresh, memoryview, count, repeat)
    timed("jax: x.unsafe_buffer_pointer() (no readiness wait)", make_same,
          lambda x: x.unsafe_buffer_pointer(), count, repeat)
    timed("jax: jnp.asarray(numpy) (a jax.Array of host data)", make_same,
          lambda x: jnp.asarray(host), count, repeat)
    timed("jax: jax.device_put(numpy)", make_same, lambda x: jax.device_put(host), count,
          repeat)
    try:
        from jax._src import core as jax_core
        from jax._src.lib import xla_client as xc
        device = jax.devices("cpu")[0]
        sharding = jax.sharding.SingleDeviceSharding(device)
        aval = jax_core.ShapedArray(host.shape, host.dtype)
        timed("jax: xc.batched_device_put(numpy) (what device_put ends in)", make_same,
              lambda x: xc.batched_device_put(aval, sharding, [host], [device], False),
              count, repeat)
    except (ImportError, AttributeError) as e:
        print(f"jax: xc.batched_device_put unavailable ({e})")
    timed("jax: x + 1 (one eager op, for scale)", make_same, lambda x: x + 1.0, count, repeat)
    allreduce_steps("jax: common.allreduce", ADAPTER, make_same, count, repeat)
    allreduce_steps("jax: common.allreduce, fresh", ADAPTER, make_fresh, count, repeat)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--frameworks", default="tensorflow,jax")
    p.add_argument("--count", type=int, default=100)
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--bytes", type=int, default=1024)
    args = p.parse_args()
    basics.init()
    elements = max(1, args.bytes // 4)
    for framework in filter(None, args.frameworks.split(",")):
        {"tensorflow": tensorflow_rows, "jax": jax_rows}[framework](args.count, args.repeat,
                                                                    elements)
    basics.shutdown()


if __name__ == "__main__":
    main()
