"""Collectives on host copies of Keras values (variables, metrics, eager backend tensors), for
every Keras backend: numpy arrays through runrun.common's numpy adapter.

Why: the callbacks and broadcast_variables run outside the compiled train step, once per
batch or epoch at most, where a host copy is cheap and one code path serves TensorFlow, JAX
and PyTorch alike. Broadcasts move raw bytes (any dtype, bfloat16 included); reductions of
bfloat16 run in float32 (numpy has no DLPack bfloat16). Thread-safety: any thread.
"""

import numpy as np

from runrun.common import collectives as _c
from runrun.common.numpy_tensors import ADAPTER as _NP
from runrun.common.process_sets import global_process_set


def to_numpy(value):
    import keras

    if hasattr(value, "value") and hasattr(value, "assign"):  # a keras.Variable
        value = value.value
    array = np.asarray(keras.ops.convert_to_numpy(value))
    return array if array.flags.c_contiguous else array.copy(order="C")  # keeps 0-d as 0-d


def _bytes(array):
    return array.reshape(-1).view(np.uint8) if array.size else np.zeros(0, np.uint8)


def broadcast_arrays(arrays, root_rank, process_set=global_process_set, name=None):
    """root_rank's numpy arrays (same shapes and dtypes on every rank), every broadcast
    enqueued before any is waited for."""
    handles = [_c.broadcast(_NP, _bytes(a), root_rank,
                            None if name is None else f"{name}.{i}", process_set)
               for i, a in enumerate(arrays)]
    return [h.wait().view(a.dtype).reshape(a.shape) for h, a in zip(handles, arrays)]


def _wire(array):
    return array.astype(np.float32) if array.dtype.name == "bfloat16" else array


def allreduce_array(array, op, prescale_factor=1.0, postscale_factor=1.0, name=None,
                    process_set=global_process_set):
    out = _c.allreduce(_NP, _wire(array), None, name, op, prescale_factor, postscale_factor,
                       process_set).wait()
    return out.astype(array.dtype, copy=False)


def allgather_array(array, name=None, process_set=global_process_set):
    return _c.allgather(_NP, _wire(array), name, process_set).wait().astype(array.dtype,
                                                                           copy=False)


def reducescatter_array(array, op, name=None, process_set=global_process_set):
    return _c.reducescatter(_NP, _wire(array), name, op, process_set).wait().astype(
        array.dtype, copy=False)
