"""horovod.tensorflow.keras' functions on Keras 3 values: broadcast_variables, allreduce,
allgather, broadcast, reducescatter (on backend tensors) and load_model.

Why: scripts call these outside the train step (evaluation results, initial weights, a
restored model). On the TensorFlow backend the tensor ops are runrun.tensorflow's (eager and
inside tf.function); on JAX and PyTorch they run eagerly on host copies (host_values) and
return the backend's tensor. Thread-safety: as the ops.
"""

import warnings

import keras

from runrun.common.ops import Average, resolve_op
from runrun.common.process_sets import global_process_set
from runrun.keras import host_values as hv
from runrun.keras._backend_ops import tensorflow_ops
from runrun.keras.compression import Compression


def _sync_jax_state(model):
    """Keras' JAX trainer keeps the live state outside the variables during fit; flush it so
    variables read and assigned here are the current ones (the next step reads them back)."""
    if model is not None and hasattr(model, "jax_state_sync"):
        model.jax_state_sync()


def broadcast_variables(variables, root_rank=0, process_set=global_process_set, model=None):
    """Assigns root_rank's values to `variables` (keras.Variables) on every rank of the set.
    `model`: the model being trained by fit on the JAX backend (its state is synced first)."""
    _sync_jax_state(model)
    variables = list(variables)
    arrays = [hv.to_numpy(v) for v in variables]
    for variable, value in zip(variables, hv.broadcast_arrays(arrays, root_rank, process_set)):
        variable.assign(value)


def broadcast_global_variables(root_rank):
    """TF1's global variables do not exist in Keras 3: raises, naming the replacement."""
    from runrun.common.exceptions import UnsupportedError

    raise UnsupportedError(
        "broadcast_global_variables() has no meaning in Keras 3 (no global variable "
        "collection); use runrun.keras.broadcast_variables(model.variables, root_rank) or the "
        f"callbacks.BroadcastGlobalVariablesCallback({root_rank}) callback")


def allreduce(value, name=None, average=None, prescale_factor=1.0, postscale_factor=1.0,
              op=None, compression=Compression.none, process_set=global_process_set):
    """The reduction (op, default Average) of `value` over the ranks, as a backend tensor."""
    op = resolve_op(op, average)
    ops = tensorflow_ops()
    if ops is not None:
        return ops.allreduce(value, op=op, prescale_factor=prescale_factor,
                             postscale_factor=postscale_factor, name=name,
                             compression=compression, process_set=process_set)
    out = hv.allreduce_array(hv.to_numpy(value), op, prescale_factor, postscale_factor, name,
                             process_set)
    return keras.ops.convert_to_tensor(out)


def allgather(value, name=None, process_set=global_process_set):
    """Every rank's `value` concatenated along the first dimension, as a backend tensor."""
    ops = tensorflow_ops()
    if ops is not None:
        return ops.allgather(value, name=name, process_set=process_set)
    return keras.ops.convert_to_tensor(hv.allgather_array(hv.to_numpy(value), name,
                                                          process_set))


def broadcast(value, root_rank, name=None, process_set=global_process_set):
    """root_rank's `value` on every rank, as a backend tensor."""
    ops = tensorflow_ops()
    if ops is not None:
        return ops.broadcast(value, root_rank, name=name, process_set=process_set)
    array = hv.to_numpy(value)
    return keras.ops.convert_to_tensor(hv.broadcast_arrays([array], root_rank, process_set,
                                                           name)[0])


def reducescatter(value, name=None, op=Average, process_set=global_process_set):
    """This rank's slice of the reduction (Average or Sum) of `value`, as a backend tensor."""
    ops = tensorflow_ops()
    if ops is not None:
        return ops.reducescatter(value, op=op, name=name, process_set=process_set)
    return keras.ops.convert_to_tensor(hv.reducescatter_array(hv.to_numpy(value), op, name,
                                                              process_set))


def _state_variables(optimizer):
    """The optimizer's variables in build order without Keras' gradient accumulators, which
    backward_passes_per_step adds (before the slots) and which hold no state between steps."""
    accumulators = {id(v) for v in getattr(optimizer, "_accumulated_gradients", None) or []}
    return [v for v in optimizer.variables if id(v) not in accumulators]


def _carry_state(loaded, wrapped, filepath):
    """Copies the loaded optimizer's state into the wrapped one: by position when they have the
    same variables; by name when the file held only some (a legacy .h5 file keeps the
    iteration count and learning rate but no slots: the slots start fresh, as with
    keras.models.load_model, and a warning says so)."""
    mine, theirs = _state_variables(wrapped), _state_variables(loaded)
    if len(mine) == len(theirs):
        for variable, value in zip(mine, theirs):
            variable.assign(value)
        return
    by_name = {}
    for variable in mine:
        by_name.setdefault(variable.name, []).append(variable)
    pairs = [(by_name.get(value.name, []), value) for value in theirs]
    if len(theirs) > len(mine) or any(len(targets) != 1 for targets, _ in pairs):
        raise ValueError(
            f"load_model: the loaded {type(loaded).__name__} has {len(theirs)} state "
            f"variables, its DistributedOptimizer {len(mine)}, and they do not match by name; "
            "cannot carry its state over")
    for targets, value in pairs:
        targets[0].assign(value)
    warnings.warn(
        f"load_model: {filepath} holds {len(theirs)} of the optimizer's {len(mine)} state "
        f"variables ({', '.join(v.name for v in theirs)}); the others (its slots) start fresh, "
        "as with keras.models.load_model. Save in the .keras format to keep them.",
        stacklevel=3)


def load_model(filepath, custom_optimizers=None, custom_objects=None,
               compression=Compression.none, **optimizer_options):
    """keras.models.load_model, with the loaded optimizer replaced by a DistributedOptimizer
    of the same class and config carrying the loaded optimizer's state (iterations, slots).
    custom_optimizers: optimizer classes to make known to the loader, as in Horovod."""
    from runrun.keras.optimizer import DistributedOptimizer

    objects = dict(custom_objects or {})
    for cls in custom_optimizers or []:
        objects.setdefault(cls.__name__, cls)
    model = keras.models.load_model(filepath, custom_objects=objects or None)
    loaded = getattr(model, "optimizer", None)
    if loaded is None:
        return model
    wrapped = DistributedOptimizer(loaded, compression=compression, **optimizer_options)
    if loaded.built:
        wrapped.build(model.trainable_variables)
        _carry_state(loaded, wrapped, filepath)
    model.optimizer = wrapped
    if hasattr(model, "train_function"):
        model.train_function = None  # retrace the train step with the new optimizer
    return model
