"""runrun.tensorflow's per-tensor fast path (issue 12, point 6): inputs read through the buffer
protocol (bfloat16 through __dlpack__), outputs allocated by the extension and adopted by TF
only when the handle is waited (runrun.tensorflow.tensor_bridge). Exact results for every
dtype, 0-d and empty tensors, grouped calls; the input kept alive until the op completed and
never written; the output independent of the handle; in-place ops refused (tf.Tensors are
immutable) instead of writing into the tensor."""

import gc

import numpy as np
import pytest
import tensorflow as tf
from tf_values import values

import runrun
from runrun.common import collectives as c
from runrun.common.exceptions import InvalidArgumentError
from runrun.tensorflow.tensor_bridge import ADAPTER as T

DTYPES = [tf.uint8, tf.int8, tf.int16, tf.int32, tf.int64, tf.float16, tf.bfloat16,
          tf.float32, tf.float64, tf.bool]


def everyone(hvd, shape, dtype, seed=0):
    return [values(r, shape, dtype.as_numpy_dtype, seed=seed) for r in range(hvd.size())]


def summed(parts, dtype):
    stack = np.stack(parts)
    if dtype == tf.bool:
        return stack.any(0)
    return stack.astype(np.float64).sum(0).astype(dtype.as_numpy_dtype)


def check(out, expected, dtype):
    assert isinstance(out, tf.Tensor), type(out)
    assert out.dtype == dtype and tuple(out.shape) == expected.shape
    assert "CPU" in out.device.upper()
    assert np.array_equal(out.numpy().astype(np.float64), expected.astype(np.float64)), \
        (out, expected)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_every_dtype_and_shape_through_the_async_call(hvd, dtype):
    for i, shape in enumerate([(17,), (3, 5), (), (0, 4)]):
        parts = everyone(hvd, shape, dtype, seed=i)
        mine = tf.constant(parts[hvd.rank()], dtype=dtype)
        handle = c.allreduce(T, mine, name=f"tffast.{dtype.name}.{i}", op=runrun.Sum)
        assert not isinstance(handle.result, tf.Tensor)  # adopted at wait, not at enqueue
        out = handle.wait()
        check(out, summed(parts, dtype), dtype)
        assert handle.wait() is out
        check(mine, parts[hvd.rank()], dtype)  # the input is never written
        if dtype != tf.bool:  # a TF kernel reads the adopted buffer
            check(out + tf.zeros_like(out), summed(parts, dtype), dtype)


def test_input_is_kept_alive_until_the_op_completed(hvd):
    n, r = hvd.size(), hvd.rank()
    x = tf.range(4096, dtype=tf.float32) + float(r)
    handle = c.allreduce(T, x, name="tffast.alive", op=runrun.Sum)
    del x
    gc.collect()
    for _ in range(20):  # memory a dropped input would have gone back to
        tf.fill([4096], -1.0).numpy()
    expected = (np.arange(4096, dtype=np.float64) * n + sum(range(n))).astype(np.float32)
    check(handle.wait(), expected, tf.float32)


def test_outputs_outlive_their_handles_and_handles_dropped_unwaited(hvd):
    n = hvd.size()
    outs = []
    for i in range(8):
        handle = c.allreduce(T, tf.fill([33], float(i)), name=f"tffast.own.{i}", op=runrun.Sum)
        outs.append(handle.wait())
        del handle
    dropped = [c.allreduce(T, tf.ones([65]), name=f"tffast.drop.{i}", op=runrun.Sum)
               for i in range(4)]
    del dropped  # never waited: parked until complete, buffers freed then
    gc.collect()
    hvd.barrier()
    for i, out in enumerate(outs):
        check(out * 2.0, np.full((33,), 2.0 * i * n, np.float32), tf.float32)


def test_grouped_allreduce_out_of_place_mixed_dtypes(hvd):
    r = hvd.rank()
    dtypes = [tf.float32, tf.bfloat16, tf.int8, tf.bool, tf.float16, tf.int64]
    parts = [everyone(hvd, (5, 3), d, seed=i) for i, d in enumerate(dtypes)]
    mine = [tf.constant(p[r], dtype=d) for p, d in zip(parts, dtypes)]
    outs = c.grouped_allreduce(T, mine, name="tffast.grouped", op=runrun.Sum).wait()
    assert len(outs) == len(dtypes)
    for out, p, d in zip(outs, parts, dtypes):
        check(out, summed(p, d), d)
    for m, p, d in zip(mine, parts, dtypes):
        check(m, p[r], d)


def test_broadcast_through_the_fast_path(hvd):
    r = hvd.rank()
    for dtype in (tf.bfloat16, tf.int16, tf.bool):
        x = tf.cast(tf.fill([9], r + 1), dtype) if dtype != tf.bool else tf.fill([9], r == 0)
        expected = np.ones(9) if dtype != tf.bool else np.ones(9, bool)
        check(c.broadcast(T, x, 0, name=f"tffast.bcast.{dtype.name}").wait(), expected, dtype)


@pytest.mark.parametrize("dtype", [tf.float32, tf.bfloat16], ids=lambda d: d.name)
def test_in_place_on_an_immutable_tensor_is_refused_and_writes_nothing(hvd, dtype):
    x = tf.fill([8], tf.constant(3.0, dtype))
    with pytest.raises(InvalidArgumentError, match="immutable"):
        c.allreduce(T, x, name=f"tffast.inplace.{dtype.name}", op=runrun.Sum,
                    in_place=True).wait()
    with pytest.raises(InvalidArgumentError, match="immutable"):
        c.broadcast(T, x, 0, name=f"tffast.inplace_b.{dtype.name}", in_place=True).wait()
    check(x, np.full((8,), 3.0), dtype)
