"""runrun.tensorflow where it differed from Horovod 0.28.1's horovod.tensorflow: the dtypes each
op accepts (uint16 in allgather, broadcast and alltoall), broadcast_global_variables (a
RuntimeError naming broadcast_variables), DistributedGradientTape on a rank outside its process
set (the local gradients, unreduced), get_local_and_global_gradients, and TF1 graph mode (refused
with UnsupportedError saying what to use)."""

import numpy as np
import pytest
import tensorflow as tf

MODES = ["eager", "function"]

# Horovod 0.28.1's TF ops (REGISTER_OP in horovod/tensorflow/mpi_ops.cc): the dtypes each takes.
MOVED = [tf.uint8, tf.int8, tf.uint16, tf.int16, tf.int32, tf.int64, tf.float16, tf.float32,
         tf.float64, tf.bool]
REDUCED = [tf.uint8, tf.int8, tf.int32, tf.int64, tf.float16, tf.float32, tf.float64]
SCATTERED = [tf.int32, tf.int64, tf.float16, tf.float32, tf.float64]


def run(mode, function, *args):
    return function(*args) if mode == "eager" else tf.function(function)(*args)


def contribution(r, shape, dtype):
    """Rank r's tensor: for uint16 values above int16's range (a sign slip would show)."""
    count = int(np.prod(shape))
    if dtype == tf.bool:
        flat = (np.arange(count) + r) % 2 == 0
    elif dtype == tf.uint16:
        flat = 65535 - 997 * r - np.arange(count)
    else:
        flat = (np.arange(count) + 3 * r) % 7 + 1
    return flat.reshape(shape).astype(dtype.as_numpy_dtype)


@pytest.mark.parametrize("dtype", MOVED, ids=lambda d: d.name)
def test_every_dtype_horovods_allgather_broadcast_alltoall_take(hvd, dtype):
    n, r = hvd.size(), hvd.rank()
    parts = [contribution(k, (k + 1, 2), dtype) for k in range(n)]
    gathered = hvd.allgather(tf.constant(parts[r]))
    assert gathered.dtype == dtype and np.array_equal(gathered.numpy(), np.concatenate(parts))
    out = hvd.broadcast(tf.constant(contribution(r, (3,), dtype)), n - 1)
    assert out.dtype == dtype and np.array_equal(out.numpy(), contribution(n - 1, (3,), dtype))
    sent = tf.constant(contribution(r, (n, 2), dtype))
    received = hvd.alltoall(sent)
    expected = np.stack([contribution(k, (n, 2), dtype)[r] for k in range(n)])
    assert received.dtype == dtype and np.array_equal(received.numpy(), expected)


@pytest.mark.parametrize("dtype", REDUCED, ids=lambda d: d.name)
def test_every_dtype_horovods_allreduce_takes(hvd, dtype):
    n, r = hvd.size(), hvd.rank()
    out = hvd.allreduce(tf.constant(contribution(r, (4,), dtype)), op=hvd.Sum)
    expected = sum(contribution(k, (4,), dtype).astype(np.float64) for k in range(n))
    assert out.dtype == dtype and np.array_equal(out.numpy().astype(np.float64), expected)
    outs = hvd.grouped_allreduce([tf.constant(contribution(r, (2,), dtype))], op=hvd.Sum)
    assert outs[0].dtype == dtype


@pytest.mark.parametrize("dtype", SCATTERED, ids=lambda d: d.name)
def test_every_dtype_horovods_reducescatter_takes(hvd, dtype):
    n, r = hvd.size(), hvd.rank()
    out = hvd.reducescatter(tf.constant(contribution(r, (n, 2), dtype)), op=hvd.Sum)
    total = sum(contribution(k, (n, 2), dtype).astype(np.float64) for k in range(n))
    assert out.dtype == dtype and np.array_equal(out.numpy().astype(np.float64), total[r:r + 1])


