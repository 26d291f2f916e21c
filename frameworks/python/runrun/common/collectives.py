"""Every collective, once, for every framework: argument checks, op naming, DLPack in and out,
output allocation and handles. An adapter (runrun.common.tensor_protocol.TensorAdapter) says how
its framework's tensors are checked, exported, allocated and re-imported; runrun.torch's ops are
these functions with its adapter bound (and so would a JAX or TensorFlow adapter's be).

Each *_async function checks its tensors, enqueues the op and returns a handle at once
(runrun.common.handles); handle.wait() / synchronize(handle) returns the output. Inputs must
stay unmodified until then. Names, defaults and semantics follow Horovod. The per-tensor ops
first hand their whole call to the extension (csrc/fast_call.h, fast_enqueue.h): allreduce is a
bound call (csrc/bound_call.h, the Python function its fallback), broadcast passes its
arguments to fast_broadcast_call. The extension takes the tensor itself and answers None for
anything it does not handle (the general path below then runs, with the adapter's checks and
messages) or NotImplemented for arguments it leaves to this layer to resolve.
Names are runrun.common.names': only an unnamed op's name needs its set's id (`set_id` below;
a named op's set is checked further on, where the op is enqueued).
Thread-safety: any thread may enqueue; each op name may have one op in flight.
"""

from runrun.common import bound_calls, loader, state
from runrun.common.exceptions import InvalidArgumentError, InvalidArgumentRuntimeError
from runrun.common.handles import new_handle
from runrun.common.names import group_names, op_name
from runrun.common.ops import Average, ReduceOp, Sum, resolve_op
from runrun.common.process_sets import ProcessSet, global_process_set, process_set_id
from runrun.common.tensor_protocol import _Buffer

_fast = None  # (fast_allreduce, fast_broadcast, fast_grouped_allreduce, fast_broadcast_call)
#               of runrun._core


def _fast_ops():
    global _fast
    if _fast is None:
        core = loader.core()
        core.fast_call_setup(ProcessSet)
        _fast = (core.fast_allreduce, core.fast_broadcast, core.fast_grouped_allreduce,
                 core.fast_broadcast_call)
    return _fast


def allreduce(adapter, tensor, average=None, name=None, op=None, prescale_factor=1.0,
              postscale_factor=1.0, process_set=global_process_set, in_place=False):
    """Starts an allreduce of `tensor`: into `tensor` itself when `in_place`, else into a new
    output (adapter.empty_like); wait() returns that tensor."""
    # Runs for what the bound call below (csrc/bound_call.h) did not take as it came (an unnamed
    # op, `average`, an odd argument, no runtime), or as is without the extension: resolves the
    # arguments, then tries the fast path with them.
    return _allreduce(adapter, tensor, average, name, op, prescale_factor, postscale_factor,
                      process_set, in_place, True)


def _allreduce_general(adapter, tensor, average, name, op, prescale_factor, postscale_factor,
                       process_set, in_place):
    """allreduce for a tensor the fast path did not take (its bound call's general path)."""
    return _allreduce(adapter, tensor, average, name, op, prescale_factor, postscale_factor,
                      process_set, in_place, False)


# The same function with its call in C (common/bound_calls.py); `allreduce` above is its fallback.
allreduce = bound_calls.allreduce(allreduce, _allreduce_general)


def _allreduce(adapter, tensor, average, name, op, prescale_factor, postscale_factor,
               process_set, in_place, fast):
    if average is not None or type(op) is not ReduceOp:
        op = resolve_op(op, average)  # (a ReduceOp as is: no call, once per tensor)
    set_id = 0 if name is not None else process_set_id(process_set)
    name = op_name("allreduce", name, set_id)
    # The fast path, when it may run now; otherwise every check runs in its usual order below
    # (not initialized, an odd or unregistered process set, a tensor it does not take).
    runtime = state.current()
    if fast and runtime is not None and type(process_set) is ProcessSet and \
            process_set.process_set_id is not None:
        handle = (_fast or _fast_ops())[0](
            runtime, tensor, None if in_place else adapter.fast_allocate, name, op,
            prescale_factor, postscale_factor, process_set.process_set_id,
            adapter.fast_export, None if in_place else adapter.fast_finish)
        if handle is not None:
            return handle
    if in_place:
        adapter.check(tensor, "allreduce_", name, in_place=True)
        capsule = adapter.to_dlpack(tensor)
        handle = state.runtime().allreduce(
            name, capsule, capsule, int(op), float(prescale_factor), float(postscale_factor),
            process_set_id(process_set))
        return new_handle(handle, tensor)
    tensor = adapter.check(tensor, "allreduce", name)
    output = adapter.empty_like(tensor)
    handle = state.runtime().allreduce(
        name, adapter.to_dlpack(tensor), _output_dlpack(adapter, output), int(op),
        float(prescale_factor), float(postscale_factor), process_set_id(process_set))
    return _output_handle(handle, adapter, output)


