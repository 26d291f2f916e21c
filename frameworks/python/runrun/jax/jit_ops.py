"""The collectives inside jax.jit (and any other trace: jax.lax.scan bodies, jax.checkpoint):
each op is one custom call to runrun's native XLA FFI handler (ffi_ops.py, the default), or,
as a fallback (RUNRUN_JAX_JIT_PATH=callback, or no native handler), one
jax.experimental.io_callback(ordered=True) whose host function runs the eager op (eager.py
semantics) on XLA's callback thread and returns numpy buffers that XLA copies into the op's
outputs. Both carry the same ordered effect, so what follows holds for both.

Why ordered: XLA may reorder or run concurrently operations without a data dependence between
them. A blocking collective must be started in the same order on every rank, or two ranks each
wait in a different op and the job hangs (until RUNRUN_COLLECTIVE_TIMEOUT). Ordered callbacks
thread one token through the program, so the ops of a jitted function, and of successive calls
of it, run in program order, the same on every rank.
Naming: the name is chosen when the op runs, not when it is traced (an unnamed op is
"<op>.jit.<n>" natively, "<op>.noname.<n>" from runrun.common.names through the callback, in
call order), so a retrace on one rank cannot shift names.
Shapes must be static inside jit: allgather and alltoall there need the same first dimension
on every rank (checked when the op runs); reducescatter's output rows follow from the rank.
Checks that need no other rank (dtype, argument types) run at trace time and raise
InvalidArgumentError (a ValueError) there; errors found when the op runs (shapes that differ
between ranks, a lost peer) surface from the jitted call as jax.errors.JaxRuntimeError carrying
runrun's message.
Thread-safety: the host functions run on XLA's callback thread; the runtime is thread-safe.
"""

import functools

import jax
import numpy as np
from jax.experimental import io_callback

from runrun.common import collectives as _c
from runrun.common import names
from runrun.common.exceptions import InvalidArgumentError
from runrun.common.ops import Adasum, Average, Sum, resolve_op
from runrun.common.process_sets import process_set_id
from runrun.jax import ffi_ops, fusion, profile_marks
from runrun.jax.tensor_bridge import HOST_ADAPTER as _H
from runrun.jax.tensor_bridge import check_dtype, op_label


def _struct(x):
    return jax.ShapeDtypeStruct(x.shape, x.dtype)


def _jit_name(op, name, process_set):
    """An unnamed op's name on the callback path, taken when it runs: `<op>.jit.noname.<n>`,
    counted apart from eager ops, which the Python thread may run while XLA's callback thread
    runs jit ones (one shared counter would be drawn in a different order per rank)."""
    return names.op_name(f"{op}.jit", name,
                         0 if name is not None else process_set_id(process_set))


def _call(host, results, *args):
    return io_callback(host, results, *args, ordered=True)


def _allreduce(x, op, name, prescale_factor, postscale_factor, process_set):
    if ffi_ops.enabled():
        return ffi_ops.call(ffi_ops.ALLREDUCE, [_struct(x)], [x], name, op, prescale_factor,
                            postscale_factor, process_set_id(process_set))[0]

    def host(array):
        run_name = _jit_name("allreduce", name, process_set)
        return _c.allreduce(_H, array, None, run_name, op, prescale_factor, postscale_factor,
                            process_set, False).wait()

    return _call(host, _struct(x), x)


@functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
def _differentiable_allreduce(x, params):
    return _allreduce(x, *params)


def _allreduce_fwd(x, params):
    return _allreduce(x, *params), None


def _allreduce_bwd(params, _residual, cotangent):
    """Horovod's gradient of an allreduce: the allreduce of the cotangent with the same op and
    scale factors (Average, Sum and Adasum only)."""
    op, name, prescale_factor, postscale_factor, process_set = params
    if op not in (Average, Sum, Adasum):
        raise InvalidArgumentError(
            f"{op_label('allreduce', name)}: the gradient is defined for op=Average, op=Sum and "
            f"op=Adasum, not {op.name}")
    grad_name = None if name is None else f"{name}.grad"
    return (_allreduce(cotangent, op, grad_name, prescale_factor, postscale_factor,
                       process_set),)


_differentiable_allreduce.defvjp(_allreduce_fwd, _allreduce_bwd)


def allreduce(x, op, name, prescale_factor, postscale_factor, process_set):
    """Differentiable (reverse mode, as Horovod's allreduce: see _allreduce_bwd)."""
    op = resolve_op(op)
    check_dtype(x.dtype, "allreduce", name)
    return _differentiable_allreduce(
        x, (op, name, float(prescale_factor), float(postscale_factor), process_set))


