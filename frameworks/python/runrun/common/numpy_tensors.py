"""A tensor adapter for numpy arrays: the smallest complete adapter of the tensor protocol
(runrun.common.tensor_protocol), used by the tests and the benchmark to show that
runrun.common holds every op's plumbing and that an adapter needs only this much.

Usage: `from runrun.common import collectives as c; from runrun.common.numpy_tensors import
ADAPTER as np_adapter; c.allreduce(np_adapter, array, op=runrun.Sum).wait()`.
Importing this module imports numpy. Thread-safety: stateless; any thread.
"""

import numpy as np

from runrun.common import loader
from runrun.common.exceptions import InvalidArgumentError
from runrun.common.tensor_protocol import TensorAdapter

# The runtime's accepted dtypes (runrun/dlpack_rules.h, through runrun._core.ACCEPTED_DTYPES)
# but bfloat16: numpy has none of its own, and ndarray.__dlpack__ refuses ml_dtypes' one.
SUPPORTED_DTYPES = tuple(
    np.dtype(name) for name in loader.core().ACCEPTED_DTYPES if name != "bfloat16")


class _Capsule:
    """Hands a "dltensor" capsule to np.from_dlpack, which wants an object with __dlpack__."""

    __slots__ = ("_capsule",)

    def __init__(self, capsule):
        self._capsule = capsule

    def __dlpack__(self, *args, **kwargs):
        del args, kwargs
        return self._capsule

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU: the runtime allocates host memory for CPU ops


class NumpyArrays(TensorAdapter):
    framework = "numpy"
    # fast_export None: the fast path calls ndarray.__dlpack__() itself (a C method).

    def check(self, tensor, op, name, in_place=False):
        if not isinstance(tensor, np.ndarray):
            raise InvalidArgumentError(
                f"{op} '{name}': expected a numpy.ndarray, got {type(tensor).__name__}")
        if tensor.dtype not in SUPPORTED_DTYPES:
            supported = ", ".join(str(d) for d in SUPPORTED_DTYPES)
            raise InvalidArgumentError(
                f"{op} '{name}': dtype {tensor.dtype} is not supported; convert the array to "
                f"one of {supported}")
        if in_place:
            if not tensor.flags.writeable:
                raise InvalidArgumentError(
                    f"{op} '{name}': in-place ops need a writeable array; pass a copy")
            if not tensor.flags.c_contiguous:
                raise InvalidArgumentError(
                    f"{op} '{name}': in-place ops need a C-contiguous array, got shape "
                    f"{tensor.shape} with strides {tensor.strides}; use np.ascontiguousarray "
                    "and the out-of-place op")
            return tensor
        if not tensor.flags.c_contiguous or not tensor.flags.writeable:
            tensor = np.array(tensor, order="C", copy=True)  # DLPack exports writeable arrays
        return tensor

    def from_dlpack(self, capsule):
        return np.from_dlpack(_Capsule(capsule))

    def empty_like(self, tensor):
        return np.empty_like(tensor, order="C")

    def ndim(self, tensor):
        return tensor.ndim

    def int32_tensor(self, values):
        return np.asarray(values, dtype=np.int32)


ADAPTER = NumpyArrays()
