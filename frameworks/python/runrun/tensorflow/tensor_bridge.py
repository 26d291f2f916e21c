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
A tensor on a GPU (docs/gpu.md, "Framework adapters") goes to the runtime as kDLCUDA; TF gives
Python neither its streams nor an event, and XLA's stream executor creates its streams
non-blocking (they do not order with the legacy default stream), so: before an op on GPU
tensors the TF devices are synchronized (tf.test.experimental.sync_devices: the inputs are
written), runrun's stream for the thread is the legacy default stream, the runtime allocates
every output on the device (empty_like answers None), and from_dlpack waits on the host for
that stream (runrun._core.cuda_stream_wait_host, one event) before TF adopts an output. TF's
DLPack device id is its own GPU index (tf.config.get_visible_devices), runrun's the CUDA
ordinal: capsules are patched between the two both ways.
Thread-safety: stateless but for a dtype cache (dict updates are atomic under the GIL); any
thread (inside tf.function the ops run in py_function threads).
"""

import ctypes
import math

import numpy as np
import tensorflow as tf
from tensorflow.experimental import dlpack as _tf_dlpack

from runrun.common import loader
from runrun.common.exceptions import InvalidArgumentError
from runrun.common.tensor_protocol import TensorAdapter

# The runtime's accepted dtypes (runrun/dlpack_rules.h, through runrun._core.ACCEPTED_DTYPES).
SUPPORTED_DTYPES = tuple(tf.as_dtype(name) for name in loader.core().ACCEPTED_DTYPES)

# dtypes the runtime has no type for that the ops which only move bytes (allgather, broadcast,
# alltoall: Horovod's TF ops take uint16 there, not in its reductions) carry as another type of
# the same width: tf.bitcast keeps shape and bytes, and the output is bitcast back.
_CARRIERS = {tf.uint16: tf.int16}
MOVED_DTYPES = SUPPORTED_DTYPES + tuple(_CARRIERS)


def carried(tensor):
    """`tensor`, or its bytes as its carrier dtype (a uint16 tensor as int16)."""
    carrier = _CARRIERS.get(tensor.dtype)
    return tensor if carrier is None else tf.bitcast(tensor, carrier)


def uncarried(tensor, dtype):
    """An op's output `tensor` (carried() of an input of `dtype`) as `dtype` again."""
    return tensor if tensor.dtype == dtype else tf.bitcast(tensor, dtype)


def check_tensor(tensor, op, name, hand_over=True):
    """`tensor` (a tf.Tensor, a tf.Variable or anything tf.convert_to_tensor takes, as Horovod's
    TF ops accept) as an eager tensor the runtime can read; raises InvalidArgumentError. A GPU
    tensor is handed over (hand_over_gpu_tensor) unless the caller did that for the op."""
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
        moved = " (allgather, broadcast and alltoall take it, as Horovod's)" \
            if tensor.dtype in _CARRIERS else ""
        raise InvalidArgumentError(
            f"{op} '{name}': dtype {tensor.dtype.name} is not supported{moved}; cast the "
            f"tensor (tf.cast) to one of {supported}")
    if hand_over and "GPU" in tensor.device.upper():
        hand_over_gpu_tensor()
    return tensor


def hand_over_gpu_tensor():
    """The stream contract for GPU tensors as far as TF allows (module docstring): TF's work
    so far is done, and runrun's stream of this thread is the legacy default stream."""
    tf.test.experimental.sync_devices()
    loader.core().set_cuda_stream(0)


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_DEVICE_OFFSET = 8  # offsetof(DLManagedTensor, dl_tensor.device): device_type, device_id
_KDL_CUDA = 2
_ORDINALS = []  # [TF GPU index -> CUDA ordinal], filled on first use


def _cuda_ordinals():
    """TF's GPU index -> the CUDA ordinal ("/physical_device:GPU:k" is CUDA's device k)."""
    if not _ORDINALS:
        _ORDINALS.append([int(d.name.rsplit(":", 1)[1])
                          for d in tf.config.get_visible_devices("GPU")])
    return _ORDINALS[0]


def _capsule_device(capsule):
    """The int32 pair (device_type, device_id) inside a "dltensor" capsule, writable."""
    return ctypes.cast(_capsule_pointer(capsule, b"dltensor") + _DEVICE_OFFSET,
                       ctypes.POINTER(ctypes.c_int32))


def export(tensor):
    """tf.experimental.dlpack.to_dlpack, with a GPU tensor's device id as the CUDA ordinal."""
    capsule = _tf_dlpack.to_dlpack(tensor)
    device = _capsule_device(capsule)
    if device[0] == _KDL_CUDA:
        device[1] = _cuda_ordinals()[device[1]]
    return capsule


def adopt(capsule):
    """tf.experimental.dlpack.from_dlpack of a runtime-allocated output; a CUDA one once its
    data is there (a host wait on runrun's stream of this thread, the legacy default stream,
    which the handle's completion made wait for it), under TF's GPU index."""
    device = _capsule_device(capsule)
    if device[0] == _KDL_CUDA:
        loader.core().cuda_stream_wait_host(0, device[1])
        device[1] = _cuda_ordinals().index(device[1])
    return _tf_dlpack.from_dlpack(capsule)


# TF's kernels (Eigen) require 64-byte aligned buffers and tf.experimental.dlpack.from_dlpack
# adopts foreign memory without copying, so output buffers are allocated aligned here (the
# runtime's own outputs are 64-byte aligned too: core/runtime/tensor.h).
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
    memory) so the runtime can write the result into it before anyone reads it; None for a GPU
    tensor (the runtime allocates its output on the device)."""
    if "GPU" in tensor.device.upper():
        return None  # the runtime allocates it on the device (immutable tensors)
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
        return export(tensor)

    def from_dlpack(self, capsule):
        return adopt(capsule)

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


class TFGPUTensors(TFTensors):
    """The adapter of GPU tensors: no fast path (the buffer protocol would copy a GPU tensor
    to the host; TF's DLPack export is refused there as a device tensor, so the general path,
    which hands the tensor over as kDLCUDA, runs), outputs allocated by the runtime."""

    fast_export = staticmethod(_tf_dlpack.to_dlpack)
    capsule_finish = None

    def check(self, tensor, op, name, in_place=False):
        if in_place:
            return super().check(tensor, op, name, in_place)
        return check_tensor(tensor, op, name, hand_over=False)  # adapter_for did, once


GPU_ADAPTER = TFGPUTensors()
# Whether TF sees a GPU at all (fixed per process): on a machine without one no tensor is
# asked for its device per call (runrun.tensorflow.ops' raw ops).
HAS_GPU = bool(tf.config.list_physical_devices("GPU"))


def adapter_for(tensors):
    """GPU_ADAPTER when one of `tensors` is on a GPU, having handed them over (once for the
    op, however many tensors), else ADAPTER. Call only when HAS_GPU."""
    if any("GPU" in t.device.upper() for t in tensors):
        hand_over_gpu_tensor()
        return GPU_ADAPTER
    return ADAPTER
