"""The public functions on the per-tensor path with their call in C (csrc/bound_call.h).

Why: a Python function between a script and the extension costs ~650-900 instructions per call,
a fifth of a whole allreduce enqueue from torch (issue 12, point 6;
docs/perf-notes/per-tensor-cost.md). A bound call binds its arguments as the function would,
takes the extension's fast path, and calls the function itself for anything else, so scripts see
the same behaviour, errors, name, doc and signature (functools.update_wrapper: `__wrapped__` is
the function). Without the extension (not built yet) the function stays as it is, and init()
raises the usual ImportError.
Thread-safety: called at import time.
"""

import functools

from runrun.common import loader, state
from runrun.common.process_sets import ProcessSet


def _core():
    try:
        core = loader.core()
    except ImportError:
        return None
    core.fast_call_setup(ProcessSet)  # the class the fast path takes process sets of
    return core


def allreduce(function, general, **fixed):
    """A C callable standing in for `function`, an allreduce whose parameters are among
    runrun.common.collectives.allreduce's; `fixed` gives those it lacks (adapter, in_place).
    general(adapter, tensor, average, name, op, prescale_factor, postscale_factor, process_set,
    in_place) is the path for a tensor the fast path does not take."""
    core = _core()
    if core is None:
        return function
    bound = core.bound_allreduce(function, general, fixed, state)  # reads state._runtime
    return functools.update_wrapper(bound, function)


def wait(function):
    """A C callable standing in for synchronize(handle): handle.wait() for the extension's
    Handle, `function(handle)` for anything else."""
    core = _core()
    if core is None:
        return function
    return functools.update_wrapper(core.bound_wait(function), function)