def grouped_allreduce(adapter, tensors, average=None, name=None, op=None, prescale_factor=1.0,
                      postscale_factor=1.0, process_set=global_process_set, in_place=False):
    """Starts one allreduce of a list of tensors, negotiated and completed as a unit (one call
    into the runtime for the whole list); wait() returns the list of outputs."""
    op = resolve_op(op, average)
    tensors = list(tensors)
    set_id = 0 if name is not None else process_set_id(process_set)
    names = group_names("grouped_allreduce", name, len(tensors), set_id)
    runtime = state.current()
    if runtime is not None and type(process_set) is ProcessSet and \
            process_set.process_set_id is not None:
        handle = (_fast or _fast_ops())[2](
            runtime, tensors, None if in_place else adapter.fast_allocate, names, op,
            prescale_factor, postscale_factor, process_set.process_set_id, adapter.fast_export,
            None if in_place else adapter.fast_grouped_finish)
        if handle is not None:
            return handle
    kind = "grouped_allreduce_" if in_place else "grouped_allreduce"
    inputs = [adapter.check(t, kind, n, in_place=in_place) for t, n in zip(tensors, names)]
    to_dlpack = adapter.to_dlpack
    in_caps = [to_dlpack(t) for t in inputs]
    if in_place:
        outputs, out_caps = inputs, in_caps
    else:
        outputs = [adapter.empty_like(t) for t in inputs]
        out_caps = [_output_dlpack(adapter, t) for t in outputs]
    handle = state.runtime().grouped_allreduce(
        names, in_caps, out_caps, int(op), float(prescale_factor), float(postscale_factor),
        process_set_id(process_set))
    finish = adapter.output_finish
    if not in_place and None in out_caps:  # outputs the runtime allocated (device tensors)
        return new_handle(handle, None, lambda h: [
            adapter.from_dlpack(h.take_output(i)) if o is None else
            o if finish is None else _finish_buffer(finish, h, o)
            for i, o in enumerate(outputs)])
    if in_place or finish is None:
        return new_handle(handle, None, lambda _h: list(outputs))
    return new_handle(handle, None, lambda h: [_finish_buffer(finish, h, o) for o in outputs])


def _finish_buffer(finish, _handle, output):
    return finish(_Buffer(output))


def _output_dlpack(adapter, output):
    """The output argument of an out-of-place op: None (adapter.empty_like's answer for a
    tensor on a device of an immutable framework, TF/JAX on CUDA) makes the runtime allocate
    the output on the input's device (c_api.h), which the handle then takes."""
    return None if output is None else adapter.to_dlpack(output)


def _output_handle(handle, adapter, output):
    if output is None:
        return new_handle(handle, None, _allocated(adapter, None))
    return new_handle(handle, output, adapter.output_finish)


def _allocated(adapter, count):
    """finish() for ops whose outputs the runtime allocated (allgather, reducescatter...)."""
    if count is None:
        return lambda h: adapter.from_dlpack(h.take_output(0))
    return lambda h: [adapter.from_dlpack(h.take_output(i)) for i in range(count)]


def allgather(adapter, tensor, name=None, process_set=global_process_set):
    """Starts an allgather along the first dimension (sizes may differ per rank)."""
    set_id = 0 if name is not None else process_set_id(process_set)
    name = op_name("allgather", name, set_id)
    tensor = adapter.check(tensor, "allgather", name)
    if adapter.ndim(tensor) == 0:  # Horovod's core refuses it: a RuntimeError there
        raise InvalidArgumentRuntimeError(
            f"allgather '{name}': a 0-dimensional tensor has no first dimension to gather "
            "along; reshape it to [1]")
    handle = state.runtime().allgather(name, adapter.to_dlpack(tensor),
                                        process_set_id(process_set))
    return new_handle(handle, None, _allocated(adapter, None))


def grouped_allgather(adapter, tensors, name=None, process_set=global_process_set):
    tensors = list(tensors)
    set_id = 0 if name is not None else process_set_id(process_set)
    names = group_names("grouped_allgather", name, len(tensors), set_id)
    inputs = [adapter.check(t, "grouped_allgather", n) for t, n in zip(tensors, names)]
    handle = state.runtime().grouped_allgather(
        names, [adapter.to_dlpack(t) for t in inputs], process_set_id(process_set))
    return new_handle(handle, None, _allocated(adapter, len(inputs)))


def broadcast(adapter, tensor, root_rank, name=None, process_set=global_process_set,
              in_place=False):
    """Starts a broadcast of root_rank's `tensor`: into `tensor` itself when `in_place`, else
    into a new tensor on every rank."""
    runtime = state.current()  # the whole call in C first, as allreduce's
    if runtime is not None:
        handle = (_fast or _fast_ops())[3](runtime, adapter, tensor, root_rank, name,
                                           process_set, in_place)
        if handle is not NotImplemented:
            return handle if handle is not None else _broadcast(
                adapter, tensor, root_rank, name, process_set, in_place, False)
    return _broadcast(adapter, tensor, root_rank, name, process_set, in_place, True)


