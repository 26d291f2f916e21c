"""runrun.keras.DistributedOptimizer: a Keras 3 optimizer whose gradients are averaged over
the ranks before they are applied, as horovod.tensorflow.keras.DistributedOptimizer.

Why: `model.fit` with Keras' default compile settings computes gradients in its compiled
train step (a tf.function, a jax.jit, or eager torch) and hands them to the optimizer; every
backend's optimizer passes them through `_clip_gradients` right before the update, with
gradient accumulation already done (Keras 3.15: BaseOptimizer.apply and the JAX backend's
_backend_apply_gradients). The allreduce runs there, so clipping sees the averaged gradients
(as in Horovod) and only update steps communicate. All gradients go in one grouped allreduce
(`groups` splits them), compressed by `compression`.

backward_passes_per_step=N uses Keras' own gradient_accumulation_steps=N: gradients are
accumulated locally for N steps and reduced once; Keras averages the N local steps, so unless
average_aggregated_gradients=True the reduction is scaled back to Horovod's sum over them.
register_local_var / PartialDistributedOptimizer(local_layers=...): the gradients of local
variables are not reduced (each rank applies its own, divided by the set's size unless
scale_local_gradients=False), as Horovod's model-parallel layers.
process_set: the gradients are reduced over its ranks; a rank outside it applies its own
gradients unreduced, as Horovod's.
The class is a subclass of the wrapped optimizer's class made at wrap time (as Horovod does),
so isinstance checks, get_config and saving keep working.
Under runrun --profile each update step is profiled with no script change: the allreduce
reports the gradients and its wait, the end of _backend_update_step ends the step, wherever
they run per step on the backend (_backend_ops.py; docs/profiling.md).
Thread-safety: as the Keras optimizer.
"""

from runrun.common import profile
from runrun.common.exceptions import InvalidArgumentError
from runrun.common.grouping import group_positions, resolve_groups
from runrun.common.local_layers import local_layer_variables
from runrun.common.ops import Adasum, Average, resolve_op
from runrun.common.process_sets import global_process_set
from runrun.keras._backend_ops import backend_ops
from runrun.keras.compression import Compression


class _DistributedMixin:
    """Methods put in front of the wrapped optimizer's class."""

    _runrun = None  # options, set by DistributedOptimizer
    _runrun_variables = None  # the variables of the gradients being applied (trace time)

    def register_local_var(self, var):
        """Registers `var` as local to each rank (as Horovod's): its gradient is not reduced
        over the ranks but applied as this rank computed it (divided by the process set's
        size when scale_local_gradients, the default)."""
        self._runrun["local"][id(var)] = var

    def _backend_apply_gradients(self, grads, trainable_variables):
        # _clip_gradients, called inside, gets the gradients without their variables. Set
        # past Keras' attribute tracking: the list must not become optimizer variables.
        object.__setattr__(self, "_runrun_variables", list(trainable_variables))
        try:
            return super()._backend_apply_gradients(grads, trainable_variables)
        finally:
            object.__setattr__(self, "_runrun_variables", None)

    def _clip_gradients(self, grads):
        grads = self._runrun_reduce(list(grads))
        return super()._clip_gradients(grads)

    def _backend_update_step(self, grads, trainable_variables, learning_rate):
        super()._backend_update_step(grads, trainable_variables, learning_rate)
        hooks = profile.active()
        if hooks is not None:  # runrun --profile: the update ends the step
            backend_ops().step_end(hooks, trainable_variables)

    def _runrun_reduce(self, grads):
        options = self._runrun
        hooks = profile.active()
        local = self._local_positions(len(grads))
        positions = [i for i, g in enumerate(grads) if g is not None and i not in local]
        out = list(grads)
        factor = options["local_factor"]
        if options["scale_local_gradients"]:
            factor /= options["process_set"].size()
        if factor != 1.0:
            for i in local:
                if grads[i] is not None:
                    out[i] = grads[i] * factor
        if not positions:
            return out
        process_set = options["process_set"]
        if process_set is not global_process_set and not process_set.included():
            # Horovod's: a rank outside the set applies its own gradients, unreduced (summed
            # over backward_passes_per_step as a reduction would have been: local_factor).
            if options["local_factor"] != 1.0:
                for i in positions:
                    out[i] = grads[i] * options["local_factor"]
            return out
        compression = options["compression"]
        groups = self._group_positions(positions, options["groups"])
        for k, group in enumerate(groups):
            pairs = [compression.compress(grads[i]) for i in group]
            name = None if options["name"] is None else f"{options['name']}.{k}"
            reduced = backend_ops().grouped_allreduce(
                [p[0] for p in pairs], options["op"], options["prescale"], options["postscale"],
                name, options["process_set"], hooks)
            for i, r, p in zip(group, reduced, pairs):
                out[i] = compression.decompress(r, p[1])
        return out

    def _group_positions(self, positions, groups):
        """The grouped allreduces of one update (runrun.common.grouping.group_positions)."""
        variables = self._runrun_variables
        if isinstance(groups, list) and (variables is None or len(variables) <= max(positions)):
            raise InvalidArgumentError(
                "DistributedOptimizer(groups=[...]): runrun.keras could not tell which "
                "gradients belong to which variables (the optimizer was not applied through "
                "Keras' apply/apply_gradients); pass an integer number of groups instead")
        return group_positions(positions, variables, groups)

    def _local_positions(self, count):
        """Positions of the registered local variables among the gradients being applied."""
        local = self._runrun["local"]
        variables = self._runrun_variables
        if not local:
            return set()
        if variables is None or len(variables) != count:
            raise InvalidArgumentError(
                "register_local_var: runrun.keras could not tell which gradients belong to "
                "the local variables (the optimizer was not applied through Keras' "
                "apply/apply_gradients)")
        return {i for i, v in enumerate(variables) if id(v) in local}


