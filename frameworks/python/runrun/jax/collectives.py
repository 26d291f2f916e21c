"""runrun.jax's public collectives: one function per op that works on concrete jax.Arrays
(eager.py: enqueue and wait) and on traced values inside jax.jit (jit_ops.py: a custom call
to runrun's XLA FFI handler per op, or an ordered io_callback as the fallback). Names,
arguments and defaults follow Horovod (horovod.torch's out-of-place ops); every op returns new
arrays (jax.Arrays are immutable).
Thread-safety: any thread; each op name may have one op in flight.
"""

import jax

from runrun.common import collectives as _c
from runrun.common.ops import Average
from runrun.common.process_sets import global_process_set
from runrun.jax import eager, jit_ops

_Tracer = jax.core.Tracer


def _traced(*values):
    return any(isinstance(v, _Tracer) for v in values)


def allreduce(tensor, op=Average, name=None, prescale_factor=1.0, postscale_factor=1.0,
              process_set=global_process_set):
    """The reduction (op: Average, Sum, Min, Max, Product) of `tensor` over the set's ranks,
    multiplied by prescale_factor before and postscale_factor after; a new array."""
    if _traced(tensor):
        return jit_ops.allreduce(tensor, op, name, prescale_factor, postscale_factor,
                                 process_set)
    return eager.allreduce(tensor, op, name, prescale_factor, postscale_factor, process_set)


def grouped_allreduce(tensors, op=Average, name=None, prescale_factor=1.0,
                      postscale_factor=1.0, process_set=global_process_set):
    """allreduce of a list of arrays, negotiated and reduced as one unit (one call into the
    runtime, and inside jit one callback, for the whole list); a list of new arrays."""
    tensors = list(tensors)
    if _traced(*tensors):
        return jit_ops.grouped_allreduce(tensors, op, name, prescale_factor,
                                         postscale_factor, process_set)
    return eager.grouped_allreduce(tensors, op, name, prescale_factor, postscale_factor,
                                   process_set)


def allgather(tensor, name=None, process_set=global_process_set):
    """The ranks' arrays concatenated along the first dimension, in rank order (outside jit
    the first dimension may differ per rank)."""
    if _traced(tensor):
        return jit_ops.allgather(tensor, name, process_set)
    return eager.allgather(tensor, name, process_set)


def grouped_allgather(tensors, name=None, process_set=global_process_set):
    """allgather of a list of arrays as one unit (outside jit only)."""
    return eager.grouped_allgather(list(tensors), name, process_set)


def broadcast(tensor, root_rank, name=None, process_set=global_process_set):
    """root_rank's `tensor` on every rank (a new array; shapes and dtypes must match)."""
    if _traced(tensor):
        return jit_ops.broadcast(tensor, root_rank, name, process_set)
    return eager.broadcast(tensor, root_rank, name, process_set)


def alltoall(tensor, splits=None, name=None, process_set=global_process_set):
    """Sends splits[p] first-dimension rows to rank p (equal parts when None) and returns the
    received rows in rank order; with `splits` given, (rows, received_splits) as Horovod does
    (received_splits an int32 array). Inside jit only splits=None."""
    if _traced(tensor):
        return jit_ops.alltoall(tensor, splits, name, process_set)
    output, received = eager.alltoall(tensor, splits, name, process_set)
    return output if splits is None else (output, received)


def reducescatter(tensor, op=Average, name=None, prescale_factor=1.0, postscale_factor=1.0,
                  process_set=global_process_set):
    """Reduces over the set (op Average or Sum) and returns this rank's rows of the first
    dimension (the first dim0 % size ranks get one extra row)."""
    if _traced(tensor):
        return jit_ops.reducescatter(tensor, op, name, prescale_factor, postscale_factor,
                                     process_set)
    return eager.reducescatter(tensor, op, name, prescale_factor, postscale_factor,
                               process_set)


def grouped_reducescatter(tensors, op=Average, name=None, prescale_factor=1.0,
                          postscale_factor=1.0, process_set=global_process_set):
    """reducescatter of a list of arrays as one unit (outside jit only)."""
    return eager.grouped_reducescatter(list(tensors), op, name, prescale_factor,
                                       postscale_factor, process_set)


def barrier(process_set=global_process_set):
    """Blocks until every rank of the set reached the barrier (outside jit)."""
    _c.barrier(process_set)


def join(process_set=global_process_set):
    """This rank ran out of data: until every rank joined, its allreduces contribute zeros.
    Returns the last rank to join (outside jit)."""
    return _c.join(process_set)
