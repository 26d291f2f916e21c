"""runrun.jax's errors (issue 12, point 5): what a caller can get wrong on one rank raises
runrun's InvalidArgumentError (a ValueError, as jax.numpy raises for bad arguments) before
anything is enqueued: eagerly at the call, inside jax.jit when the function is traced. What
only the ranks together can find (shapes that differ between ranks) raises runrun's
MismatchError (a HorovodInternalError, a RuntimeError) eagerly, and inside jit
jax.errors.JaxRuntimeError (what any failing op of a jitted function raises, also a
RuntimeError) carrying runrun's message. The runtime keeps working afterwards."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

UNSUPPORTED = ["uint16", "uint32", "complex64", "float8_e4m3fn"]


@pytest.mark.parametrize("dtype", UNSUPPORTED)
def test_unsupported_dtype_eager_and_at_trace(jhvd, dtype):
    a = jnp.zeros((3,), dtype)
    for op in (jhvd.allreduce, jhvd.allgather, lambda x: jhvd.broadcast(x, 0),
               jhvd.alltoall, lambda x: jhvd.grouped_allreduce([x])):
        with pytest.raises(jhvd.InvalidArgumentError, match=f"dtype {dtype} is not supported"):
            op(a)
        with pytest.raises(ValueError, match=f"dtype {dtype} is not supported"):
            jax.jit(op)(a)
    # Inside jit an unnamed op is named only when it runs: the message says unnamed, not 'None'.
    with pytest.raises(ValueError, match=f"^allreduce \\(unnamed\\): dtype {dtype} is not"):
        jax.jit(jhvd.allreduce)(a)
    with pytest.raises(ValueError, match=f"^allreduce 'w': dtype {dtype} is not"):
        jax.jit(lambda x: jhvd.allreduce(x, name="w"))(a)


def test_uint64_refused_under_x64(jhvd):
    with jax.enable_x64(True):
        with pytest.raises(ValueError, match="dtype uint64 is not supported"):
            jhvd.allreduce(jnp.zeros((2,), jnp.uint64))


def test_argument_errors(jhvd):
    with pytest.raises(jhvd.InvalidArgumentError, match="expected a jax.Array, got str"):
        jhvd.allreduce("not an array")
    with pytest.raises(jhvd.InvalidArgumentError, match="0-dimensional"):
        jhvd.allgather(jnp.float32(1))
    with pytest.raises(jhvd.InvalidArgumentError, match="Average or op=Sum"):
        jhvd.reducescatter(jnp.ones(4), op=jhvd.Max)
    with pytest.raises(jhvd.InvalidArgumentError, match="explicit splits"):
        jax.jit(lambda a: jhvd.alltoall(a, splits=[jhvd.size()] + [0] * (jhvd.size() - 1)))(
            jnp.ones(jhvd.size()))
    with pytest.raises(jhvd.UnsupportedError, match="op=Adasum combines floating-point"):
        jhvd.allreduce(jnp.ones(2, jnp.int32), op=jhvd.Adasum)


def test_shape_mismatch_eager_raises_on_every_rank(jhvd):
    a = jnp.ones(jhvd.rank() + 2)
    with pytest.raises(jhvd.MismatchError) as info:
        jhvd.allreduce(a, name="jax.mismatched")
    assert isinstance(info.value, RuntimeError) and "jax.mismatched" in str(info.value)
    assert np.array_equal(jhvd.allreduce(jnp.ones(2), op=jhvd.Sum, name="jax.after"),
                          np.full(2, float(jhvd.size())))


def test_shape_mismatch_inside_jit_raises_jax_runtime_error(jhvd):
    a = jnp.ones(jhvd.rank() + 2)
    with pytest.raises(jax.errors.JaxRuntimeError, match="jax.jit_mismatched") as info:
        jax.jit(lambda x: jhvd.allreduce(x, name="jax.jit_mismatched"))(a).block_until_ready()
    assert isinstance(info.value, RuntimeError)
    assert "MismatchError" in str(info.value)
    assert np.array_equal(jax.jit(lambda x: jhvd.allreduce(x, op=jhvd.Sum))(jnp.ones(2)),
                          np.full(2, float(jhvd.size())))


def test_uneven_allgather_inside_jit_names_the_fix(jhvd):
    a = jnp.ones((jhvd.rank() + 1, 2))
    with pytest.raises(jax.errors.JaxRuntimeError, match="same first dimension"):
        jax.jit(jhvd.allgather)(a).block_until_ready()
