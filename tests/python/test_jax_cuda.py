"""CUDA jax.Arrays through runrun.jax (issue 11, point 1): every eager op on an array of the GPU
that hvd.local_rank() picks (jax.local_devices()[local_rank]), outputs on that same device and
exact, and the stream hand-over (the input is handed over with __dlpack__(stream=) on the
device's stream for external ready events; outputs come back through jax.dlpack.from_dlpack on
it). They need a GPU and a CUDA jaxlib and are skipped with the reason "no CUDA device"
elsewhere; the C API's device outputs they rely on run without a GPU against the fake CUDA
runtime in tests/unit/gpu (gpu.staging.*: allocated outputs, their deleters)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytestmark = pytest.mark.skipif(not any(d.platform == "gpu" for d in jax.devices()),
                                reason="no CUDA device")

DTYPES = ["uint8", "int8", "int16", "int32", "float16", "bfloat16", "float32", "bool"]


@pytest.fixture
def gpu(jhvd):
    devices = [d for d in jax.local_devices() if d.platform == "gpu"]
    return devices[jhvd.local_rank() % len(devices)]


def on(device, array):
    return jax.device_put(jnp.asarray(array), device)


def only_device(array):
    (device,) = array.devices()
    return device


@pytest.mark.parametrize("dtype", DTYPES)
def test_allreduce_broadcast_of_cuda_arrays_stay_on_the_device(jhvd, gpu, dtype):
    n, rank = jhvd.size(), jhvd.rank()
    if dtype == "bool":
        x = on(gpu, np.array([rank == 0, False, True]))
        out = jhvd.allreduce(x, op=jhvd.Max, name=f"jcuda.or.{dtype}")
        assert only_device(out) == gpu
        assert np.asarray(out).tolist() == [True, False, True]
        return
    x = on(gpu, (np.arange(5) + 2 * rank).astype(dtype))
    out = jhvd.allreduce(x, op=jhvd.Sum, name=f"jcuda.sum.{dtype}")
    assert only_device(out) == gpu
    np.testing.assert_array_equal(np.asarray(out, np.float64),
                                  np.arange(5) * n + n * (n - 1))
    b = jhvd.broadcast(on(gpu, np.full(3, rank % 2).astype(dtype)), root_rank=n - 1,
                       name=f"jcuda.bcast.{dtype}")
    assert only_device(b) == gpu
    np.testing.assert_array_equal(np.asarray(b, np.float64), np.full(3, (n - 1) % 2))


def test_allgather_alltoall_reducescatter_grouped_of_cuda_arrays(jhvd, gpu):
    n, rank = jhvd.size(), jhvd.rank()
    rows = on(gpu, np.full((rank + 1, 2), rank, np.float32))
    gathered = jhvd.allgather(rows, name="jcuda.gather")
    assert only_device(gathered) == gpu
    expected = np.concatenate([np.full((r + 1, 2), r, np.float32) for r in range(n)])
    np.testing.assert_array_equal(np.asarray(gathered), expected)

    sent = on(gpu, np.arange(n, dtype=np.int32) + 100 * rank)
    received = jhvd.alltoall(sent, name="jcuda.a2a")
    assert only_device(received) == gpu
    np.testing.assert_array_equal(np.asarray(received), 100 * np.arange(n) + rank)

    scattered = jhvd.reducescatter(on(gpu, np.ones((n, 3), np.float32)), op=jhvd.Sum,
                                   name="jcuda.rs")
    assert only_device(scattered) == gpu
    np.testing.assert_array_equal(np.asarray(scattered), np.full((1, 3), n, np.float32))

    a, b = jhvd.grouped_allreduce([on(gpu, np.full(2, rank, np.float32)),
                                   on(gpu, np.full((2, 2), 1, np.int32))],
                                  op=jhvd.Sum, name="jcuda.group")
    assert only_device(a) == gpu and only_device(b) == gpu
    np.testing.assert_array_equal(np.asarray(a), np.full(2, n * (n - 1) / 2, np.float32))
    np.testing.assert_array_equal(np.asarray(b), np.full((2, 2), n, np.int32))


def test_a_late_producer_is_waited_for_on_the_device(jhvd, gpu):
    """The input comes out of a long jitted computation that is still running when the op is
    enqueued: the op must reduce its final values (the stream waits for the array)."""
    n, rank = jhvd.size(), jhvd.rank()

    @jax.jit
    def slow(x):
        for _ in range(50):
            x = jnp.sin(x) * 0 + x + 1
        return x

    x = slow(on(gpu, np.full(1 << 20, rank, np.float32)))
    out = jhvd.allreduce(x, op=jhvd.Sum, name="jcuda.late")
    assert only_device(out) == gpu
    np.testing.assert_array_equal(np.asarray(out[:4]), np.full(4, 50 * n + n * (n - 1) / 2))


def test_every_op_inside_jit_on_cuda_arrays(jhvd, gpu):
    """Inside jax.jit on GPU arrays each op is a custom call to runrun's CUDA handler (docs/gpu.md
    "Inside jax.jit"): device buffers on XLA's stream, outputs on the device, exact; the
    producer inside the same program is still running when the op is enqueued."""
    n, rank = jhvd.size(), jhvd.rank()

    @jax.jit
    def step(x, rows):
        for _ in range(20):
            x = jnp.sin(x) * 0 + x + 1  # still running on the device when the op is enqueued
        return (jhvd.allreduce(x, op=jhvd.Sum, name="jcuda.jit.sum"),
                jhvd.grouped_allreduce([x, rows], op=jhvd.Average),
                jhvd.broadcast(x, root_rank=n - 1),
                jhvd.allgather(rows), jhvd.alltoall(rows), jhvd.reducescatter(rows, op=jhvd.Sum))

    x = on(gpu, np.full(4, rank, np.float32))
    rows = on(gpu, np.arange(2 * n, dtype=np.float32) + 100 * rank)
    total, (mean_x, mean_rows), bcast, gathered, exchanged, scattered = step(x, rows)
    for out in (total, mean_x, mean_rows, bcast, gathered, exchanged, scattered):
        assert only_device(out) == gpu
    ranks = np.arange(n, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(total), np.full(4, 20 * n + ranks.sum()))
    np.testing.assert_array_equal(np.asarray(mean_x), np.full(4, 20 + ranks.mean()))
    np.testing.assert_array_equal(np.asarray(mean_rows), np.arange(2 * n) + 100 * ranks.mean())
    np.testing.assert_array_equal(np.asarray(bcast), np.full(4, 20 + n - 1, np.float32))
    every = np.concatenate([np.arange(2 * n, dtype=np.float32) + 100 * r for r in range(n)])
    np.testing.assert_array_equal(np.asarray(gathered), every)
    np.testing.assert_array_equal(np.asarray(exchanged),
                                  np.concatenate([every[2 * n * r + 2 * rank:][:2]
                                                  for r in range(n)]))
    np.testing.assert_array_equal(np.asarray(scattered),
                                  n * np.arange(2 * rank, 2 * rank + 2) + 100 * ranks.sum())
