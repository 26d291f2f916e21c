"""The differentiable out-of-place collectives of runrun.torch, as in horovod.torch.

Gradients follow Horovod's conventions, so training code ported from Horovod sees the same
numbers: allreduce's gradient is the same allreduce (op and scale factors) of the incoming
gradients; allgather's is this rank's slice of the averaged gradient; broadcast's is the
gradient averaged over the process set on the root (a global rank, as in the forward) and zero
elsewhere; alltoall's sends the gradients back along the received splits; reducescatter's
gathers the gradients over the set, times the set size for Sum, times the prescale and
postscale factors (Horovod's convention, which treats every rank's loss as one term of an
average). Adasum's gradient is the Adasum of the incoming gradients, as Horovod's (the same
op). Min, Max and Product have no gradient here (backward raises).
Thread-safety: as the async ops (collectives.py).
"""

import torch

from runrun.common import basics
from runrun.common.ops import Adasum, Average, Sum, resolve_op
from runrun.common.process_sets import global_process_set
from runrun.torch import collectives as c
from runrun.torch.compression import Compression


def _require_differentiable(op, what):
    if op not in (Average, Sum, Adasum):
        raise NotImplementedError(
            f"{what}: no gradient for op={op.name}; only Average, Sum and Adasum are "
            "differentiable")


class _Allreduce(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor, name, op, prescale_factor, postscale_factor, process_set):
        ctx.args = (op, prescale_factor, postscale_factor, process_set)
        return c.allreduce_async(tensor, None, name, op, prescale_factor, postscale_factor,
                                 process_set).wait()

    @staticmethod
    def backward(ctx, grad_output):
        op, pre, post, process_set = ctx.args
        _require_differentiable(op, "allreduce backward")
        grad = c.allreduce_async(grad_output, None, None, op, pre, post, process_set).wait()
        return grad, None, None, None, None, None


def allreduce(tensor, average=None, name=None, compression=Compression.none, op=None,
              prescale_factor=1.0, postscale_factor=1.0, process_set=global_process_set):
    """Allreduce into a new tensor (differentiable). `compression` is applied around the wire."""
    op = resolve_op(op, average)
    compressed, ctx = compression.compress(tensor)
    reduced = _Allreduce.apply(compressed, name, op, prescale_factor, postscale_factor,
                               process_set)
    return compression.decompress(reduced, ctx)


class _GroupedAllreduce(torch.autograd.Function):
    @staticmethod
    def forward(ctx, name, op, prescale_factor, postscale_factor, process_set, *tensors):
        ctx.args = (op, prescale_factor, postscale_factor, process_set)
        return tuple(c.grouped_allreduce_async(list(tensors), None, name, op, prescale_factor,
                                               postscale_factor, process_set).wait())

    @staticmethod
    def backward(ctx, *grad_outputs):
        op, pre, post, process_set = ctx.args
        _require_differentiable(op, "grouped_allreduce backward")
        grads = c.grouped_allreduce_async(list(grad_outputs), None, None, op, pre, post,
                                          process_set).wait()
        return (None, None, None, None, None, *grads)


def grouped_allreduce(tensors, average=None, name=None, compression=Compression.none, op=None,
                      prescale_factor=1.0, postscale_factor=1.0,
                      process_set=global_process_set):
    """Allreduce of a list of tensors as one unit (differentiable); returns a list."""
    op = resolve_op(op, average)
    pairs = [compression.compress(t) for t in tensors]
    reduced = _GroupedAllreduce.apply(name, op, prescale_factor, postscale_factor, process_set,
                                      *[p[0] for p in pairs])
    return [compression.decompress(t, p[1]) for t, p in zip(reduced, pairs)]


def _allgather_grad(grad_output, first_dim, process_set):
    """This rank's slice of the averaged gradient of an allgather output."""
    grad = c.allreduce_async(grad_output, op=Average, process_set=process_set).wait()
    dims = c.allgather_async(torch.tensor([first_dim], dtype=torch.int64),
                             process_set=process_set).wait()
    offset = int(dims[: process_set.rank()].sum().item())
    return grad.narrow(0, offset, first_dim)


class _Allgather(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor, name, process_set):
        ctx.first_dim = tensor.shape[0] if tensor.dim() > 0 else 0
        ctx.process_set = process_set
        return c.allgather_async(tensor, name, process_set).wait()

    @staticmethod
    def backward(ctx, grad_output):
        return _allgather_grad(grad_output, ctx.first_dim, ctx.process_set), None, None


def allgather(tensor, name=None, process_set=global_process_set):
    """Concatenation of every rank's `tensor` along the first dimension (differentiable)."""
    return _Allgather.apply(tensor, name, process_set)


