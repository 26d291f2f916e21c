"""DistributedOptimizer (horovod.torch.DistributedOptimizer): wraps a torch optimizer so that
step() applies gradients reduced across the ranks of a process set.

Why a module of its own: the factory picks and builds the class (a subclass of the wrapped
optimizer's class with allreduce_optimizer.py's mixin before it, or adasum_optimizer.py's for
op=Adasum over more than one rank) and moves the optimizer's state into an instance of it; it
needs both classes, which build on each other in one direction only.
Thread-safety: as the wrapped optimizer (one training thread).
"""

import torch

from runrun.common.exceptions import InvalidArgumentError
from runrun.common.grouping import groups_from_num_groups
from runrun.common.ops import Adasum, Average, resolve_op
from runrun.common.process_sets import global_process_set
from runrun.torch.adasum_optimizer import adasum_optimizer_class, check_adasum_arguments
from runrun.torch.allreduce_optimizer import _DistributedOptimizer
from runrun.torch.compression import Compression


def DistributedOptimizer(optimizer, named_parameters=None, compression=Compression.none,
                         backward_passes_per_step=1, op=Average, gradient_predivide_factor=1.0,
                         num_groups=0, groups=None, sparse_as_dense=False,
                         process_set=global_process_set, double_buffering=False):
    """Wraps `optimizer` so that step() applies gradients averaged over the ranks of
    `process_set` (with double_buffering=True, those of the previous step; see flush()).
    Returns an optimizer of a subclass of `optimizer`'s class sharing its parameter groups,
    state and defaults; use it in place of the original. The arguments are Horovod's, in its
    order; `num_groups` is its deprecated spelling of an integer `groups`. With op=Adasum over
    more than one rank it is Horovod's delta optimizer (adasum_optimizer.py)."""
    groups = groups_from_num_groups(num_groups, groups, stacklevel=2)
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise InvalidArgumentError(
            f"DistributedOptimizer wraps a torch.optim.Optimizer, got {type(optimizer).__name__}")
    if isinstance(optimizer, _DistributedOptimizer):
        raise InvalidArgumentError("the optimizer is already a DistributedOptimizer")
    base = optimizer.__class__
    adasum = resolve_op(op) == Adasum and process_set.size() > 1
    if adasum:
        check_adasum_arguments(optimizer, gradient_predivide_factor, groups, double_buffering,
                               process_set)
        cls = adasum_optimizer_class(base)
    else:
        cls = type(base.__name__, (_DistributedOptimizer, base), {})
    wrapped = cls.__new__(cls)
    state = dict(optimizer.__dict__)
    # An LR scheduler may have replaced the instance's step/zero_grad with wrappers bound to
    # the original object; the wrapped optimizer must use its own.
    state.pop("step", None)
    state.pop("zero_grad", None)
    wrapped.__dict__.update(state)
    if adasum:
        wrapped._runrun_setup_adasum(named_parameters, compression, backward_passes_per_step,
                                     process_set)
        return wrapped
    wrapped._runrun_setup(named_parameters, compression, backward_passes_per_step, op,
                          gradient_predivide_factor, groups, sparse_as_dense, process_set,
                          double_buffering)
    # step() hooks and profiling run once, in the wrapped class's own (already patched) step.
    return wrapped
