"""runrun --profile for JAX (docs/profiling.md): the hooks of runrun.common.profile around a
gradient allreduce and at the end of an optimizer update, eagerly and inside jax.jit. Used by
runrun.jax's allreduce_gradients/DistributedOptimizer and by runrun.keras on the JAX backend.

Why markers: inside jax.jit Python runs at trace time only, so every hook that must run per
step is an ordered io_callback of its own: ordered, so the markers run in program order with
the allreduce's own ordered callback, and each takes one element of every array it follows
(a data dependence: the "gradients ready" marker runs once the whole backward pass is done,
the "step end" marker once the update is computed, not when XLA could first schedule them).
The gradients go in one grouped allreduce after the backward pass, so nothing overlaps it:
hidden is 0 by construction and communication = exposed wait. Eagerly, the hooks are plain
calls after jax.block_until_ready (JAX dispatches asynchronously; without it they would time
the dispatch, not the work).
Cost: with profiling on, three host callbacks per step (docs/benchmarks.md); off, nothing is
traced or called.
Thread-safety: inside jit the hooks run on XLA's callback thread, one at a time, in order.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback

from runrun.common import profile


def _traced(values):
    return any(isinstance(v, jax.core.Tracer) for v in values)


def nbytes(values):
    """The bytes of `values` (arrays or shape/dtype structs), from their static shapes."""
    return sum(int(np.prod(v.shape)) * jnp.dtype(v.dtype).itemsize for v in values)


def _probe(values):
    """One element of every non-empty array, as one small float32 array."""
    heads = [jnp.ravel(v)[:1].astype(jnp.float32) for v in values if np.prod(v.shape)]
    return jnp.concatenate(heads) if heads else jnp.zeros((1,), jnp.float32)


def _mark(values, function):
    """function() once `values` are computed: per run inside jit, now (after blocking) else."""
    if _traced(values):
        io_callback(lambda _probe_values: function(), None, _probe(values), ordered=True)
    else:
        jax.block_until_ready(values)
        function()


def reduce(leaves, allreduce):
    """allreduce(leaves) (one grouped allreduce of the gradients) between the hooks when
    profiling: gradients ready + wait begins, then the wait ends."""
    hooks = profile.active()
    if hooks is None or not leaves:
        return allreduce(leaves)
    size = nbytes(leaves)

    def ready():
        hooks.gradient_ready(size)
        hooks.wait_begin()

    _mark(leaves, ready)
    reduced = allreduce(leaves)
    _mark(reduced, hooks.wait_end)
    return reduced


def step_end(values):
    """Ends the profiled step once `values` (the update's results) are computed."""
    hooks = profile.active()
    if hooks is not None:
        _mark(list(values), hooks.step_end)
