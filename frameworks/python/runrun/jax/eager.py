"""The eager collectives of runrun.jax: runrun.common.collectives with the jax adapter, each
waiting for its result (a new jax.Array; jax.Arrays are immutable, so there are no in-place
ops). Also what the callbacks of jit_ops.py run on XLA's callback thread inside jax.jit.
Names, defaults and semantics follow Horovod.
Thread-safety: any thread; each op name may have one op in flight.
"""

from runrun.common import collectives as _c
from runrun.common.ops import Adasum, Average, resolve_op
from runrun.common.process_sets import global_process_set
from runrun.jax import fusion
from runrun.jax.tensor_bridge import ADAPTER as _J
from runrun.jax.tensor_bridge import HOST_ADAPTER as _H
from runrun.jax.tensor_bridge import cuda_device


def allreduce(tensor, op=Average, name=None, prescale_factor=1.0, postscale_factor=1.0,
              process_set=global_process_set):
    return _c.allreduce(_J, tensor, None, name, op, prescale_factor, postscale_factor,
                        process_set, False).wait()


def grouped_allreduce(tensors, op=Average, name=None, prescale_factor=1.0,
                      postscale_factor=1.0, process_set=global_process_set):
    """Packed (fusion.py): one jitted pack, one grouped op over one buffer per dtype, one
    jitted unpack; the checks run on the arrays first, with their messages."""
    tensors = [_J.check(t, "grouped_allreduce", name) for t in tensors]
    if not tensors:
        return []
    groups, shapes = fusion.layout(tensors, separate=resolve_op(op) == Adasum)
    flats = fusion.pack_jit(tensors, groups)
    # Host flats: numpy outputs (_H); CUDA flats: device outputs the runtime allocates (_J).
    adapter = _H if cuda_device(flats[0]) is None else _J
    reduced = _c.grouped_allreduce(adapter, flats, None, name, op, prescale_factor,
                                   postscale_factor, process_set, False).wait()
    return fusion.unpack_jit(reduced, groups, shapes)


def allgather(tensor, name=None, process_set=global_process_set):
    return _c.allgather(_J, tensor, name, process_set).wait()


def grouped_allgather(tensors, name=None, process_set=global_process_set):
    return _c.grouped_allgather(_J, tensors, name, process_set).wait()


def broadcast(tensor, root_rank, name=None, process_set=global_process_set):
    return _c.broadcast(_J, tensor, root_rank, name, process_set, False).wait()


def alltoall(tensor, splits=None, name=None, process_set=global_process_set):
    """(output, received_splits)."""
    return _c.alltoall(_J, tensor, splits, name, process_set).wait()


def reducescatter(tensor, op=Average, name=None, prescale_factor=1.0, postscale_factor=1.0,
                  process_set=global_process_set):
    return _c.reducescatter(_J, tensor, name, op, process_set, prescale_factor,
                            postscale_factor).wait()


def grouped_reducescatter(tensors, op=Average, name=None, prescale_factor=1.0,
                          postscale_factor=1.0, process_set=global_process_set):
    return _c.grouped_reducescatter(_J, tensors, name, op, process_set, prescale_factor,
                                    postscale_factor).wait()
