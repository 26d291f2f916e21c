"""Which framework runs runrun.keras' collectives on backend tensors: the one Keras runs on
(keras.backend.backend(), fixed per process by KERAS_BACKEND before keras is imported). Every
branch of runrun.keras on the backend is here, and only this module (with _jax_ops.py, its JAX
side) imports runrun's framework adapters (runrun.tensorflow, runrun.torch, runrun.jax):
- backend_ops(): the optimizer's grouped gradient allreduce and step end (below);
- tensorflow_ops(): runrun.tensorflow.ops on the TensorFlow backend, for the functions that
  run there on TF tensors (eager and inside tf.function); None elsewhere (host copies);
- differentiable_allreduce(): the backend adapter's allreduce (SyncBatchNormalization);
- framework_errors(): what a runrun failure inside the compiled train step arrives as (elastic).

Why: Keras 3 calls the optimizer with the backend's own tensors inside its train step (a
tf.function for TensorFlow, jax.jit for JAX, eager for PyTorch); the gradient allreduce has
to run there, in that framework. Each backend module offers
grouped_allreduce(tensors, op, prescale_factor, postscale_factor, name, process_set, hooks)
and step_end(hooks, variables): under runrun --profile (hooks, runrun.common.profile) the
allreduce reports its gradients and wait and step_end ends the step, where they run per step:
eager torch calls them directly, TensorFlow from the allreduce's own py_function and graph ops
after the update that record the time in a tf.Variable ring (_tf_marks.py), JAX from the grouped
allreduce itself and a native step-end custom call (runrun.jax.profile_marks).
Importing this module imports only keras; the backend's adapter is imported on first use.
Thread-safety: the cache is filled once; any thread after that.
"""

import keras

from runrun.common.exceptions import UnsupportedError

_ops = None


class _TorchOps:
    @staticmethod
    def grouped_allreduce(tensors, op, prescale_factor, postscale_factor, name, process_set,
                          hooks=None):
        from runrun.torch import collectives

        tensors = [t.contiguous() for t in tensors]
        if not tensors:
            return []
        if hooks is not None:
            hooks.gradient_ready(sum(t.numel() * t.element_size() for t in tensors))
        handle = collectives.grouped_allreduce_async(
            tensors, None, name, op, prescale_factor, postscale_factor, process_set)
        if hooks is None:
            return handle.wait()
        hooks.wait_begin()
        reduced = handle.wait()
        hooks.wait_end()
        return reduced

    @staticmethod
    def step_end(hooks, variables):
        del variables  # eager: the update is done
        hooks.step_end()


class _TFOps:
    @staticmethod
    def grouped_allreduce(tensors, op, prescale_factor, postscale_factor, name, process_set,
                          hooks=None):
        from runrun.tensorflow.ops import _grouped_allreduce_raw

        return _grouped_allreduce_raw(list(tensors), op, prescale_factor, postscale_factor,
                                      name, process_set, hooks)

    @staticmethod
    def step_end(hooks, variables):
        """A few graph ops after the update write the time into a tf.Variable ring inside
        tf.function (_tf_marks.py); a plain call eagerly."""
        from runrun.tensorflow import graph

        if graph.eager():
            hooks.step_end()
            return
        from runrun.keras import _tf_marks
        _tf_marks.step_end(hooks, variables)


def backend_ops():
    """The module of collectives for keras.backend.backend()."""
    global _ops
    if _ops is None:
        backend = keras.backend.backend()
        if backend == "tensorflow":
            _ops = _TFOps
        elif backend == "torch":
            _ops = _TorchOps
        elif backend == "jax":
            from runrun.keras import _jax_ops
            _ops = _jax_ops
        else:
            raise UnsupportedError(
                f"runrun.keras supports the tensorflow, jax and torch Keras backends; this "
                f"process runs Keras on '{backend}' (set KERAS_BACKEND before importing keras)")
    return _ops


def tensorflow_ops():
    """runrun.tensorflow.ops on the TensorFlow backend (its ops take and return TF tensors,
    eagerly and inside tf.function), else None: the caller runs on host copies."""
    if keras.backend.backend() != "tensorflow":
        return None
    from runrun.tensorflow import ops

    return ops


def differentiable_allreduce(user):
    """The allreduce of the backend's adapter (runrun.tensorflow, runrun.torch or runrun.jax
    `allreduce`, whose gradient is the Sum allreduce of the incoming gradient); `user` names
    the caller in the UnsupportedError another backend raises."""
    backend = keras.backend.backend()
    if backend == "tensorflow":
        from runrun.tensorflow import allreduce
    elif backend == "torch":
        from runrun.torch import allreduce
    elif backend == "jax":
        from runrun.jax import allreduce
    else:
        raise UnsupportedError(
            f"{user} supports the tensorflow, jax and torch Keras backends, not '{backend}'")
    return allreduce


def framework_errors():
    """The errors a runrun failure inside the backend's compiled train step arrives as."""
    backend = keras.backend.backend()
    if backend == "tensorflow":
        import tensorflow as tf

        return (tf.errors.OpError,)
    if backend == "jax":
        import jax

        return (jax.errors.JaxRuntimeError,)
    return ()
