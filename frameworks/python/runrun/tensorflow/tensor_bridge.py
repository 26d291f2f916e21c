"""runrun.tensorflow's tensor adapter (runrun.common.tensor_protocol): eager tf.Tensors <->
DLPack capsules for runrun._core, with the call-time checks.

Why: the extension and runrun.common know no framework; this is the only place that turns
TensorFlow tensors into what the runtime reads (tf.experimental.dlpack capsules) and gives its
outputs back as tf.Tensors. TF tensors are immutable, so every op is out of place. On the
per-tensor fast path (allreduce, broadcast, grouped_allreduce) the extension allocates the
output (a 64-byte aligned host buffer) and TF adopts it through DLPack when the handle is
waited (capsule_finish, ~1.3 us): an output made at enqueue (numpy + from_dlpack, empty_like)
cost 7-17 us per tensor there. On the general path an output of allreduce/broadcast is a
fresh host buffer (numpy) that TF adopts through DLPack before the runtime writes into it;
outputs the runtime allocates (allgather, alltoall, reducescatter) are adopted the same way.
Nothing here is compiled against TensorFlow.
Thread-safety: stateless but for a dtype cache (dict updates are atomic under the GIL); any
thread (inside tf.function the ops run in py_function threads).
"""

import math

import numpy as np
import tensorflow as tf
from tensorflow.experimental import dlpack as _tf_dlpack

from runrun.common.exceptions import InvalidArgumentError
from runrun.common.tensor_protocol import TensorAdapter

SUPPORTED_DTYPES = (
    tf.uint8, tf.int8, tf.int16, tf.int32, tf.int64, tf.float16, tf.bfloat16, tf.float32,
    tf.float64, tf.bool,
)


def check_tensor(tensor, op, name):
    """`tensor` (a tf.Tensor, a tf.Variable or anything tf.convert_to_tensor takes, as Horovod's
    TF ops accept) as an eager tensor the runtime can read; raises InvalidArgumentError."""
    if isinstance(tensor, tf.Variable):
        tensor = tensor.read_value()
    elif not isinstance(tensor, tf.Tensor):
        try:
            tensor = tf.convert_to_tensor(tensor)
        except (TypeError, ValueError) as e:
            raise InvalidArgumentError(
                f"{op} '{name}': expected a tf.Tensor or something tf.convert_to_tensor "
                f"takes, got {type(tensor).__name__} ({e})") from None
    if tensor.dtype not in SUPPORTED_DTYPES:
        supported = ", ".join(d.name for d in SUPPORTED_DTYPES)
        raise InvalidArgumentError(
            f"{op} '{name}': dtype {tensor.dtype.name} is not supported; cast the tensor "
            f"(tf.cast) to one of {supported}")
    if "GPU" in tensor.device.upper():
        raise InvalidArgumentError(
            f"{op} '{name}': tensor is on {tensor.device} but this runrun build only handles "
            "CPU tensors; place it on the CPU (with tf.device('/CPU:0'))")
    return tensor


# TF's kernels (Eigen) require 64-byte aligned buffers and tf.experimental.dlpack.from_dlpack
# adopts foreign memory without copying, so output buffers are allocated aligned here (the
# runtime's own outputs are 64-byte aligned too: core/tensor.h).
_ALIGNMENT = 64


def _aligned_empty(shape, np_dtype):
    # math.prod and __array_interface__ rather than np.prod and .ctypes: a few us less per call,
    # which an out-of-place op of a small tensor pays once (issue 12 point 6).
    dtype = np.dtype(np_dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    raw = np.empty(nbytes + _ALIGNMENT, np.uint8)
    offset = -raw.__array_interface__["data"][0] % _ALIGNMENT
    return raw[offset:offset + nbytes].view(dtype).reshape(shape)


# tf.DType -> numpy dtype of the output buffer, filled on first use (a dict lookup instead of
# tf.DType comparisons and as_numpy_dtype per call); bfloat16 never enters it.
_NUMPY_DTYPES = {}


def empty_like(tensor):
    """A new 64-byte aligned host buffer with `tensor`'s shape and dtype, adopted by TF (shared
    memory) so the runtime can write the result into it before anyone reads it."""
    dtype = tensor.dtype
    shape = tuple(tensor.shape)
    np_dtype = _NUMPY_DTYPES.get(dtype)
    if np_dtype is None:
        if dtype == tf.bfloat16:  # numpy's DLPack export has no bfloat16: share a uint16 buffer
            raw = _aligned_empty(shape, np.uint16)
            return tf.bitcast(_tf_dlpack.from_dlpack(raw.__dlpack__()), tf.bfloat16)
        np_dtype = _NUMPY_DTYPES[dtype] = dtype.as_numpy_dtype
    return _tf_dlpack.from_dlpack(_aligned_empty(shape, np_dtype).__dlpack__())


def finish_capsule(handle):
    """capsule_finish: the extension's completed output buffer adopted by TF (no copy)."""
    return _tf_dlpack.from_dlpack(handle.result)


class TFTensors(TensorAdapter):
    """The TensorFlow adapter (eager tensors; runrun.tensorflow.graph runs it inside
    tf.function)."""

    framework = "tensorflow"
    # The buffer protocol (EagerTensor implements it on CPU; read-only, so an in-place op never
    # takes the fast path) costs what to_dlpack does; bfloat16 falls back to __dlpack__.
    fast_export = memoryview
    capsule_finish = staticmethod(finish_capsule)

    def check(self, tensor, op, name, in_place=False):
        if in_place:
            raise InvalidArgumentError(
                f"{op} '{name}': TensorFlow tensors are immutable; use the out-of-place op")
        return check_tensor(tensor, op, name)

    def to_dlpack(self, tensor):
        return _tf_dlpack.to_dlpack(tensor)

    def from_dlpack(self, capsule):
        return _tf_dlpack.from_dlpack(capsule)

    def empty_like(self, tensor):
        return empty_like(tensor)

    def ndim(self, tensor):
        return tensor.shape.rank

    def splits_to_list(self, splits):
        if isinstance(splits, (tf.Tensor, tf.Variable)):
            splits = splits.numpy().tolist()
        return [int(s) for s in splits]

    def int32_tensor(self, values):
        return tf.constant(values, dtype=tf.int32, shape=[len(values)])


ADAPTER = TFTensors()
