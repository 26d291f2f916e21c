"""One source of truth for the accepted dtypes (issue 41, point 1): the extension exposes the
runtime's table (runrun/dlpack_rules.h) as runrun._core.ACCEPTED_DTYPES, and the numpy, torch
and JAX adapters accept exactly those dtypes (numpy all but bfloat16, which it cannot export
through DLPack), naming them in that order when they refuse one. The TensorFlow adapter's
check is in tests/python/tensorflow/test_tensorflow_dtypes.py. No collective: rank-independent."""

import numpy as np
import pytest

from runrun.common import loader
from runrun.common.exceptions import InvalidArgumentError

TABLE = ("uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
         "bool")


def test_the_extension_exposes_the_runtimes_table():
    assert loader.core().ACCEPTED_DTYPES == TABLE


def test_numpy_adapter_accepts_the_table_but_bfloat16():
    from runrun.common import numpy_tensors

    names = tuple(str(d) for d in numpy_tensors.SUPPORTED_DTYPES)
    assert names == tuple(n for n in loader.core().ACCEPTED_DTYPES if n != "bfloat16")
    with pytest.raises(InvalidArgumentError,
                       match="allreduce 'x': dtype uint16 is not supported; convert the array to "
                             "one of uint8, int8, int16, int32, int64, float16, float32, "
                             "float64, bool$"):
        numpy_tensors.ADAPTER.check(np.zeros(2, np.uint16), "allreduce", "x")
    for name in names:
        numpy_tensors.ADAPTER.check(np.zeros(2, name), "allreduce", "x")


def test_torch_adapter_accepts_the_table():
    import torch

    from runrun.torch import tensor_bridge

    names = tuple(str(d).removeprefix("torch.") for d in tensor_bridge.SUPPORTED_DTYPES)
    assert names == loader.core().ACCEPTED_DTYPES
    listed = ", ".join(f"torch.{n}" for n in loader.core().ACCEPTED_DTYPES)
    with pytest.raises(InvalidArgumentError,
                       match=f"^allreduce 'x': dtype torch.complex64 is not supported; convert "
                             f"the tensor to one of {listed}$"):
        tensor_bridge.check_tensor(torch.zeros(2, dtype=torch.complex64), "allreduce", "x")
    for dtype in tensor_bridge.SUPPORTED_DTYPES:
        tensor_bridge.check_tensor(torch.zeros(2, dtype=dtype), "allreduce", "x")


def test_jax_adapter_accepts_the_table():
    jnp = pytest.importorskip("jax.numpy")

    from runrun.jax import tensor_bridge

    names = tuple(str(d) for d in tensor_bridge.SUPPORTED_DTYPES)
    assert names == loader.core().ACCEPTED_DTYPES
    listed = ", ".join(loader.core().ACCEPTED_DTYPES)
    with pytest.raises(InvalidArgumentError,
                       match=f"^allreduce 'x': dtype uint16 is not supported; convert the array "
                             rf"\(x.astype\(...\)\) to one of {listed}$"):
        tensor_bridge.check_dtype(jnp.uint16, "allreduce", "x")
    for dtype in tensor_bridge.SUPPORTED_DTYPES:
        tensor_bridge.check_dtype(dtype, "allreduce", "x")