@pytest.mark.parametrize("mode", MODES)
def test_uint16_moves_exactly_in_every_byte_moving_op(hvd, mode):
    """uint16 (not a runtime type) crosses as its bytes: values above 32767 come back as they
    were, eagerly and inside tf.function, with grouped_allgather, alltoall with splits and
    broadcast_variables of a uint16 variable too."""
    n, r = hvd.size(), hvd.rank()
    u16 = tf.uint16
    parts = [contribution(k, (k + 1, 3), u16) for k in range(n)]
    splits = [p + 1 for p in range(n)]
    variable = tf.Variable(contribution(r, (5,), u16))

    def ops(x, y, z):
        gathered = hvd.allgather(x)
        grouped = hvd.grouped_allgather([x, y])
        root = hvd.broadcast(y, n - 1)
        sent, received_splits = hvd.alltoall(z, splits=splits)
        hvd.broadcast_variables([variable], root_rank=n - 1)
        return gathered, grouped, root, sent, received_splits

    rows = sum(splits)
    z = np.full((rows, 2), 60000 + r, np.uint16)
    gathered, grouped, root, sent, received_splits = run(
        mode, ops, tf.constant(parts[r]), tf.constant(contribution(r, (4,), u16)),
        tf.constant(z))
    assert all(t.dtype == u16 for t in [gathered, *grouped, root, sent])
    assert np.array_equal(gathered.numpy(), np.concatenate(parts))
    assert np.array_equal(grouped[0].numpy(), np.concatenate(parts))
    assert np.array_equal(grouped[1].numpy(),
                          np.concatenate([contribution(k, (4,), u16) for k in range(n)]))
    assert np.array_equal(root.numpy(), contribution(n - 1, (4,), u16))
    assert received_splits.numpy().tolist() == [r + 1] * n
    assert np.array_equal(sent.numpy(), np.concatenate(
        [np.full((r + 1, 2), 60000 + k, np.uint16) for k in range(n)]))
    assert variable.dtype == u16
    assert np.array_equal(variable.numpy(), contribution(n - 1, (5,), u16))


def test_uint16_reductions_are_refused_as_horovods(hvd):
    """Horovod's allreduce and reducescatter do not take uint16 either; the message says which
    ops do."""
    x = tf.constant([1, 2], tf.uint16)
    with pytest.raises(hvd.InvalidArgumentError, match="uint16 is not supported.*allgather"):
        hvd.allreduce(x, op=hvd.Sum)
    with pytest.raises(hvd.InvalidArgumentError, match="uint16 is not supported"):
        hvd.reducescatter(tf.constant([[1, 2]] * hvd.size(), tf.uint16), op=hvd.Sum)


def test_broadcast_global_variables_raises_runtime_error_naming_broadcast_variables(hvd):
    """Horovod's broadcast_global_variables raises RuntimeError in eager mode, pointing to
    broadcast_variables; inside a tf.function (where Horovod's would broadcast the empty TF1
    collection) runrun raises the same."""
    assert "broadcast_global_variables" in dir(hvd)
    from runrun.tensorflow import mpi_ops

    assert mpi_ops.broadcast_global_variables is hvd.broadcast_global_variables
    with pytest.raises(RuntimeError, match=r"broadcast_variables\(") as raised:
        hvd.broadcast_global_variables(0)
    assert isinstance(raised.value, hvd.UnsupportedError)
    with pytest.raises(RuntimeError, match=r"broadcast_variables\("):
        tf.function(lambda: hvd.broadcast_global_variables(0))()


@pytest.mark.parametrize("mode", MODES)
def test_distributed_gradient_tape_on_a_rank_outside_its_process_set(hvd, mode):
    """Horovod reduces the gradients over the set's ranks and returns the others their own
    gradients, unreduced (local sources still divided by the set's size). The set is every
    rank but the last."""
    n, r = hvd.size(), hvd.rank()
    if n < 2:
        pytest.skip("a set that leaves a rank out needs 2 ranks")
    members = list(range(n - 1))
    subset = hvd.add_process_set(members)
    try:
        v = tf.Variable([1.0, 2.0, 3.0])
        w = tf.Variable([1.0, 1.0])
        s = tf.Variable([[0.0], [0.0], [0.0]])

        def step():
            with tf.GradientTape() as tape:
                rows = tf.gather(s, [0, 2])
                loss = (tf.reduce_sum(v) * float(r + 1) + tf.reduce_sum(w) * float(2 * r + 2)
                        + tf.reduce_sum(rows) * float(r + 1))
            tape = hvd.DistributedGradientTape(tape, process_set=subset, sparse_as_dense=True)
            tape.register_local_source(w)
            return tape.gradient(loss, [v, w, s])

        g_v, g_w, g_s = run(mode, step)
        own = r + 1.0
        expected = np.mean([k + 1.0 for k in members]) if r in members else own
        assert np.allclose(g_v.numpy(), [expected] * 3)
        assert np.allclose(g_w.numpy(), [(2 * r + 2.0) / len(members)] * 2)
        assert isinstance(g_s, tf.Tensor)  # sparse_as_dense applies on every rank
        assert np.allclose(g_s.numpy(), [[expected], [0.0], [expected]])
    finally:
        hvd.remove_process_set(subset)


