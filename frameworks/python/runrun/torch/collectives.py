"""The asynchronous and in-place collectives of runrun.torch (no autograd; see autograd.py for
the differentiable out-of-place ops). Names, defaults and semantics follow horovod.torch.

Each is runrun.common.collectives' op with the torch adapter (tensor_bridge.ADAPTER): each
*_async function checks its tensors, enqueues the op and returns a handle at once;
synchronize(handle) returns the output. Inputs must stay unmodified until then.
In-place ops refuse a leaf tensor that requires grad while grad mode is enabled, as torch's own
in-place ops do (tensor_bridge.refuse_grad_leaf): they take IN_PLACE_ADAPTER, whose fast path
leaves a tensor that requires grad to the general path's check. DistributedOptimizer reduces
its gradients (never such leaves) with the gradient_* calls below: the plain adapter, no
Python call per gradient.
Thread-safety: any thread may enqueue; each op name may have one op in flight.
"""

from runrun.common import bound_calls
from runrun.common import collectives as _c
from runrun.common.ops import Average
from runrun.common.process_sets import global_process_set
from runrun.torch.tensor_bridge import ADAPTER as _T
from runrun.torch.tensor_bridge import IN_PLACE_ADAPTER as _TI

_reducescatter_op = _c._reducescatter_op  # op check shared with autograd.py


def allreduce_async(tensor, average=None, name=None, op=None, prescale_factor=1.0,
                    postscale_factor=1.0, process_set=global_process_set):
    """Starts an allreduce into a new tensor; synchronize() returns it."""
    # The bound call below runs this for what its fast path left as it came: resolve, then try
    # once more (common's bound allreduce would first repeat the attempt as it came).
    return _c._allreduce(_T, tensor, average, name, op, prescale_factor, postscale_factor,
                         process_set, False, True)


allreduce_async = bound_calls.allreduce(allreduce_async, _c._allreduce_general, adapter=_T,
                                        in_place=False)


def allreduce_async_(tensor, average=None, name=None, op=None, prescale_factor=1.0,
                     postscale_factor=1.0, process_set=global_process_set):
    """Starts an in-place allreduce of `tensor`; synchronize() returns `tensor`."""
    # The bound call below runs this for what its fast path left as it came: resolve, then try
    # once more (common's bound allreduce would first repeat the attempt as it came).
    return _c._allreduce(_TI, tensor, average, name, op, prescale_factor, postscale_factor,
                         process_set, True, True)


allreduce_async_ = bound_calls.allreduce(allreduce_async_, _c._allreduce_general,
                                          adapter=_TI, in_place=True)


def gradient_allreduce_async_(tensor, average=None, name=None, op=None, prescale_factor=1.0,
                              postscale_factor=1.0, process_set=global_process_set):
    """allreduce_async_ of a gradient: the per-gradient call of DistributedOptimizer's hooks."""
    return _c._allreduce(_T, tensor, average, name, op, prescale_factor, postscale_factor,
                         process_set, True, True)


# With its call in C, and the fast path's export in C too (a gradient never is a leaf that
# requires grad).
gradient_allreduce_async_ = bound_calls.allreduce(gradient_allreduce_async_,
                                                  _c._allreduce_general, adapter=_T,
                                                  in_place=True)


def allreduce_(tensor, average=None, name=None, op=None, prescale_factor=1.0,
               postscale_factor=1.0, process_set=global_process_set):
    """In-place allreduce; returns `tensor`."""
    return _c.allreduce(_TI, tensor, average, name, op, prescale_factor, postscale_factor,
                        process_set, True).wait()


def grouped_allreduce_async(tensors, average=None, name=None, op=None, prescale_factor=1.0,
                            postscale_factor=1.0, process_set=global_process_set):
    """Starts one allreduce of a list of tensors, negotiated and completed as a unit."""
    return _c.grouped_allreduce(_T, tensors, average, name, op, prescale_factor,
                                postscale_factor, process_set, False)


def grouped_allreduce_async_(tensors, average=None, name=None, op=None, prescale_factor=1.0,
                             postscale_factor=1.0, process_set=global_process_set):
    tensors = list(tensors)
    adapter = _T
    try:
        for tensor in tensors:
            if tensor.requires_grad:
                adapter = _TI  # the general path's check decides
                break
    except AttributeError:  # not a tensor: the general path's check says so
        pass
    return _c.grouped_allreduce(adapter, tensors, average, name, op, prescale_factor,
                                postscale_factor, process_set, True)


def gradient_grouped_allreduce_async_(tensors, average=None, name=None, op=None,
                                      prescale_factor=1.0, postscale_factor=1.0,
                                      process_set=global_process_set):
    """grouped_allreduce_async_ of gradients (DistributedOptimizer's groups)."""
    return _c.grouped_allreduce(_T, tensors, average, name, op, prescale_factor,
                                postscale_factor, process_set, True)


def grouped_allreduce_(tensors, average=None, name=None, op=None, prescale_factor=1.0,
                       postscale_factor=1.0, process_set=global_process_set):
    return grouped_allreduce_async_(tensors, average, name, op, prescale_factor,
                                    postscale_factor, process_set).wait()


def allgather_async(tensor, name=None, process_set=global_process_set):
    """Starts an allgather along the first dimension (sizes may differ per rank)."""
    return _c.allgather(_T, tensor, name, process_set)


def grouped_allgather_async(tensors, name=None, process_set=global_process_set):
    return _c.grouped_allgather(_T, tensors, name, process_set)


def broadcast_async(tensor, root_rank, name=None, process_set=global_process_set):
    """Starts a broadcast of root_rank's `tensor` into a new tensor on every rank."""
    return _c.broadcast(_T, tensor, root_rank, name, process_set, False)


def broadcast_async_(tensor, root_rank, name=None, process_set=global_process_set):
    """Starts an in-place broadcast: `tensor` receives root_rank's values."""
    return _c.broadcast(_TI, tensor, root_rank, name, process_set, True)


def broadcast_(tensor, root_rank, name=None, process_set=global_process_set):
    return broadcast_async_(tensor, root_rank, name, process_set).wait()


def alltoall_async(tensor, splits=None, name=None, process_set=global_process_set):
    """Starts an alltoall: splits[p] first-dimension rows go to rank p (equal when None).
    synchronize() returns (output, received_splits) with received_splits an int32 tensor."""
    return _c.alltoall(_T, tensor, splits, name, process_set)


def reducescatter_async(tensor, name=None, op=Average, process_set=global_process_set,
                        prescale_factor=1.0, postscale_factor=1.0):
    """Starts a reducescatter: reduces across ranks and returns this rank's slice of the first
    dimension (the first dim0 % size ranks get one extra row)."""
    return _c.reducescatter(_T, tensor, name, op, process_set, prescale_factor,
                            postscale_factor)


def grouped_reducescatter_async(tensors, name=None, op=Average, process_set=global_process_set,
                                prescale_factor=1.0, postscale_factor=1.0):
    return _c.grouped_reducescatter(_T, tensors, name, op, process_set, prescale_factor,
                                    postscale_factor)


def barrier(process_set=global_process_set):
    """Blocks until every rank of the set reached the barrier."""
    _c.barrier(process_set)


def join(device=-1, process_set=global_process_set):
    """This rank ran out of data: until every rank joined, its allreduces contribute zeros.
    Returns the last rank to join. `device` is accepted for Horovod compatibility."""
    del device
    return _c.join(process_set)
