"""runrun.jax's tensor adapter (runrun.common.tensor_protocol): jax.Arrays <-> DLPack capsules
for runrun._core, with the call-time checks.

Why: jax.Arrays are immutable, so the runtime reads an input in place (zero copy on CPU) but
never writes into one. The per-tensor fast path (allreduce, broadcast, grouped_allreduce) reads
an input through the buffer protocol (fast_export = memoryview: ~0.6 us, against 3-7 us for
jax.Array.__dlpack__; both wait until the array is ready) and lets the extension allocate the
output, which capsule_finish turns into a new jax.Array only when the handle is waited. The
general path's outputs are writable numpy host buffers (empty_like) that output_finish turns
into a jax.Array; outputs the runtime allocates (allgather, alltoall, reducescatter) are
imported with jax.dlpack.from_dlpack. A host buffer becomes a jax.Array through
xc.batched_device_put, what jax.device_put ends in (~4 us, against ~40 us for jnp.asarray's
dispatch), with the same result (uncommitted, on the CPU device, zero copy when aligned);
when that internal function is missing (another jax), through jnp.asarray.
numpy cannot export bfloat16 through DLPack, so a bfloat16 output buffer is exported as its
uint16 view with the DLPack type code patched to kDLBfloat.
A jax.Array on one CUDA device (docs/gpu.md, "Framework adapters") goes to the runtime as
kDLCUDA with a stream: the device's stream for external ready events
(Device.get_stream_for_external_ready_events(), what jax.dlpack.from_dlpack consumes on) is
this thread's runrun stream, the input is exported with __dlpack__(stream=that stream) (JAX
makes it wait for the array), the runtime allocates every output on the device (empty_like
answers None), and the handle's completion makes that stream wait for the outputs before
from_dlpack imports them on it.
Thread-safety: stateless but for caches filled on first use (dict updates are atomic under the
GIL); any thread (also XLA's callback threads inside jax.jit).
"""

import ctypes

import jax
import jax.numpy as jnp
import numpy as np

from runrun.common import loader
from runrun.common.exceptions import InvalidArgumentError
from runrun.common.tensor_protocol import TensorAdapter

# The runtime's accepted dtypes (runrun/dlpack_rules.h, through runrun._core.ACCEPTED_DTYPES).
SUPPORTED_DTYPES = tuple(np.dtype(getattr(jnp, name)) for name in loader.core().ACCEPTED_DTYPES)
_BFLOAT16 = np.dtype(jnp.bfloat16)
_KDL_BFLOAT = 4
_KDL_UINT = 1
# offsetof(DLManagedTensor, dl_tensor.dtype.code): data (8), device (2 x int32), ndim (int32).
_DTYPE_CODE_OFFSET = 20
_DEVICE_OFFSET = 8  # offsetof(DLManagedTensor, dl_tensor.device)
_KDL_CUDA = 2
_STREAMS = {}  # jax Device -> its stream for external ready events (an int), on first use

_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def op_label(op, name):
    """How a message names an op: "allreduce 'grads'", or "allreduce (unnamed)" for an op that
    gets its name only when it runs (inside jax.jit)."""
    return f"{op} '{name}'" if name is not None else f"{op} (unnamed)"


def check_dtype(dtype, op, name):
    """Raises InvalidArgumentError (a ValueError) for a dtype the runtime cannot reduce."""
    if np.dtype(dtype) not in SUPPORTED_DTYPES:
        supported = ", ".join(str(d) for d in SUPPORTED_DTYPES)
        raise InvalidArgumentError(
            f"{op_label(op, name)}: dtype {np.dtype(dtype)} is not supported; convert the "
            f"array (x.astype(...)) to one of {supported}")


def check_array(tensor, op, name):
    """Validates a concrete jax.Array for `op`; returns it (a numpy array or Python scalar is
    turned into a jax.Array first, as jax.numpy functions do)."""
    if not isinstance(tensor, jax.Array):
        if not isinstance(tensor, (np.ndarray, np.generic, int, float, bool)):
            raise InvalidArgumentError(
                f"{op} '{name}': expected a jax.Array, got {type(tensor).__name__}")
        tensor = jnp.asarray(tensor)
    check_dtype(tensor.dtype, op, name)
    devices = tensor.devices()
    platforms = {d.platform for d in devices}
    if platforms != {"cpu"}:
        if platforms == {"gpu"} and len(devices) == 1:
            loader.core().set_cuda_stream(cuda_stream(next(iter(devices))))
            return tensor
        raise InvalidArgumentError(
            f"{op} '{name}': array is on {sorted(str(d) for d in devices)} but runrun takes "
            "arrays on the CPU or on one CUDA device; move it with "
            "jax.device_put(x, jax.local_devices()[hvd.local_rank()])")
    return tensor


def cuda_stream(device):
    """The stream runrun produces and consumes `device`'s arrays on: JAX's stream for external
    ready events of that device, which jax.dlpack.from_dlpack imports on."""
    stream = _STREAMS.get(device)
    if stream is None:
        stream = _STREAMS[device] = device.get_stream_for_external_ready_events()
    return stream


def cuda_device(tensor):
    """The CUDA device of a single-device jax.Array, else None (host arrays, numpy)."""
    if not isinstance(tensor, jax.Array):
        return None
    devices = tensor.devices()
    if len(devices) != 1:
        return None
    device = next(iter(devices))
    return device if device.platform == "gpu" else None


class _Capsule:
    """Hands a "dltensor" capsule to jax.dlpack.from_dlpack, which wants __dlpack__ and
    __dlpack_device__ (the capsule's own device: the runtime allocates on the input's)."""

    __slots__ = ("_capsule", "_device")

    def __init__(self, capsule, device=(1, 0)):
        self._capsule = capsule
        self._device = device

    def __dlpack__(self, *args, **kwargs):
        # stream=: from_dlpack consumes on the device's stream for external ready events, the
        # one handed over at enqueue, which the handle's completion made wait for the output.
        del args, kwargs
        return self._capsule

    def __dlpack_device__(self):
        return self._device


