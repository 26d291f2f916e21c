"""Double buffering for DistributedOptimizer (ChainerMN's DoubleBufferingOptimizer).

Why: on a network slower than the backward pass, waiting for the gradient allreduce dominates
each step. With double buffering, step() at step t applies the averaged gradients of step t-1
(nothing at the first step) and starts the allreduce of step t's, which then runs during step
t+1's forward and backward; the update is one step stale, as in ChainerMN. flush() applies the
pending gradients (after the last step, before a checkpoint) so none is lost.
The gradients travel in their own buffers: after step() a parameter's .grad is the applied
(averaged, stale) gradient, never a tensor the runtime is still reducing, so zero_grad() and the
next backward cannot race with the allreduce.
Under runrun --profile (docs/profiling.md) the step at t reports the allreduce it waits for,
step t-1's, enqueued in step t-1 (hooks.carry): its communication spans the step boundary,
most of it hidden behind step t's forward and backward.
Thread-safety: as the optimizer (one training thread).
"""

import torch

from runrun.torch import collectives as c


class DoubleBuffer:
    """The pending allreduces of one DistributedOptimizer (its `_double_buffer`)."""

    def __init__(self, optimizer):
        self._opt = optimizer
        # (parameter, handle, compression context, sparse_dim or None), started by step()
        self._pending = []
        self._passes = {}

    @property
    def has_pending(self):
        return bool(self._pending)

    def on_grad_ready(self, p):
        """Counts backward passes: more than backward_passes_per_step before step() raises,
        as without double buffering."""
        passes = self._passes.get(p, 0) + 1
        if passes > self._opt.backward_passes_per_step:
            raise AssertionError(
                "Gradients were computed more than backward_passes_per_step times before "
                "call to step(). Increase backward_passes_per_step to accumulate gradients "
                "locally.")
        self._passes[p] = passes

    def _collect(self):
        """Waits for the pending allreduces: [(parameter, averaged gradient)]."""
        averaged = []
        for p, handle, ctx, sparse_dim in self._pending:
            grad = self._opt._compression.decompress(handle.wait(), ctx).to(p.dtype)
            if sparse_dim is not None:  # reduced dense, handed back sparse (SparseAdam)
                grad = grad.to_sparse(sparse_dim)
            averaged.append((p, grad))
        self._pending = []
        return averaged

    def _start(self):
        opt = self._opt
        pre, post = opt._scale_factors()
        for p in sorted(opt._requires_update, key=lambda q: opt._parameter_names[q]):
            grad = p.grad
            if grad is None:  # not computed on this rank: the others may have it
                grad = torch.zeros_like(p, memory_format=torch.contiguous_format)
            grad = grad.detach()
            sparse_dim = None
            if grad.is_sparse:
                sparse_dim = opt._sparse_params[p] = grad.sparse_dim()
                grad = grad.to_dense()
            compressed, ctx = opt._compression.compress(grad.contiguous())
            if opt._profiler is not None:
                opt._profiler.carry(compressed.numel() * compressed.element_size())
            handle = c.gradient_allreduce_async_(
                compressed, name=opt._parameter_names[p], op=opt.op, prescale_factor=pre,
                postscale_factor=post, process_set=opt.process_set)
            self._pending.append((p, handle, ctx, sparse_dim))

    def step(self, apply):
        """Applies step t-1's averaged gradients with apply() (the wrapped optimizer's step)
        and starts step t's allreduce. Returns apply()'s result, None at the first step."""
        profiler = self._opt._profiler
        if profiler is not None:
            profiler.wait_begin()
        averaged = self._collect()
        if profiler is not None:
            profiler.wait_end()
        self._start()
        for p in self._opt._requires_update:
            p.grad = None  # the reduced buffer now belongs to the runtime
        self._passes.clear()
        if not averaged:
            return None
        for p, grad in averaged:
            p.grad = grad
        return apply()

    def flush(self, apply):
        """Applies the pending averaged gradients, if any. True when it applied some. Not a
        step for runrun --profile: its wait and update count in the next step's compute."""
        averaged = self._collect()
        if self._opt._profiler is not None:
            self._opt._profiler.drop_carried()
        if not averaged:
            return False
        for p, grad in averaged:
            p.grad = grad
        apply()
        return True
