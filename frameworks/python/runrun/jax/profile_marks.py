"""runrun --profile for JAX (docs/profiling.md): the hooks of runrun.common.profile around a
gradient allreduce and at the end of an optimizer update, eagerly and inside jax.jit. Used by
runrun.jax's allreduce_gradients/DistributedOptimizer and by runrun.keras on the JAX backend.

Inside jax.jit Python runs at trace time only, so the per-step hooks must run from the program:
- gradients ready + wait begins, wait ends: the grouped gradient allreduce marks them itself
  (reduce() below lets jit_ops.grouped_allreduce claim the hooks while it is traced). On the
  native path (ffi_ops.py) the XLA FFI handler reads the clock when it starts and when the op
  completed and keeps (start, end, bytes) in native memory: no Python runs. Through the
  io_callback path the allreduce's own host callback calls the hooks around the op.
  The allreduce takes the gradients as operands, so it starts once the backward pass is done.
- step end: one ordered io_callback, which takes one element of every updated array (a data
  dependence: it runs once the update is computed); StepProfiler.step_end() first replays the
  native records into the hooks (gradient_ready/wait_begin at the start, wait_end at the end):
  add_source(replay_native), so a loop that ends its steps with profile_step() gets them too.
When no runrun grouped allreduce claims the hooks (a replaced allreduce function), reduce()
warns once per trace and those steps record no communication.
The gradients go in one grouped allreduce after the backward pass, so nothing overlaps it:
hidden is 0 by construction and communication = exposed wait. Eagerly, the hooks are plain
calls after jax.block_until_ready (JAX dispatches asynchronously; without it they would time
the dispatch, not the work).
Cost: with profiling on, one host callback per step inside jit (the step end; two markers and
the native clock reads are gone); off, nothing is traced or called.
Thread-safety: inside jit the hooks run on XLA's callback thread, one at a time, in order; the
native records take a mutex; claim() state is per tracing thread.
"""

import threading
import warnings

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback

from runrun.common import loader, profile

_tracing = threading.local()  # .hooks: offered to the grouped allreduce traced in reduce()


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


def claim():
    """The hooks, to the grouped allreduce traced inside reduce() (once): it then marks the
    gradients ready/wait itself. None otherwise."""
    hooks = getattr(_tracing, "hooks", None)
    _tracing.hooks = None
    return hooks


def replay_native(hooks):
    """Feeds the native XLA FFI handler's records of profiled allreduces into the hooks."""
    take = getattr(loader.core(), "xla_ffi_profile_take", None)
    for start, end, size in (take() if take is not None else ()):
        hooks.gradient_ready(size, at=start)
        hooks.wait_begin(at=start)
        hooks.wait_end(at=end)


def reduce(leaves, allreduce):
    """allreduce(leaves) (one grouped allreduce of the gradients) between the hooks when
    profiling: gradients ready + wait begins, then the wait ends."""
    hooks = profile.active()
    if hooks is None or not leaves:
        return allreduce(leaves)
    if _traced(leaves):
        hooks.add_source(replay_native)  # also for a loop that ends steps with profile_step()
        _tracing.hooks = hooks
        try:
            reduced = allreduce(leaves)
        finally:
            claimed = getattr(_tracing, "hooks", None) is None
            _tracing.hooks = None
        if not claimed:  # the allreduce traced no runrun grouped allreduce: nothing to time
            warnings.warn("runrun --profile: the gradient allreduce traced inside jax.jit is "
                          "not runrun's grouped_allreduce; its steps record no communication",
                          RuntimeWarning, stacklevel=3)
        return reduced
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
        _mark(list(values), hooks.step_end)  # step_end() replays the native records first
