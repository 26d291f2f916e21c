"""The asynchronous and in-place collectives of runrun.torch (no autograd; see autograd.py for
the differentiable out-of-place ops). Names, defaults and semantics follow horovod.torch.

Each *_async function checks its tensors, enqueues the op and returns a Handle at once;
synchronize(handle) returns the output. Inputs must stay unmodified until then.
Thread-safety: any thread may enqueue; each op name may have one op in flight.
"""

import torch

from runrun.common import basics
from runrun.common.exceptions import InvalidArgumentError
from runrun.common.ops import Average, Sum, resolve_op
from runrun.common.process_sets import global_process_set, process_set_id
from runrun.torch.handles import Handle
from runrun.torch.names import group_names, op_name
from runrun.torch.tensor_bridge import check_tensor, from_capsule, to_capsule


def _output_of(tensor):
    return lambda _core_handle: tensor


def _allocated_output(core_handle):
    return from_capsule(core_handle.take_output(0))


def allreduce_async(tensor, average=None, name=None, op=None, prescale_factor=1.0,
                    postscale_factor=1.0, process_set=global_process_set):
    """Starts an allreduce into a new tensor; synchronize() returns it."""
    op = resolve_op(op, average)
    name = op_name("allreduce", name, process_set)
    tensor = check_tensor(tensor, "allreduce", name)
    output = torch.empty_like(tensor, memory_format=torch.contiguous_format)
    handle = basics.runtime().allreduce(
        name, to_capsule(tensor), to_capsule(output), int(op), float(prescale_factor),
        float(postscale_factor), process_set_id(process_set))
    return Handle(handle, _output_of(output))


def allreduce_async_(tensor, average=None, name=None, op=None, prescale_factor=1.0,
                     postscale_factor=1.0, process_set=global_process_set):
    """Starts an in-place allreduce of `tensor`; synchronize() returns `tensor`."""
    op = resolve_op(op, average)
    name = op_name("allreduce", name, process_set)
    check_tensor(tensor, "allreduce_", name, in_place=True)
    capsule = to_capsule(tensor)
    handle = basics.runtime().allreduce(
        name, capsule, capsule, int(op), float(prescale_factor), float(postscale_factor),
        process_set_id(process_set))
    return Handle(handle, _output_of(tensor))


def allreduce_(tensor, average=None, name=None, op=None, prescale_factor=1.0,
               postscale_factor=1.0, process_set=global_process_set):
    """In-place allreduce; returns `tensor`."""
    return allreduce_async_(tensor, average, name, op, prescale_factor, postscale_factor,
                            process_set).wait()


def _grouped_allreduce(tensors, average, name, op, prescale_factor, postscale_factor,
                       process_set, in_place):
    op = resolve_op(op, average)
    tensors = list(tensors)
    names = group_names("grouped_allreduce", name, len(tensors), process_set)
    kind = "grouped_allreduce_" if in_place else "grouped_allreduce"
    inputs = [check_tensor(t, kind, n, in_place=in_place) for t, n in zip(tensors, names)]
    in_caps = [to_capsule(t) for t in inputs]
    if in_place:
        outputs, out_caps = inputs, in_caps
    else:
        outputs = [torch.empty_like(t, memory_format=torch.contiguous_format) for t in inputs]
        out_caps = [to_capsule(t) for t in outputs]
    handle = basics.runtime().grouped_allreduce(
        names, in_caps, out_caps, int(op), float(prescale_factor), float(postscale_factor),
        process_set_id(process_set))
    return Handle(handle, lambda _h: list(outputs))


def grouped_allreduce_async(tensors, average=None, name=None, op=None, prescale_factor=1.0,
                            postscale_factor=1.0, process_set=global_process_set):
    """Starts one allreduce of a list of tensors, negotiated and completed as a unit."""
    return _grouped_allreduce(tensors, average, name, op, prescale_factor, postscale_factor,
                              process_set, in_place=False)


def grouped_allreduce_async_(tensors, average=None, name=None, op=None, prescale_factor=1.0,
                             postscale_factor=1.0, process_set=global_process_set):
    return _grouped_allreduce(tensors, average, name, op, prescale_factor, postscale_factor,
                              process_set, in_place=True)


def grouped_allreduce_(tensors, average=None, name=None, op=None, prescale_factor=1.0,
                       postscale_factor=1.0, process_set=global_process_set):
    return grouped_allreduce_async_(tensors, average, name, op, prescale_factor,
                                    postscale_factor, process_set).wait()


def allgather_async(tensor, name=None, process_set=global_process_set):
    """Starts an allgather along the first dimension (sizes may differ per rank)."""
    name = op_name("allgather", name, process_set)
    tensor = check_tensor(tensor, "allgather", name)
    if tensor.dim() == 0:
        raise InvalidArgumentError(
            f"allgather '{name}': a 0-dimensional tensor has no first dimension to gather "
            "along; reshape it to [1]")
    handle = basics.runtime().allgather(name, to_capsule(tensor), process_set_id(process_set))
    return Handle(handle, _allocated_output)