def DistributedOptimizer(optimizer, name=None, device_dense="", device_sparse="",
                         compression=Compression.none, sparse_as_dense=False,
                         gradient_predivide_factor=1.0, op=Average, backward_passes_per_step=1,
                         average_aggregated_gradients=False, num_groups=0, groups=None,
                         process_set=global_process_set, scale_local_gradients=True):
    """Wraps a Keras 3 optimizer (a new optimizer of a subclass of its class, from its config,
    as Horovod does: pass a fresh optimizer). device_dense, device_sparse and sparse_as_dense
    are accepted for Horovod compatibility. groups: an integer number of grouped allreduces,
    or lists of variables (runrun.common.grouping.resolve_groups). scale_local_gradients: see
    register_local_var."""
    del device_dense, device_sparse, sparse_as_dense
    import keras

    if not isinstance(optimizer, keras.optimizers.Optimizer):
        raise InvalidArgumentError(
            f"DistributedOptimizer wraps a keras.optimizers.Optimizer (Keras 3), got "
            f"{type(optimizer).__name__}")
    groups = resolve_groups(num_groups, groups, "DistributedOptimizer", stacklevel=2)
    op = resolve_op(op)
    if op == Adasum and average_aggregated_gradients:
        raise InvalidArgumentError(
            "Adasum does not support average_aggregated_gradients == True (as Horovod)")
    prescale, postscale = 1.0, 1.0
    if gradient_predivide_factor != 1.0:
        if op != Average:
            raise InvalidArgumentError(
                "gradient_predivide_factor other than 1.0 needs op=Average")
        prescale, postscale = 1.0 / gradient_predivide_factor, gradient_predivide_factor
    config = optimizer.get_config()
    local_factor = 1.0
    steps = int(backward_passes_per_step)
    if steps < 1:
        raise InvalidArgumentError(
            f"backward_passes_per_step must be >= 1, got {backward_passes_per_step}")
    if steps > 1:
        if config.get("gradient_accumulation_steps") not in (None, steps):
            raise InvalidArgumentError(
                f"backward_passes_per_step={steps} conflicts with the optimizer's "
                f"gradient_accumulation_steps={config['gradient_accumulation_steps']}")
        config["gradient_accumulation_steps"] = steps
        if not average_aggregated_gradients:
            postscale *= steps  # Keras averaged the local steps; Horovod sums them
            local_factor = float(steps)  # local variables' gradients too
    base = type(optimizer)
    if issubclass(base, _DistributedMixin):
        raise InvalidArgumentError("the optimizer is already a DistributedOptimizer")
    cls = type(base.__name__, (_DistributedMixin, base), {"__module__": base.__module__})
    wrapped = cls.from_config(config)
    object.__setattr__(wrapped, "_runrun", dict(op=op, prescale=prescale, postscale=postscale,
                           compression=compression, groups=groups, name=name,
                           process_set=process_set, local={}, local_factor=local_factor,
                           scale_local_gradients=bool(scale_local_gradients)))
    return wrapped


def PartialDistributedOptimizer(optimizer, name=None, device_dense="", device_sparse="",
                                compression=Compression.none, sparse_as_dense=False,
                                gradient_predivide_factor=1.0, op=Average,
                                backward_passes_per_step=1, average_aggregated_gradients=False,
                                groups=None, process_set=global_process_set, local_layers=None,
                                scale_local_gradients=True):
    """DistributedOptimizer whose `local_layers` (a layer or a list) keep their gradients local
    to each rank (register_local_var on each of their trainable variables), as Horovod's."""
    wrapped = DistributedOptimizer(
        optimizer, name=name, device_dense=device_dense, device_sparse=device_sparse,
        compression=compression, sparse_as_dense=sparse_as_dense,
        gradient_predivide_factor=gradient_predivide_factor, op=op,
        backward_passes_per_step=backward_passes_per_step,
        average_aggregated_gradients=average_aggregated_gradients, groups=groups,
        process_set=process_set, scale_local_gradients=scale_local_gradients)
    for var in local_layer_variables(local_layers, "PartialDistributedOptimizer"):
        wrapped.register_local_var(var)
    return wrapped