def capsule_device(capsule):
    """(device_type, device_id) of a "dltensor" capsule."""
    device = ctypes.cast(_capsule_pointer(capsule, b"dltensor") + _DEVICE_OFFSET,
                         ctypes.POINTER(ctypes.c_int32))
    return (device[0], device[1])


def export_host_buffer(buffer):
    """A "dltensor" capsule of a numpy output buffer (bfloat16 included)."""
    if buffer.dtype != _BFLOAT16:
        return buffer.__dlpack__()
    capsule = buffer.view(np.uint16).__dlpack__()
    ctypes.c_uint8.from_address(
        _capsule_pointer(capsule, b"dltensor") + _DTYPE_CODE_OFFSET).value = _KDL_BFLOAT
    return capsule


try:  # what jax.device_put(numpy array) ends in, without its dispatch (jax 0.4.3x-0.10)
    from jax._src.core import ShapedArray as _ShapedArray
    from jax._src.lib import xla_client as _xc
    _batched_device_put = _xc.batched_device_put
except (ImportError, AttributeError):
    _batched_device_put = None

_placement = []  # [(SingleDeviceSharding, [device]) of the first CPU device], filled on first use
_AVALS = {}  # (shape, numpy dtype) -> ShapedArray


def host_to_jax(host):
    """A new jax.Array of the numpy array `host` on the CPU device (uncommitted, as
    jnp.asarray makes it; it may share `host`'s memory, which nothing writes any more)."""
    if _batched_device_put is None:
        return jnp.asarray(host)
    dtype = host.dtype
    # 64-bit without jax_enable_x64 (a numpy input; the setting may change at any time) becomes
    # 32-bit, as jnp.asarray makes it.
    if dtype.itemsize == 8 and jax.dtypes.canonicalize_dtype(dtype) != dtype:
        return jnp.asarray(host)
    key = (host.shape, dtype)
    aval = _AVALS.get(key)
    if aval is None:
        if len(_AVALS) > 4096:  # a program of ever new shapes: bounded
            _AVALS.clear()
        aval = _AVALS[key] = _ShapedArray(host.shape, dtype)
    if not _placement:
        device = jax.devices("cpu")[0]
        _placement.append((jax.sharding.SingleDeviceSharding(device), [device]))
    sharding, devices = _placement[0]
    return _batched_device_put(aval, sharding, [host], devices, False)


def finish_host_buffer(handle):
    """output_finish: the completed numpy buffer as a new jax.Array."""
    return host_to_jax(handle.result)


def finish_capsule(handle):
    """capsule_finish: the extension's completed output buffer (a "dltensor" capsule) as a new
    jax.Array."""
    capsule = handle.result
    try:
        host = np.from_dlpack(_Capsule(capsule))
    except RuntimeError:  # bfloat16, which numpy cannot import (the capsule stays unused)
        code = ctypes.c_uint8.from_address(
            _capsule_pointer(capsule, b"dltensor") + _DTYPE_CODE_OFFSET)
        if code.value != _KDL_BFLOAT:
            raise
        code.value = _KDL_UINT  # its bits as uint16, viewed back as bfloat16
        host = np.from_dlpack(_Capsule(capsule)).view(_BFLOAT16)
    return host_to_jax(host)


class JaxArrays(TensorAdapter):
    """The jax adapter (CPU arrays). The fast path reads inputs through the buffer protocol and
    allocates outputs itself (capsule_finish wraps them); the general path exports inputs with
    __dlpack__ and allocates numpy buffers that output_finish wraps."""

    framework = "jax"
    fast_export = memoryview
    capsule_finish = staticmethod(finish_capsule)
    output_finish = staticmethod(finish_host_buffer)

    def check(self, tensor, op, name, in_place=False):
        if in_place:
            raise InvalidArgumentError(
                f"{op} '{name}': jax.Arrays are immutable; use the out-of-place op, which "
                "returns a new array")
        return check_array(tensor, op, name)

    def to_dlpack(self, tensor):
        if isinstance(tensor, np.ndarray):
            return export_host_buffer(tensor)
        device = cuda_device(tensor)
        if device is not None:  # the stream waits for the array, not the host
            return tensor.__dlpack__(stream=cuda_stream(device))
        return tensor.__dlpack__()

    def from_dlpack(self, capsule):
        return jax.dlpack.from_dlpack(_Capsule(capsule, capsule_device(capsule)))

    def empty_like(self, tensor):
        if cuda_device(tensor) is not None:
            return None  # the runtime allocates it on the device (immutable arrays)
        return np.empty(tensor.shape, dtype=tensor.dtype)

    def ndim(self, tensor):
        return tensor.ndim

    def splits_to_list(self, splits):
        if isinstance(splits, (jax.Array, np.ndarray)):
            if splits.ndim != 1 or not np.issubdtype(splits.dtype, np.integer):
                raise ValueError("splits must be 1-D integers")
            splits = np.asarray(splits).tolist()
        return [int(s) for s in splits]

    def int32_tensor(self, values):
        return jnp.asarray(np.asarray(values, dtype=np.int32))


ADAPTER = JaxArrays()


class JaxHostArrays(JaxArrays):
    """The adapter of the callbacks inside jax.jit (jit_ops.py): outputs stay numpy buffers,
    which XLA copies into the jitted program's outputs (no jax.Array in between)."""

    capsule_finish = None
    output_finish = None


HOST_ADAPTER = JaxHostArrays()