def grouped_allgather_async(tensors, name=None, process_set=global_process_set):
    tensors = list(tensors)
    names = group_names("grouped_allgather", name, len(tensors), process_set)
    inputs = [check_tensor(t, "grouped_allgather", n) for t, n in zip(tensors, names)]
    handle = basics.runtime().grouped_allgather(
        names, [to_capsule(t) for t in inputs], process_set_id(process_set))
    count = len(inputs)
    return Handle(handle, lambda h: [from_capsule(h.take_output(i)) for i in range(count)])


def broadcast_async(tensor, root_rank, name=None, process_set=global_process_set):
    """Starts a broadcast of root_rank's `tensor` into a new tensor on every rank."""
    name = op_name("broadcast", name, process_set)
    tensor = check_tensor(tensor, "broadcast", name)
    output = torch.empty_like(tensor, memory_format=torch.contiguous_format)
    handle = basics.runtime().broadcast(name, to_capsule(tensor), to_capsule(output),
                                        int(root_rank), process_set_id(process_set))
    return Handle(handle, _output_of(output))


def broadcast_async_(tensor, root_rank, name=None, process_set=global_process_set):
    """Starts an in-place broadcast: `tensor` receives root_rank's values."""
    name = op_name("broadcast", name, process_set)
    check_tensor(tensor, "broadcast_", name, in_place=True)
    capsule = to_capsule(tensor)
    handle = basics.runtime().broadcast(name, capsule, capsule, int(root_rank),
                                        process_set_id(process_set))
    return Handle(handle, _output_of(tensor))


def broadcast_(tensor, root_rank, name=None, process_set=global_process_set):
    return broadcast_async_(tensor, root_rank, name, process_set).wait()


def _splits_list(splits, name):
    if splits is None:
        return None
    if isinstance(splits, torch.Tensor):
        splits = splits.tolist()
    try:
        return [int(s) for s in splits]
    except (TypeError, ValueError):
        raise InvalidArgumentError(
            f"alltoall '{name}': splits must be a list or 1-D tensor of integers, got "
            f"{splits!r}") from None


def alltoall_async(tensor, splits=None, name=None, process_set=global_process_set):
    """Starts an alltoall: splits[p] first-dimension rows go to rank p (equal when None).
    synchronize() returns (output, received_splits) with received_splits an int32 tensor."""
    name = op_name("alltoall", name, process_set)
    tensor = check_tensor(tensor, "alltoall", name)
    split_list = _splits_list(splits, name)
    handle = basics.runtime().alltoall(name, to_capsule(tensor), split_list,
                                       process_set_id(process_set))

    def finish(h):
        received = torch.tensor(h.received_splits(), dtype=torch.int32)
        return from_capsule(h.take_output(0)), received

    return Handle(handle, finish)


def _reducescatter_op(op):
    op = resolve_op(op)
    if op not in (Average, Sum):
        raise InvalidArgumentError(f"reducescatter supports op=Average or op=Sum, got {op.name}")
    return op


def reducescatter_async(tensor, name=None, op=Average, process_set=global_process_set,
                        prescale_factor=1.0, postscale_factor=1.0):
    """Starts a reducescatter: reduces across ranks and returns this rank's slice of the first
    dimension (the first dim0 % size ranks get one extra row)."""
    op = _reducescatter_op(op)
    name = op_name("reducescatter", name, process_set)
    tensor = check_tensor(tensor, "reducescatter", name)
    if tensor.dim() == 0:
        raise InvalidArgumentError(
            f"reducescatter '{name}': a 0-dimensional tensor cannot be scattered; reshape it")
    handle = basics.runtime().reducescatter(
        name, to_capsule(tensor), int(op), float(prescale_factor), float(postscale_factor),
        process_set_id(process_set))
    return Handle(handle, _allocated_output)


def grouped_reducescatter_async(tensors, name=None, op=Average, process_set=global_process_set,
                                prescale_factor=1.0, postscale_factor=1.0):
    op = _reducescatter_op(op)
    tensors = list(tensors)
    names = group_names("grouped_reducescatter", name, len(tensors), process_set)
    inputs = [check_tensor(t, "grouped_reducescatter", n) for t, n in zip(tensors, names)]
    handle = basics.runtime().grouped_reducescatter(
        names, [to_capsule(t) for t in inputs], int(op), float(prescale_factor),
        float(postscale_factor), process_set_id(process_set))
    count = len(inputs)
    return Handle(handle, lambda h: [from_capsule(h.take_output(i)) for i in range(count)])


def barrier(process_set=global_process_set):
    """Blocks until every rank of the set reached the barrier."""
    Handle(basics.runtime().barrier(process_set_id(process_set)), lambda _h: None).wait()


def join(device=-1, process_set=global_process_set):
    """This rank ran out of data: until every rank joined, its allreduces contribute zeros.
    Returns the last rank to join. `device` is accepted for Horovod compatibility."""
    del device
    handle = basics.runtime().join(process_set_id(process_set))
    return Handle(handle, lambda h: h.join_result()).wait()

