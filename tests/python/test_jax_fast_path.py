"""runrun.jax's per-tensor fast path (issue 12, point 6): inputs read through the buffer
protocol, outputs allocated by the extension and made jax.Arrays only when the handle is waited
(runrun.jax.tensor_bridge). Exact results for every dtype (bfloat16 falls back to __dlpack__,
float64 under x64), 0-d and empty arrays, numpy inputs (canonicalized as jnp.asarray does),
grouped calls; the input kept alive until the op completed and never written; the output
independent of the handle; in-place ops refused as before (jax.Arrays are immutable)."""

import gc
import weakref

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax_values import everyone

import runrun
from runrun.common import collectives as c
from runrun.common.exceptions import InvalidArgumentError
from runrun.jax.tensor_bridge import ADAPTER as J

DTYPES = ["uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64", "bool"]


def summed(parts, dtype):
    stack = np.stack(parts)
    if dtype == "bool":
        return stack.any(0)
    return stack.astype(np.float64).sum(0).astype(jnp.dtype(dtype))


def check(out, expected, dtype):
    assert isinstance(out, jax.Array), type(out)
    assert out.dtype == jnp.dtype(dtype) and out.shape == expected.shape
    assert {d.platform for d in out.devices()} == {"cpu"} and not out.committed
    assert np.array_equal(np.asarray(out).astype(np.float64),
                          np.asarray(expected).astype(np.float64)), (out, expected)


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_and_shape_through_the_async_call(jhvd, dtype):
    with jax.enable_x64(dtype in ("int64", "float64")):
        for i, shape in enumerate([(17,), (3, 5), (), (0, 4)]):
            parts = everyone(jhvd.size(), shape, dtype, seed=i)
            mine = jnp.asarray(parts[jhvd.rank()])
            handle = c.allreduce(J, mine, name=f"jfast.{dtype}.{i}", op=runrun.Sum)
            assert not isinstance(handle.result, jax.Array)  # built at wait, not at enqueue
            out = handle.wait()
            check(out, summed(parts, dtype), dtype)
            assert handle.wait() is out  # built once
            check(mine, parts[jhvd.rank()], dtype)  # the input is never written


def test_input_is_kept_alive_until_the_op_completed(jhvd):
    n, r = jhvd.size(), jhvd.rank()
    x = jnp.arange(4096, dtype=jnp.float32) + r
    alive = weakref.ref(x)
    handle = c.allreduce(J, x, name="jfast.alive", op=runrun.Sum)
    del x
    gc.collect()
    for _ in range(20):  # memory a dropped input would have gone back to
        jnp.full((4096,), -1.0, jnp.float32).block_until_ready()
    out = handle.wait()
    expected = np.arange(4096, dtype=np.float64) * n + sum(range(n))
    check(out, expected.astype(np.float32), "float32")
    del handle
    gc.collect()
    assert alive() is None  # and lets go once it was waited for


def test_output_outlives_the_handle_and_handles_dropped_unwaited(jhvd):
    n = jhvd.size()
    outs = []
    for i in range(8):
        handle = c.allreduce(J, jnp.full((33,), float(i)), name=f"jfast.own.{i}",
                             op=runrun.Sum)
        outs.append(handle.wait())
        del handle
    dropped = [c.allreduce(J, jnp.ones((65,)), name=f"jfast.drop.{i}", op=runrun.Sum)
               for i in range(4)]
    del dropped  # never waited: parked until complete, buffers freed then
    gc.collect()
    jhvd.barrier()
    for i, out in enumerate(outs):
        check(out, np.full((33,), float(i) * n, np.float32), "float32")
        check(out + 1.0, np.full((33,), float(i) * n + 1.0, np.float32), "float32")


def test_numpy_inputs_are_canonicalized_as_jnp_asarray_does(jhvd):
    n = jhvd.size()
    wide = np.arange(6, dtype=np.float64)  # float32 without jax_enable_x64
    with jax.enable_x64(True):  # the same shape and dtype first with it: nothing cached across
        check(c.allreduce(J, wide, name="jfast.np64x", op=runrun.Sum).wait(), wide * n,
              "float64")
    check(c.allreduce(J, wide, name="jfast.np64", op=runrun.Sum).wait(),
          (wide * n).astype(np.float32), "float32")
    strided = np.arange(12, dtype=np.int32).reshape(3, 4)[:, ::2]  # not contiguous
    check(c.allreduce(J, strided, name="jfast.strided", op=runrun.Sum).wait(), strided * n,
          "int32")


def test_grouped_allreduce_out_of_place_mixed_dtypes(jhvd):
    n, r = jhvd.size(), jhvd.rank()
    dtypes = ["float32", "bfloat16", "int8", "bool", "float16"]
    parts = [everyone(n, (5, 3), d, seed=i) for i, d in enumerate(dtypes)]
    mine = [jnp.asarray(p[r]) for p in parts]
    handle = c.grouped_allreduce(J, mine, name="jfast.grouped", op=runrun.Sum)
    outs = handle.wait()
    assert len(outs) == len(dtypes)
    for out, p, d in zip(outs, parts, dtypes):
        check(out, summed(p, d), d)
    for m, p, d in zip(mine, parts, dtypes):
        check(m, p[r], d)


def test_broadcast_through_the_fast_path(jhvd):
    r = jhvd.rank()
    x = jnp.full((9,), float(r + 1), jnp.bfloat16)
    check(c.broadcast(J, x, 0, name="jfast.bcast").wait(), np.full((9,), 1.0), "bfloat16")
    check(c.broadcast(J, jnp.full((4,), r + 1, jnp.int16), 0, name="jfast.bcast16").wait(),
          np.ones(4), "int16")


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_in_place_on_an_immutable_array_is_refused_and_writes_nothing(jhvd, dtype):
    x = jnp.full((8,), 3.0, dtype)
    with pytest.raises(InvalidArgumentError, match="immutable"):
        c.allreduce(J, x, name=f"jfast.inplace.{dtype}", op=runrun.Sum, in_place=True).wait()
    with pytest.raises(InvalidArgumentError, match="immutable"):
        c.broadcast(J, x, 0, name=f"jfast.inplace_b.{dtype}", in_place=True).wait()
    check(x, np.full((8,), 3.0), dtype)
