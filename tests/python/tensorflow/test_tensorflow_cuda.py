"""GPU tf.Tensors through runrun.tensorflow (issue 11, point 1): every op on a tensor of the GPU
that hvd.local_rank() picks (tf.config.experimental.set_visible_devices, as in Horovod's
examples, is for the script: here the tensors are placed with tf.device), outputs on that
same GPU and exact, eagerly and inside tf.function. They need a GPU and a CUDA build of
TensorFlow and are skipped with the reason "no CUDA device" elsewhere; the C API's device
outputs they rely on run without a GPU against the fake CUDA runtime in tests/unit/gpu."""

import numpy as np
import pytest
import tensorflow as tf

pytestmark = pytest.mark.skipif(not tf.config.list_physical_devices("GPU"),
                                reason="no CUDA device")

DTYPES = [tf.uint8, tf.int8, tf.int32, tf.float16, tf.bfloat16, tf.float32, tf.float64]


@pytest.fixture
def gpu(hvd):
    gpus = tf.config.get_visible_devices("GPU")
    return f"/GPU:{hvd.local_rank() % len(gpus)}"


def on(device, value, dtype):
    with tf.device(device):
        return tf.identity(tf.cast(tf.constant(value), dtype))


def same_gpu(tensor, device):
    return tensor.device.upper().endswith(device.upper().lstrip("/"))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_allreduce_broadcast_of_gpu_tensors_stay_on_the_gpu(hvd, gpu, dtype):
    n, rank = hvd.size(), hvd.rank()
    x = on(gpu, np.arange(5) + 2 * rank, dtype)
    out = hvd.allreduce(x, op=hvd.Sum, name=f"tfcuda.sum.{dtype.name}")
    assert same_gpu(out, gpu), out.device
    np.testing.assert_array_equal(tf.cast(out, tf.float64).numpy(),
                                  np.arange(5) * n + n * (n - 1))
    b = hvd.broadcast(on(gpu, np.full(3, rank % 2), dtype), root_rank=n - 1,
                      name=f"tfcuda.bcast.{dtype.name}")
    assert same_gpu(b, gpu), b.device
    np.testing.assert_array_equal(tf.cast(b, tf.float64).numpy(), np.full(3, (n - 1) % 2))


def test_allgather_alltoall_reducescatter_grouped_of_gpu_tensors(hvd, gpu):
    n, rank = hvd.size(), hvd.rank()
    gathered = hvd.allgather(on(gpu, np.full((rank + 1, 2), rank), tf.float32),
                             name="tfcuda.gather")
    assert same_gpu(gathered, gpu), gathered.device
    expected = np.concatenate([np.full((r + 1, 2), r, np.float32) for r in range(n)])
    np.testing.assert_array_equal(gathered.numpy(), expected)

    received, splits = hvd.alltoall(on(gpu, np.arange(n) + 100 * rank, tf.int32),
                                    splits=[1] * n, name="tfcuda.a2a")
    assert same_gpu(received, gpu), received.device
    np.testing.assert_array_equal(received.numpy(), 100 * np.arange(n) + rank)
    np.testing.assert_array_equal(splits.numpy(), np.ones(n))
    received = hvd.alltoall(on(gpu, np.arange(n) + 100 * rank, tf.int32), name="tfcuda.a2a.eq")
    assert same_gpu(received, gpu), received.device
    np.testing.assert_array_equal(received.numpy(), 100 * np.arange(n) + rank)

    scattered = hvd.reducescatter(on(gpu, np.ones((n, 3)), tf.float32), op=hvd.Sum,
                                  name="tfcuda.rs")
    assert same_gpu(scattered, gpu), scattered.device
    np.testing.assert_array_equal(scattered.numpy(), np.full((1, 3), n, np.float32))

    a, b = hvd.grouped_allreduce([on(gpu, np.full(2, rank), tf.float32),
                                  on(gpu, np.ones((2, 2)), tf.int32)], op=hvd.Sum,
                                 name="tfcuda.group")
    assert same_gpu(a, gpu) and same_gpu(b, gpu), (a.device, b.device)
    np.testing.assert_array_equal(a.numpy(), np.full(2, n * (n - 1) / 2, np.float32))
    np.testing.assert_array_equal(b.numpy(), np.full((2, 2), n, np.int32))


def test_allreduce_of_a_gpu_tensor_inside_tf_function(hvd, gpu):
    n, rank = hvd.size(), hvd.rank()

    @tf.function
    def step(x):
        return hvd.allreduce(x * 2.0, op=hvd.Average, name="tfcuda.fn")

    with tf.device(gpu):
        out = step(tf.fill([1 << 16], float(rank)))
    np.testing.assert_array_equal(out.numpy()[:4], np.full(4, n - 1, np.float32))
