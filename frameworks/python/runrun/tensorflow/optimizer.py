"""horovod.tensorflow.DistributedOptimizer on TensorFlow 2: a Keras optimizer goes to
runrun.keras.DistributedOptimizer, a tf.compat.v1 optimizer is refused.

Why: Horovod's horovod.tensorflow.DistributedOptimizer is one entry point for two kinds of
optimizer. A tf.compat.v1.train.Optimizer it wraps itself (compute_gradients in TF1 graph
mode, which runrun does not provide: docs/tensorflow.md); a Keras optimizer it hands to
horovod.tensorflow.keras.DistributedOptimizer, forwarding name, device_dense, device_sparse,
compression, sparse_as_dense, gradient_predivide_factor, backward_passes_per_step,
average_aggregated_gradients, process_set and scale_local_gradients. It does not forward
`op`, `num_groups` or `groups` (the Keras optimizer averages, in one group) nor `use_locking`;
runrun forwards the same arguments, so a script trains as it did under Horovod, and warns when
a dropped argument had a value other than its default.
Thread-safety: as the Keras optimizer.
"""

import warnings

import tensorflow as tf

from runrun.common.grouping import groups_from_num_groups
from runrun.common.ops import Adasum, Average, resolve_op
from runrun.common.process_sets import global_process_set
from runrun.tensorflow.compression import Compression
from runrun.tensorflow.errors import InvalidArgumentError, UnsupportedError


def _legacy_optimizer_class():
    try:
        return tf.compat.v1.train.Optimizer
    except AttributeError:  # pragma: no cover - a TensorFlow without the v1 API
        return None


def _check_arguments(op, gradient_predivide_factor, num_groups, groups):
    """Horovod's checks, made before it looks at the optimizer's kind."""
    if gradient_predivide_factor != 1.0 and op != Average:
        raise InvalidArgumentError(
            "DistributedOptimizer: gradient_predivide_factor other than 1.0 needs op=Average")
    groups = groups_from_num_groups(num_groups, groups, stacklevel=3)
    if groups is not None and not (isinstance(groups, list) or groups > 0):
        raise InvalidArgumentError(
            "DistributedOptimizer: groups must be a positive integer or a list of lists of "
            f"variables, got {groups!r}")
    return groups


def _warn_dropped(op, groups, use_locking):
    dropped = []
    if op != Average:
        dropped.append(f"op={op.name}")
    if groups is not None:
        dropped.append("groups/num_groups")
    if use_locking:
        dropped.append("use_locking=True")
    if dropped:
        warnings.warn(
            f"DistributedOptimizer of a Keras optimizer ignores {', '.join(dropped)}, as "
            "horovod.tensorflow.DistributedOptimizer does (the gradients are averaged in one "
            "group); pass them to runrun.keras.DistributedOptimizer (horovod.tensorflow.keras') "
            "directly if you meant them", stacklevel=3)


def DistributedOptimizer(optimizer, name=None, use_locking=False, device_dense="",
                         device_sparse="", compression=Compression.none,
                         sparse_as_dense=False, backward_passes_per_step=1, op=Average,
                         gradient_predivide_factor=1.0, average_aggregated_gradients=False,
                         num_groups=0, groups=None, process_set=global_process_set,
                         scale_local_gradients=True):
    """A Keras optimizer (keras.optimizers.Optimizer, e.g. tf.keras.optimizers.SGD) wrapped
    by runrun.keras.DistributedOptimizer with the arguments Horovod forwards; a
    tf.compat.v1.train.Optimizer raises UnsupportedError (no TF1 graph mode in runrun)."""
    legacy = _legacy_optimizer_class()
    if legacy is not None and isinstance(optimizer, legacy):
        raise UnsupportedError(
            f"DistributedOptimizer({type(optimizer).__name__}): runrun.tensorflow does not "
            "wrap tf.compat.v1 optimizers (TF1 graph mode and sessions are not provided); in "
            "TensorFlow 2 use a Keras optimizer (tf.keras.optimizers.SGD(...)) with "
            "hvd.DistributedOptimizer, or keep the tf.compat.v1 optimizer and reduce the "
            "gradients with hvd.DistributedGradientTape (docs/tensorflow.md)")
    if op == Adasum:  # Horovod's ValueError for a Keras optimizer (resolve_op's otherwise)
        raise InvalidArgumentError("DistributedOptimizer: op=Adasum is not supported with Keras")
    op = resolve_op(op)
    groups = _check_arguments(op, gradient_predivide_factor, num_groups, groups)
    import keras

    if not isinstance(optimizer, keras.optimizers.Optimizer):
        raise InvalidArgumentError(
            "DistributedOptimizer wraps a Keras optimizer (keras.optimizers.Optimizer, "
            f"tf.keras.optimizers.*), got {type(optimizer).__name__}")
    _warn_dropped(op, groups, use_locking)
    from runrun.tensorflow import keras as hvd_keras  # runrun.keras, through the shim

    return hvd_keras.DistributedOptimizer(
        optimizer, name=name, device_dense=device_dense, device_sparse=device_sparse,
        compression=compression, sparse_as_dense=sparse_as_dense,
        gradient_predivide_factor=gradient_predivide_factor,
        backward_passes_per_step=backward_passes_per_step,
        average_aggregated_gradients=average_aggregated_gradients, process_set=process_set,
        scale_local_gradients=scale_local_gradients)