def _broadcast(adapter, tensor, root_rank, name, process_set, in_place, fast):
    set_id = 0 if name is not None else process_set_id(process_set)
    name = op_name("broadcast", name, set_id)
    runtime = state.current()
    if fast and runtime is not None and type(process_set) is ProcessSet and \
            process_set.process_set_id is not None:
        handle = (_fast or _fast_ops())[1](
            runtime, tensor, None if in_place else adapter.fast_allocate, name, root_rank,
            process_set.process_set_id, adapter.fast_export,
            None if in_place else adapter.fast_finish)
        if handle is not None:
            return handle
    if in_place:
        adapter.check(tensor, "broadcast_", name, in_place=True)
        capsule = adapter.to_dlpack(tensor)
        handle = state.runtime().broadcast(name, capsule, capsule, int(root_rank),
                                            process_set_id(process_set))
        return new_handle(handle, tensor)
    tensor = adapter.check(tensor, "broadcast", name)
    output = adapter.empty_like(tensor)
    handle = state.runtime().broadcast(name, adapter.to_dlpack(tensor),
                                        _output_dlpack(adapter, output), int(root_rank),
                                        process_set_id(process_set))
    return _output_handle(handle, adapter, output)


def _splits_list(adapter, splits, name):
    if splits is None:
        return None
    try:
        return adapter.splits_to_list(splits)
    except (TypeError, ValueError):
        raise InvalidArgumentError(
            f"alltoall '{name}': splits must be a list or 1-D tensor of integers, got "
            f"{splits!r}") from None


def alltoall(adapter, tensor, splits=None, name=None, process_set=global_process_set):
    """Starts an alltoall: splits[p] first-dimension rows go to rank p (equal when None).
    wait() returns (output, received_splits) with received_splits an int32 tensor."""
    set_id = 0 if name is not None else process_set_id(process_set)
    name = op_name("alltoall", name, set_id)
    tensor = adapter.check(tensor, "alltoall", name)
    split_list = _splits_list(adapter, splits, name)
    handle = state.runtime().alltoall(name, adapter.to_dlpack(tensor), split_list,
                                       process_set_id(process_set))

    def finish(h):
        received = adapter.int32_tensor(h.received_splits())
        return adapter.from_dlpack(h.take_output(0)), received

    return new_handle(handle, None, finish)


def _reducescatter_op(op):
    op = resolve_op(op)
    if op not in (Average, Sum):  # Horovod's core refuses it: a RuntimeError there
        raise InvalidArgumentRuntimeError(
            f"reducescatter supports op=Average or op=Sum, got {op.name}")
    return op


def reducescatter(adapter, tensor, name=None, op=Average, process_set=global_process_set,
                  prescale_factor=1.0, postscale_factor=1.0):
    """Starts a reducescatter: reduces across ranks and returns this rank's slice of the first
    dimension (the first dim0 % size ranks get one extra row)."""
    op = _reducescatter_op(op)
    set_id = 0 if name is not None else process_set_id(process_set)
    name = op_name("reducescatter", name, set_id)
    tensor = adapter.check(tensor, "reducescatter", name)
    if adapter.ndim(tensor) == 0:  # Horovod's core refuses it: a RuntimeError there
        raise InvalidArgumentRuntimeError(
            f"reducescatter '{name}': a 0-dimensional tensor cannot be scattered; reshape it")
    handle = state.runtime().reducescatter(
        name, adapter.to_dlpack(tensor), int(op), float(prescale_factor),
        float(postscale_factor), process_set_id(process_set))
    return new_handle(handle, None, _allocated(adapter, None))


def grouped_reducescatter(adapter, tensors, name=None, op=Average,
                          process_set=global_process_set, prescale_factor=1.0,
                          postscale_factor=1.0):
    op = _reducescatter_op(op)
    tensors = list(tensors)
    set_id = 0 if name is not None else process_set_id(process_set)
    names = group_names("grouped_reducescatter", name, len(tensors), set_id)
    inputs = [adapter.check(t, "grouped_reducescatter", n) for t, n in zip(tensors, names)]
    handle = state.runtime().grouped_reducescatter(
        names, [adapter.to_dlpack(t) for t in inputs], int(op), float(prescale_factor),
        float(postscale_factor), process_set_id(process_set))
    return new_handle(handle, None, _allocated(adapter, len(inputs)))


def barrier(process_set=global_process_set):
    """Blocks until every rank of the set reached the barrier."""
    new_handle(state.runtime().barrier(process_set_id(process_set))).wait()


def join(process_set=global_process_set):
    """This rank ran out of data: until every rank joined, its allreduces contribute zeros.
    Returns the last rank to join."""
    handle = state.runtime().join(process_set_id(process_set))
    return new_handle(handle, None, lambda h: h.join_result()).wait()