def grouped_allreduce(xs, op, name, prescale_factor, postscale_factor, process_set):
    """One callback for the whole list: the arrays travel packed, one buffer per dtype
    (fusion.py), reduced as one grouped op."""
    op = resolve_op(op)
    for x in xs:
        check_dtype(x.dtype, "grouped_allreduce", name)
    groups, shapes = fusion.layout(xs, separate=op == Adasum)
    flats = fusion.pack(xs, groups)
    # runrun --profile: the op itself marks the step's gradients ready/wait (profile_marks.py)
    hooks = profile_marks.claim()
    if flats and ffi_ops.enabled():
        profiler_id = hooks.id if hooks is not None else 0
        reduced = ffi_ops.call(ffi_ops.GROUPED_ALLREDUCE, [_struct(f) for f in flats], flats,
                               name, op, prescale_factor, postscale_factor,
                               process_set_id(process_set), profile=profiler_id)
        return fusion.unpack(list(reduced), groups, shapes)
    size = profile_marks.nbytes(flats) if hooks is not None else 0

    def host(*arrays):
        run_name = _jit_name("grouped_allreduce", name, process_set)
        if hooks is not None:
            now = hooks.now()
            hooks.gradient_ready(size, at=now)
            hooks.wait_begin(at=now)
        reduced = _c.grouped_allreduce(_H, list(arrays), None, run_name, op, prescale_factor,
                                       postscale_factor, process_set, False).wait()
        if hooks is not None:
            hooks.wait_end()
        return reduced

    return fusion.unpack(_call(host, [_struct(f) for f in flats], *flats), groups, shapes)


def broadcast(x, root_rank, name, process_set):
    check_dtype(x.dtype, "broadcast", name)
    root_rank = int(root_rank)
    if ffi_ops.enabled():
        return ffi_ops.call(ffi_ops.BROADCAST, [_struct(x)], [x], name,
                            process_set=process_set_id(process_set), root_rank=root_rank)[0]

    def host(array):
        run_name = _jit_name("broadcast", name, process_set)
        return _c.broadcast(_H, array, root_rank, run_name, process_set, False).wait()

    return _call(host, _struct(x), x)


def _first_dim(x, op, name):
    if x.ndim == 0:
        raise InvalidArgumentError(
            f"{op_label(op, name)}: a 0-dimensional array has no first dimension; reshape it "
            "to [1]")
    return x.shape[0]


def _same_shape(op, name, out, expected):
    if tuple(out.shape) != tuple(expected):
        raise InvalidArgumentError(
            f"{op_label(op, name)} inside jax.jit: the result has shape {tuple(out.shape)} but "
            f"the traced program expects {tuple(expected)}: inside jit every rank must pass the "
            "same first dimension (uneven sizes work outside jit)")
    return out


def allgather(x, name, process_set):
    check_dtype(x.dtype, "allgather", name)
    rows = _first_dim(x, "allgather", name)
    shape = (rows * process_set.size(),) + tuple(x.shape[1:])
    if ffi_ops.enabled():
        return ffi_ops.call(ffi_ops.ALLGATHER, [jax.ShapeDtypeStruct(shape, x.dtype)], [x],
                            name, process_set=process_set_id(process_set))[0]

    def host(array):
        run_name = _jit_name("allgather", name, process_set)
        out = _c.allgather(_H, array, run_name, process_set).wait()
        return _same_shape("allgather", name, out, shape)

    return _call(host, jax.ShapeDtypeStruct(shape, x.dtype), x)


def alltoall(x, splits, name, process_set):
    check_dtype(x.dtype, "alltoall", name)
    if splits is not None:
        raise InvalidArgumentError(
            f"{op_label('alltoall', name)} inside jax.jit: explicit splits give an output "
            "whose shape depends on the other ranks, which jit cannot trace; call it outside "
            "jit or with splits=None (equal splits)")
    rows = _first_dim(x, "alltoall", name)
    if rows % process_set.size():
        raise InvalidArgumentError(
            f"{op_label('alltoall', name)}: splits=None needs a first dimension divisible by "
            f"the set size {process_set.size()}, got {rows}")
    if ffi_ops.enabled():
        return ffi_ops.call(ffi_ops.ALLTOALL, [_struct(x)], [x], name,
                            process_set=process_set_id(process_set))[0]

    def host(array):
        run_name = _jit_name("alltoall", name, process_set)
        out, _received = _c.alltoall(_H, array, None, run_name, process_set).wait()
        return _same_shape("alltoall", name, out, x.shape)

    return _call(host, _struct(x), x)


def reducescatter(x, op, name, prescale_factor, postscale_factor, process_set):
    op = _c._reducescatter_op(op)
    check_dtype(x.dtype, "reducescatter", name)
    rows = _first_dim(x, "reducescatter", name)
    n, r = process_set.size(), process_set.rank()
    shape = (rows // n + (1 if r < rows % n else 0),) + tuple(x.shape[1:])
    if ffi_ops.enabled():
        return ffi_ops.call(ffi_ops.REDUCESCATTER, [jax.ShapeDtypeStruct(shape, x.dtype)], [x],
                            name, op, prescale_factor, postscale_factor,
                            process_set_id(process_set))[0]

    def host(array):
        run_name = _jit_name("reducescatter", name, process_set)
        out = _c.reducescatter(_H, array, run_name, op, process_set, prescale_factor,
                               postscale_factor).wait()
        return np.asarray(out)

    return _call(host, jax.ShapeDtypeStruct(shape, x.dtype), x)
