"""The DistributedOptimizer for op=Adasum: Horovod's delta optimizer.

Why: Adasum combines model updates, not raw gradients: with op=Adasum horovod.torch's
DistributedOptimizer runs the wrapped optimizer's update of each parameter as soon as its
gradient is ready (locally, on that parameter alone), and Adasum-reduces the change it made
(the delta) instead of the gradient; step() waits for the reduced deltas and sets each
parameter to its value before the update plus the reduced delta. Scripts written for it observe
exactly that (e.g. Adam's per-parameter state advances in the backward pass), so runrun does
the same. synchronize() does nothing (the deltas are applied in step()); entering
skip_synchronize() raises, as Horovod's. A parameter without a gradient is updated with a zero
gradient (Horovod's zero-filled .grad), so weight decay and momentum still move it.
Thread-safety: as the wrapped optimizer (one training thread).
"""

import contextlib
import warnings

import torch

from runrun.common.exceptions import InvalidArgumentError, UnsupportedError
from runrun.common.ops import Adasum
from runrun.torch import collectives as c
from runrun.torch.allreduce_optimizer import _DistributedOptimizer


def check_adasum_arguments(optimizer, gradient_predivide_factor, groups, double_buffering,
                           process_set):
    """What DistributedOptimizer(op=Adasum) refuses before it changes anything: Horovod's
    ValueError for a predivide factor, double buffering, a set size that is not a power of two
    and CUDA parameters (whose update would be made before the allreduce refuses them);
    `groups` is ignored, as Horovod ignores it."""
    size = process_set.size()
    if size & (size - 1):
        raise UnsupportedError(
            f"DistributedOptimizer(op=Adasum) needs a power-of-two number of ranks (as "
            f"Horovod's); the process set has {size}; run 2, 4, 8, ... ranks or use op=Average")
    if gradient_predivide_factor != 1.0:
        raise InvalidArgumentError(
            "gradient_predivide_factor != 1.0 is only meaningful with op=Average")
    if double_buffering:
        raise InvalidArgumentError("double_buffering=True is not supported with op=Adasum: "
                                   "each parameter's update is reduced as it is made")
    if groups is not None:
        warnings.warn("DistributedOptimizer(op=Adasum) reduces each parameter's update on its "
                      "own: groups are ignored (as in Horovod)", stacklevel=3)
    for k, group in enumerate(optimizer.param_groups):
        for i, p in enumerate(group["params"]):
            if p.device.type != "cpu":
                raise UnsupportedError(
                    f"DistributedOptimizer(op=Adasum): parameter {i} of parameter group {k} is "
                    f"on {p.device}; runrun's Adasum reduces CPU tensors only (docs/"
                    "collectives.md, Adasum): train on the CPU or use op=Average")


class _DistributedAdasumOptimizer(_DistributedOptimizer):
    """Mixin placed before the wrapped optimizer's class (see DistributedOptimizer)."""

    def _runrun_setup_adasum(self, named_parameters, compression, backward_passes_per_step,
                             process_set):
        self._starting_models = {p: torch.zeros_like(p, requires_grad=False)
                                 for p in self._all_params() if p.requires_grad}
        self._runrun_setup(named_parameters, compression, backward_passes_per_step, Adasum, 1.0,
                           None, False, process_set)

    def _wrapped_step(self):
        return super(_DistributedOptimizer, self).step()

    def _allreduce_grad_async(self, p):
        """Runs the wrapped optimizer's update of `p` alone and starts the Adasum of the change
        it made (p holds that delta until step() applies the reduced one)."""
        start = self._starting_models[p]
        if p.grad is None:  # Horovod's .grad is zero-filled: the update still runs
            p.grad = torch.zeros_like(p)
        stashed = [group["params"] for group in self.param_groups]
        for group in self.param_groups:
            group["params"] = [p] if any(p is q for q in group["params"]) else []
        try:
            start.copy_(p.detach())
            self._wrapped_step()
            with torch.no_grad():
                p.sub_(start)
        finally:
            for group, params in zip(self.param_groups, stashed):
                group["params"] = params
        compressed, ctx = self._compression.compress(p.data)
        handle = c.gradient_allreduce_async_(compressed, name=self._parameter_names[p],
                                             op=Adasum, process_set=self.process_set)
        return handle, ctx

    def synchronize(self):
        """Does nothing, as Horovod's Adasum optimizer: step() applies the reduced deltas."""

    @contextlib.contextmanager
    def skip_synchronize(self):
        raise AssertionError("Skipping synchronization is not supported when using Adasum "
                             "optimizer (as in Horovod).")
        yield  # pragma: no cover - makes this a generator, raising on entering `with`

    def step(self, closure=None):
        """Starts the updates of parameters whose gradients were not ready (zero or missing
        gradients), waits for every reduced delta and applies it."""
        loss = closure() if closure is not None else None
        if not self.process_set.included():
            self._wrapped_step()
            if self._profiler is not None:
                self._profiler.step_end()
            return loss
        for p in sorted(self._requires_update, key=lambda q: self._parameter_names[q]):
            handle, _ = self._handles.get(p, (None, None))
            if handle is None:
                self._handles[p] = self._allreduce_grad_async(p)
        if self._profiler is not None:
            self._profiler.wait_begin()
        for p, (handle, ctx) in self._handles.items():
            delta = self._compression.decompress(handle.wait(), ctx)
            start = self._starting_models[p]
            with torch.no_grad():
                start.add_(delta)
                p.copy_(start)
            self._allreduce_delay[p] = self.backward_passes_per_step
        self._handles.clear()
        if self._profiler is not None:
            self._profiler.wait_end()
            self._profiler.step_end()
        return loss


def adasum_optimizer_class(base):
    """The class DistributedOptimizer(op=Adasum) returns for an optimizer of class `base`."""
    return type(base.__name__, (_DistributedAdasumOptimizer, base), {})