class _GroupedAllgather(torch.autograd.Function):
    @staticmethod
    def forward(ctx, name, process_set, *tensors):
        ctx.first_dims = [t.shape[0] if t.dim() > 0 else 0 for t in tensors]
        ctx.process_set = process_set
        return tuple(c.grouped_allgather_async(list(tensors), name, process_set).wait())

    @staticmethod
    def backward(ctx, *grad_outputs):
        grads = [_allgather_grad(g, d, ctx.process_set)
                 for g, d in zip(grad_outputs, ctx.first_dims)]
        return (None, None, *grads)


def grouped_allgather(tensors, name=None, process_set=global_process_set):
    return list(_GroupedAllgather.apply(name, process_set, *tensors))


class _Broadcast(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor, root_rank, name, process_set):
        ctx.root_rank = root_rank
        ctx.process_set = process_set
        return c.broadcast_async(tensor, root_rank, name, process_set).wait()

    @staticmethod
    def backward(ctx, grad_output):
        grad = c.allreduce_async(grad_output, op=Average, process_set=ctx.process_set).wait()
        # root_rank is a global rank (see broadcast_async), not a rank within the set.
        if basics.rank() != ctx.root_rank:
            grad = grad * 0
        return grad, None, None, None


def broadcast(tensor, root_rank, name=None, process_set=global_process_set):
    """root_rank's `tensor` as a new tensor on every rank (differentiable)."""
    return _Broadcast.apply(tensor, root_rank, name, process_set)


class _Alltoall(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor, splits, name, process_set):
        output, received = c.alltoall_async(tensor, splits, name, process_set).wait()
        ctx.received = received
        ctx.process_set = process_set
        ctx.mark_non_differentiable(received)
        return output, received

    @staticmethod
    def backward(ctx, grad_output, _grad_received):
        grad, _ = c.alltoall_async(grad_output, ctx.received, process_set=ctx.process_set).wait()
        return grad, None, None, None


def alltoall(tensor, splits=None, name=None, process_set=global_process_set):
    """Sends splits[p] rows to rank p (equal splits when None); differentiable. Returns the
    received rows, plus the received splits (int32 tensor) when `splits` was given."""
    output, received = _Alltoall.apply(tensor, splits, name, process_set)
    return output if splits is None else (output, received)


def _scale_reducescatter_grad(grad_output, op, process_set, scale):
    """This rank's part of Horovod's reducescatter gradient, before the allgather: times the
    set size for Sum, times the product of the prescale and postscale factors."""
    if op == Sum:
        scale = scale * process_set.size()
    if scale != 1.0:
        grad_output = grad_output * scale
    return grad_output


class _Reducescatter(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor, name, op, process_set, prescale_factor, postscale_factor):
        ctx.args = (op, process_set, prescale_factor * postscale_factor)
        return c.reducescatter_async(tensor, name, op, process_set, prescale_factor,
                                     postscale_factor).wait()

    @staticmethod
    def backward(ctx, grad_output):
        op, process_set, scale = ctx.args
        grad = _scale_reducescatter_grad(grad_output, op, process_set, scale)
        grad = c.allgather_async(grad, process_set=process_set).wait()
        return grad, None, None, None, None, None


def reducescatter(tensor, name=None, compression=Compression.none, op=Average,
                  process_set=global_process_set, prescale_factor=1.0, postscale_factor=1.0):
    """Reduces across ranks; returns this rank's slice of the first dimension
    (differentiable)."""
    compressed, ctx = compression.compress(tensor)
    out = _Reducescatter.apply(compressed, name, c._reducescatter_op(op), process_set,
                               prescale_factor, postscale_factor)
    return compression.decompress(out, ctx)


class _GroupedReducescatter(torch.autograd.Function):
    @staticmethod
    def forward(ctx, name, op, process_set, prescale_factor, postscale_factor, *tensors):
        ctx.args = (op, process_set, prescale_factor * postscale_factor)
        return tuple(c.grouped_reducescatter_async(list(tensors), name, op, process_set,
                                                   prescale_factor, postscale_factor).wait())

    @staticmethod
    def backward(ctx, *grad_outputs):
        op, process_set, scale = ctx.args
        grads = [_scale_reducescatter_grad(g, op, process_set, scale) for g in grad_outputs]
        grads = c.grouped_allgather_async(grads, process_set=process_set).wait()
        return (None, None, None, None, None, *grads)


def grouped_reducescatter(tensors, name=None, compression=Compression.none, op=Average,
                          process_set=global_process_set, prescale_factor=1.0,
                          postscale_factor=1.0):
    """Reducescatter of a list of tensors as one unit (differentiable); returns a list."""
    pairs = [compression.compress(t) for t in tensors]
    outs = _GroupedReducescatter.apply(name, c._reducescatter_op(op), process_set,
                                       prescale_factor, postscale_factor,
                                       *[p[0] for p in pairs])
    return [compression.decompress(t, p[1]) for t, p in zip(outs, pairs)]
