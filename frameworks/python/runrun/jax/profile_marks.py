"""runrun --profile for JAX (docs/profiling.md): the hooks of runrun.common.profile around a
gradient allreduce and at the end of an optimizer update, eagerly and inside jax.jit. Used by
runrun.jax's allreduce_gradients/DistributedOptimizer and by runrun.keras on the JAX backend.

Inside jax.jit Python runs at trace time only, so the per-step hooks must run from the program.
On the native path (ffi_ops.py) no Python and no host callback runs per step:
- gradients ready + wait begins, wait ends: the grouped gradient allreduce marks them itself
  (reduce() below lets jit_ops.grouped_allreduce claim the hooks while it is traced): the XLA
  FFI handler reads the clock when it starts and when the op completed. The allreduce takes
  the gradients as operands, so it starts once the backward pass is done.
- step end: the "runrun_profile_mark" custom call (ffi_ops.mark), which takes the updated
  arrays as operands (it runs once the update is computed) and reads the clock.
Both go into a native ring (frameworks/csrc/xla_ffi_profile.h) tagged with the profiler's id;
drain_native() takes them and feeds them to their profiler (StepProfiler.add_source/feed),
which builds the step records lazily: a daemon thread (_Drainer) waits, GIL released, until
the ring holds a batch of steps (the profiler's --profile-interval, else 256) or a second has
passed, and drains; profile_step(), records(), shutdown and exit drain too.
Through the io_callback path (RUNRUN_JAX_JIT_PATH=callback, or no native handler) the
allreduce's own host callback calls the hooks around the op and the step end is one ordered
io_callback taking one element of every updated array.
When no runrun grouped allreduce claims the hooks (a replaced allreduce function), reduce()
warns once per trace and those steps record no communication.
The gradients go in one grouped allreduce after the backward pass, so nothing overlaps it:
hidden is 0 by construction and communication = exposed wait. Eagerly, the hooks are plain
calls after jax.block_until_ready (JAX dispatches asynchronously; without it they would time
the dispatch, not the work).
Cost: with profiling on, inside jit, three clock reads (allreduce start and end, step end) and
two ring entries per step on the native path (one host callback per step on the io_callback path);
off, nothing is traced.
Thread-safety: the native ring takes a mutex; drain_native() a lock (one take-and-feed at a
time, so records reach each profiler in order); claim() state is per tracing thread.
"""

import atexit
import threading
import warnings
import weakref

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback

from runrun.common import loader, profile
from runrun.jax import ffi_ops

_tracing = threading.local()  # .hooks: offered to the grouped allreduce traced in reduce()
_profilers = weakref.WeakValueDictionary()  # id -> StepProfiler with native records
_take_lock = threading.Lock()


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


def native(hooks):
    """True when the jit step records `hooks`' moments natively (registers the profiler)."""
    if not ffi_ops.enabled():
        return False
    if hooks.id not in _profilers:
        _profilers[hooks.id] = hooks
        hooks.add_source(drain_native)
        _Drainer.start(hooks.interval)
    return True


def drain_native(_profiler=None):
    """Takes the native records and feeds each to its profiler (a StepProfiler source)."""
    take = getattr(loader.core(), "xla_ffi_profile_take", None)
    if take is None:
        return
    with _take_lock:
        records, dropped = take()
        events = {}
        for profiler_id, kind, start, end, size in records:
            out = events.setdefault(profiler_id, [])
            if kind == 0:  # an allreduce
                out += [(start, "gradient_ready", size), (start, "wait_begin", None),
                        (end, "wait_end", None)]
            else:
                out.append((end, "step_end", None))
        for profiler_id, out in events.items():
            target = _profilers.get(profiler_id)
            if target is not None:
                target.feed(out)
    if dropped:
        warnings.warn(f"runrun --profile: {dropped} records of jitted steps were lost (the "
                      "native ring was full: Python did not take them in time)", RuntimeWarning)


class _Drainer:
    """The daemon thread that drains the native records when a batch is due (module comment);
    stopped at exit before the profilers' final tables."""

    _thread = None
    _stop = False

    @classmethod
    def start(cls, interval):
        core = loader.core()
        core.xla_ffi_profile_set_batch(min(interval or 256, 256))
        if cls._thread is None:
            cls._thread = threading.Thread(target=cls._run, name="runrun-profile-drain",
                                           daemon=True)
            cls._thread.start()
            atexit.register(cls.stop)  # runs before profile's close(): registered later

    @classmethod
    def _run(cls):
        core = loader.core()
        while not cls._stop:
            core.xla_ffi_profile_wait(1.0)
            if cls._stop:
                break
            try:
                drain_native()
                for target in list(_profilers.values()):
                    target.drain()
            except Exception as err:  # noqa: BLE001  (a profile must not end the job)
                warnings.warn(f"runrun --profile: draining the jit records failed: {err}",
                              RuntimeWarning)

    @classmethod
    def stop(cls):
        cls._stop = True
        loader.core().xla_ffi_profile_wake()
        if cls._thread is not None:
            cls._thread.join(timeout=10)


def claim():
    """The hooks, to the grouped allreduce traced inside reduce() (once): it then marks the
    gradients ready/wait itself. None otherwise."""
    hooks = getattr(_tracing, "hooks", None)
    _tracing.hooks = None
    return hooks


def reduce(leaves, allreduce):
    """allreduce(leaves) (one grouped allreduce of the gradients) between the hooks when
    profiling: gradients ready + wait begins, then the wait ends."""
    hooks = profile.active()
    if hooks is None or not leaves:
        return allreduce(leaves)
    if _traced(leaves):
        native(hooks)  # registers it: also for a loop that ends steps with profile_step()
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
    if hooks is None:
        return
    values = list(values)
    if _traced(values) and native(hooks):
        ffi_ops.mark(values, hooks.id)
    else:
        _mark(values, hooks.step_end)
