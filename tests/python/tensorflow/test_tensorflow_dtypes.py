"""One source of truth for the accepted dtypes (issue 41, point 1): the TensorFlow adapter
accepts exactly the runtime's table, runrun._core.ACCEPTED_DTYPES (runrun/dlpack_rules.h), and
names it in that order when it refuses a dtype (tests/python/test_dlpack_rules.py checks the
other adapters). No collective: rank-independent."""

import pytest
import tensorflow as tf

from runrun.common import loader
from runrun.common.exceptions import InvalidArgumentError
from runrun.tensorflow import tensor_bridge


def test_tensorflow_adapter_accepts_the_table():
    names = tuple(d.name for d in tensor_bridge.SUPPORTED_DTYPES)
    assert names == loader.core().ACCEPTED_DTYPES
    listed = ", ".join(loader.core().ACCEPTED_DTYPES)
    with pytest.raises(InvalidArgumentError,
                       match=rf"^allreduce 'x': dtype complex64 is not supported; cast the tensor "
                             rf"\(tf.cast\) to one of {listed}$"):
        tensor_bridge.check_tensor(tf.zeros([2], tf.complex64), "allreduce", "x")
    for dtype in tensor_bridge.SUPPORTED_DTYPES:
        tensor_bridge.check_tensor(tf.zeros([2], dtype), "allreduce", "x")
    # uint16 is carried (as int16) by the ops that only move bytes, not accepted.
    assert tf.uint16 not in tensor_bridge.SUPPORTED_DTYPES
    assert tensor_bridge.MOVED_DTYPES == tensor_bridge.SUPPORTED_DTYPES + (tf.uint16,)
