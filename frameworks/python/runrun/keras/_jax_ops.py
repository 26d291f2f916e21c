"""The one place runrun.keras runs a collective on jax.Arrays inside jax.jit (Keras' JAX
trainer compiles the train step, so the DistributedOptimizer's gradient allreduce runs there).

Why one small file: the JAX side of every collective is runrun.jax's (docs/jax.md): inside jit
one native XLA custom call for the whole list (or, with RUNRUN_JAX_JIT_PATH=callback, one
ordered io_callback), packed into one buffer per dtype, ordered by JAX's IO token and named when
it runs so that every rank matches it; eagerly the same grouped op. This file only maps
runrun.keras's argument order onto runrun.jax.grouped_allreduce.
Thread-safety: as runrun.jax's collectives (inside jit they run on an XLA thread).
"""

import runrun.jax as _rj
from runrun.jax import profile_marks


def grouped_allreduce(tensors, op, prescale_factor, postscale_factor, name, process_set,
                      hooks=None):
    """The reduced arrays of `tensors` (jax.Arrays, traced or concrete), as one grouped
    allreduce over `process_set` (between the profile's markers when `hooks` is set)."""
    def reduce(xs):
        return _rj.grouped_allreduce(list(xs), op=op, name=name,
                                     prescale_factor=prescale_factor,
                                     postscale_factor=postscale_factor, process_set=process_set)

    return reduce(tensors) if hooks is None else profile_marks.reduce(list(tensors), reduce)


def step_end(hooks, variables):
    """Ends the profiled step once the variables' updated values are computed."""
    del hooks  # profile_marks finds the same profiler
    profile_marks.step_end([v.value for v in variables])