@pytest.mark.parametrize("mode", MODES)
def test_get_local_and_global_gradients(hvd, mode):
    """Horovod's PartialDistributedGradientTape.get_local_and_global_gradients (also on
    DistributedGradientTape): gradient() split into (local, global) lists of (source,
    gradient) pairs in the order of the sources."""
    n, r = hvd.size(), hvd.rank()
    layer = tf.keras.layers.Dense(1, use_bias=False, kernel_initializer="ones")
    layer.build((None, 2))
    a = tf.Variable([1.0, 1.0])
    b = tf.Variable(2.0)

    sources = []  # the sources of each pair, recorded when step runs (or is traced)

    def step():
        x = tf.fill([3, 2], float(r + 1))
        with tf.GradientTape() as tape:
            loss = (tf.reduce_mean(layer(x)) + tf.reduce_sum(a) * float(r + 1)
                    + b * float(r + 1))
        tape = hvd.PartialDistributedGradientTape(tape, local_layers=layer)
        local, shared = tape.get_local_and_global_gradients(loss, [a, layer.kernel, b])
        sources[:] = [[s for s, _ in local], [s for s, _ in shared]]
        return [g for _, g in local], [g for _, g in shared]

    local, shared = run(mode, step)
    assert len(sources[0]) == 1 and sources[0][0] is layer.kernel
    assert len(sources[1]) == 2 and sources[1][0] is a and sources[1][1] is b
    mean = (n + 1) / 2
    assert np.allclose(local[0].numpy(), np.full((2, 1), (r + 1) / n))
    assert np.allclose(shared[0].numpy(), [mean, mean])
    assert np.allclose(shared[1].numpy(), mean)

    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(a) * float(r + 1)
    local, shared = hvd.DistributedGradientTape(tape).get_local_and_global_gradients(loss, [a])
    assert local == [] and shared[0][0] is a
    assert np.allclose(shared[0][1].numpy(), [mean, mean])


def test_tf1_graph_mode_is_refused_saying_what_to_use(hvd):
    """Ops built into a TF1 graph (tf.Graph().as_default()) raise UnsupportedError naming the
    op, TF1 graph mode, and eager / tf.function; before, unnamed ops failed with
    AttributeError ('Graph' object has no attribute 'name') and named ones built a node no
    session could run. Nothing is enqueued: the ranks go on alike."""
    n = hvd.size()
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0])
        v = tf.Variable([1.0, 2.0])
        slices = tf.IndexedSlices(tf.constant([[1.0]]), tf.constant([0]), tf.constant([2, 1]))
        calls = {
            "allreduce": [lambda: hvd.allreduce(x), lambda: hvd.allreduce(x, name="tf1.ar"),
                          lambda: hvd.allreduce(slices)],
            "grouped_allreduce": [lambda: hvd.grouped_allreduce([x, x])],
            "allgather": [lambda: hvd.allgather(x), lambda: hvd.grouped_allgather([x])],
            "broadcast": [lambda: hvd.broadcast(x, 0)],
            "alltoall": [lambda: hvd.alltoall(tf.zeros([n]))],
            "reducescatter": [lambda: hvd.reducescatter(tf.zeros([n]))],
            "join": [hvd.join],
            "barrier": [hvd.barrier],
            "broadcast_variables": [lambda: hvd.broadcast_variables([v], 0)],
            "broadcast_": [lambda: hvd.broadcast_([v], 0)],
            "broadcast_global_variables": [lambda: hvd.broadcast_global_variables(0)],
        }
        for op, functions in calls.items():
            for function in functions:
                with pytest.raises(hvd.UnsupportedError,
                                   match=rf"^{op}: TF1 graph mode.*eagerly.*tf\.function"):
                    function()
    with pytest.raises(NotImplementedError):  # runrun's UnsupportedError is one, as Horovod's
        with tf.Graph().as_default():
            hvd.allreduce(tf.constant(1.0))
    # Eager and tf.function are unaffected.
    assert float(hvd.allreduce(tf.constant(1.0), op=hvd.Sum)) == n
    assert float(tf.function(lambda: hvd.allreduce(tf.constant(1.0), op=hvd.Sum))()) == n
