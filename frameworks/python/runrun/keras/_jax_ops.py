"""The one place runrun.keras runs a collective on jax.Arrays inside jax.jit (Keras' JAX
trainer compiles the train step, so the DistributedOptimizer's gradient allreduce runs there).

Why one small file: runrun.jax (docs/jax.md) may offer a native path; pointing runrun.keras at
it means changing this file only. Today it is an ordered jax.experimental.io_callback: the
arrays come to the host as numpy, go through runrun.common's numpy adapter (one grouped
allreduce for all gradients) and back. Ordered, so collectives of one traced step run in
program order on every rank; the name is chosen at trace time, the same on every rank.
Thread-safety: the callback runs on JAX's host-callback thread; runrun ops may run anywhere.
"""

import jax
import numpy as np
from jax.experimental import io_callback

from runrun.common import collectives as _c
from runrun.common.names import op_name
from runrun.common.numpy_tensors import ADAPTER as _NP


def _to_wire(array):
    # numpy's DLPack export has no bfloat16: reduce bfloat16 gradients in float32.
    return array.astype(np.float32) if array.dtype.name == "bfloat16" else array


def grouped_allreduce(tensors, op, prescale_factor, postscale_factor, name, process_set):
    """The reduced arrays of `tensors` (jax.Arrays, traced or concrete), as one grouped
    allreduce over `process_set`."""
    tensors = list(tensors)
    if not tensors:
        return []
    name = op_name("grouped_allreduce", name, process_set)
    shapes = [jax.ShapeDtypeStruct(t.shape, t.dtype) for t in tensors]

    def host(*arrays):
        wire = [_to_wire(np.asarray(a)).copy(order="C") for a in arrays]
        reduced = _c.grouped_allreduce(_NP, wire, None, name, op, prescale_factor,
                                       postscale_factor, process_set).wait()
        return [r.astype(a.dtype, copy=False) for r, a in zip(reduced, arrays)]

    return list(io_callback(host, shapes, *tensors, ordered=True))
