"""Which framework runs runrun.keras' collectives on backend tensors: the one Keras runs on
(keras.backend.backend(), fixed per process by KERAS_BACKEND before keras is imported).

Why: Keras 3 calls the optimizer with the backend's own tensors inside its train step (a
tf.function for TensorFlow, jax.jit for JAX, eager for PyTorch); the gradient allreduce has
to run there, in that framework. Each backend module offers
grouped_allreduce(tensors, op, prescale_factor, postscale_factor, name, process_set).
Importing this module imports only keras; the backend's adapter is imported on first use.
Thread-safety: the cache is filled once; any thread after that.
"""

import keras

_ops = None


class _TorchOps:
    @staticmethod
    def grouped_allreduce(tensors, op, prescale_factor, postscale_factor, name, process_set):
        from runrun.torch import collectives

        tensors = [t.contiguous() for t in tensors]
        if not tensors:
            return []
        return collectives.grouped_allreduce_async(
            tensors, None, name, op, prescale_factor, postscale_factor, process_set).wait()


class _TFOps:
    @staticmethod
    def grouped_allreduce(tensors, op, prescale_factor, postscale_factor, name, process_set):
        from runrun.tensorflow.ops import _grouped_allreduce_raw

        return _grouped_allreduce_raw(list(tensors), op, prescale_factor, postscale_factor,
                                      name, process_set)


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
            from runrun.common.exceptions import UnsupportedError
            raise UnsupportedError(
                f"runrun.keras supports the tensorflow, jax and torch Keras backends; this "
                f"process runs Keras on '{backend}' (set KERAS_BACKEND before importing keras)")
    return _ops
