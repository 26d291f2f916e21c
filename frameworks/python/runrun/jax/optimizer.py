"""Gradient averaging for optax, as horovod.torch's DistributedOptimizer does for torch:
allreduce_gradients(grads) averages a gradient pytree over the ranks in one grouped allreduce,
and DistributedOptimizer(tx) wraps an optax.GradientTransformation so that its update()
averages the gradients first. Both work eagerly and inside jax.jit (one ordered callback for
the whole pytree, jit_ops.py).

Why one grouped op: the leaves of a gradient pytree are reduced as one unit (one negotiation,
one fused reduction), which is what Horovod's tensor fusion gives torch's per-parameter hooks.
gradient_predivide_factor follows Horovod: with op=Average, gradients are summed with a
prescale of 1/f and a postscale of f/size. Under runrun --profile both report the allreduce
per step and DistributedOptimizer's update ends the step (profile_marks.py; a loop that calls
allreduce_gradients itself ends it with hvd.profile_step()). Importing this module does not
import optax; the wrapper does when it is made. Thread-safety: as runrun.jax.collectives.
"""

import jax

from runrun.common.exceptions import InvalidArgumentError
from runrun.common.ops import Average, Sum, resolve_op
from runrun.common.process_sets import global_process_set
from runrun.jax import profile_marks
from runrun.jax.collectives import grouped_allreduce


def allreduce_gradients(grads, op=Average, gradient_predivide_factor=1.0, name=None,
                        process_set=global_process_set):
    """The pytree `grads` reduced over the set's ranks (averaged by default), same structure."""
    leaves, treedef = jax.tree_util.tree_flatten(grads)
    if not leaves:
        return grads
    op = resolve_op(op)
    prescale, postscale = 1.0, 1.0
    if gradient_predivide_factor != 1.0:
        if op is not Average:
            raise InvalidArgumentError(
                "allreduce_gradients: gradient_predivide_factor needs op=Average, got "
                f"{op.name}")
        op = Sum
        prescale = 1.0 / gradient_predivide_factor
        postscale = gradient_predivide_factor / process_set.size()
    reduced = profile_marks.reduce(leaves, lambda xs: grouped_allreduce(
        xs, op=op, name=name, prescale_factor=prescale, postscale_factor=postscale,
        process_set=process_set))
    return jax.tree_util.tree_unflatten(treedef, reduced)


def DistributedOptimizer(optimizer, op=Average, gradient_predivide_factor=1.0,
                         process_set=global_process_set):
    """An optax.GradientTransformation that averages the gradients over the ranks (one grouped
    allreduce) and then applies `optimizer`; its state is `optimizer`'s state."""
    import optax

    def update(updates, state, params=None, **extra):
        updates = allreduce_gradients(updates, op, gradient_predivide_factor,
                                      process_set=process_set)
        updates, state = optimizer.update(updates, state, params, **extra)
        profile_marks.step_end(jax.tree_util.tree_leaves(updates))
        return updates, state

    if isinstance(optimizer, optax.GradientTransformationExtraArgs):
        return optax.GradientTransformationExtraArgs(optimizer.init, update)
    return optax.GradientTransformation(optimizer.init, update)
