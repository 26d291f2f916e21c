"""runrun.tensorflow (issue 12, point 2): every op on tf.Tensors for every TF dtype the runtime
has, eager and inside tf.function, exact against a locally computed reference; process sets;
gradients as Horovod's; errors as TensorFlow's exception classes with runrun's message."""

import numpy as np
import pytest
import tensorflow as tf
from tf_values import values

TF_DTYPES = [tf.uint8, tf.int8, tf.int16, tf.int32, tf.int64, tf.float16, tf.bfloat16,
             tf.float32, tf.float64]
MODES = ["eager", "function"]


def run(mode, function, *args):
    """function(*args) eagerly, or traced into a fresh tf.function and run."""
    return function(*args) if mode == "eager" else tf.function(function)(*args)


def everyone(hvd, shape, dtype, **kw):
    return [values(r, shape, dtype.as_numpy_dtype, **kw) for r in range(hvd.size())]


REFERENCE = {
    "Sum": lambda s: s.sum(0),
    "Min": lambda s: s.min(0),
    "Max": lambda s: s.max(0),
    "Product": lambda s: s.prod(0),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", TF_DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("op_name", ["Sum", "Min", "Max", "Product"])
def test_allreduce_every_op_and_dtype(hvd, mode, dtype, op_name):
    low, high = (1, 3) if op_name == "Product" else (-8, 8)
    for shape in [(17,), (3, 5), ()] if mode == "eager" else [(3, 5)]:
        parts = everyone(hvd, shape, dtype, low=low, high=high)
        expected = REFERENCE[op_name](np.stack(parts).astype(np.float64))
        mine = tf.constant(parts[hvd.rank()])
        out = run(mode, lambda x: hvd.allreduce(x, op=getattr(hvd, op_name)), mine)
        assert out.dtype == dtype and out.shape == mine.shape
        assert np.array_equal(out.numpy().astype(np.float64), expected), (shape, out)


@pytest.mark.parametrize("mode", MODES)
def test_allreduce_average_default_scale_and_bool(hvd, mode):
    n = hvd.size()
    for dtype in [tf.float16, tf.bfloat16, tf.float32, tf.float64]:
        parts = [p * n for p in everyone(hvd, (4, 4), dtype)]
        out = run(mode, hvd.allreduce, tf.constant(parts[hvd.rank()]))
        assert np.array_equal(out.numpy().astype(np.float64),
                              np.stack(parts).astype(np.float64).sum(0) / n)
    parts = everyone(hvd, (8,), tf.float64)
    out = run(mode, lambda x: hvd.allreduce(x, op=hvd.Sum, prescale_factor=0.5,
                                            postscale_factor=4.0), tf.constant(parts[hvd.rank()]))
    assert np.array_equal(out.numpy(), np.stack(parts).sum(0) * 2.0)
    flags = [values(r, (33,), np.bool_) for r in range(n)]
    mine = tf.constant(flags[hvd.rank()])
    assert np.array_equal(run(mode, lambda x: hvd.allreduce(x, op=hvd.Max), mine).numpy(),
                          np.stack(flags).any(0))
    assert np.array_equal(run(mode, lambda x: hvd.allreduce(x, op=hvd.Min), mine).numpy(),
                          np.stack(flags).all(0))


@pytest.mark.parametrize("mode", MODES)
def test_allreduce_adasum_and_op_errors(hvd, mode):
    """Adasum of parallel inputs 2^r * v is c * v, c the pairwise tree of the scalars (exact);
    an integer tensor is refused with Horovod's NotImplementedError."""
    n, r = hvd.size(), hvd.rank()
    v = np.array([3.0, -1.0, 0.5, 2.0], np.float32)
    level = [2.0 ** k for k in range(n)]
    while len(level) > 1:
        level = [(1 - a * b / (2 * a * a)) * a + (1 - a * b / (2 * b * b)) * b
                 for a, b in zip(level[::2], level[1::2])]
    got = run(mode, lambda x: hvd.allreduce(x, op=hvd.Adasum), tf.constant(v * 2.0 ** r))
    assert np.array_equal(got.numpy(), v * level[0])

    def gradient(x):  # Horovod's: the Adasum of the incoming gradients (here the x's)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(hvd.allreduce(x, op=hvd.Adasum) * tf.stop_gradient(x))
        return tape.gradient(y, x)

    assert np.array_equal(run(mode, gradient, tf.constant(v * 2.0 ** r)).numpy(), v * level[0])
    with pytest.raises(NotImplementedError, match="op=Adasum combines floating-point tensors"):
        hvd.allreduce(tf.ones([2], tf.int32), op=hvd.Adasum)
    with pytest.raises(ValueError, match="either op= or"):
        hvd.allreduce(tf.ones([2]), op=hvd.Sum, average=True)


@pytest.mark.parametrize("mode", MODES)
def test_grouped_allreduce_and_variables(hvd, mode):
    parts = [everyone(hvd, (5,), d, seed=i) for i, d in enumerate(TF_DTYPES)]
    mine = [tf.constant(p[hvd.rank()]) for p in parts]
    outs = run(mode, lambda *xs: hvd.grouped_allreduce(list(xs), op=hvd.Sum), *mine)
    for out, p, d in zip(outs, parts, TF_DTYPES):
        assert out.dtype == d
        assert np.array_equal(out.numpy().astype(np.float64),
                              np.stack(p).astype(np.float64).sum(0))
    variable = tf.Variable(tf.constant(parts[-1][hvd.rank()]))
    assert np.array_equal(hvd.allreduce(variable, op=hvd.Sum).numpy(), np.stack(parts[-1]).sum(0))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", TF_DTYPES + [tf.bool], ids=lambda d: d.name)
def test_allgather_broadcast_every_dtype(hvd, mode, dtype):
    n, r = hvd.size(), hvd.rank()
    parts = [values(k, (k + 1, 3), dtype.as_numpy_dtype, seed=7) for k in range(n)]
    gathered = run(mode, hvd.allgather, tf.constant(parts[r]))
    assert gathered.dtype == dtype
    assert np.array_equal(gathered.numpy(), np.concatenate(parts))
    root = n - 1
    mine = tf.constant(values(r, (4, 2), dtype.as_numpy_dtype, seed=3))
    out = run(mode, lambda x: hvd.broadcast(x, root), mine)
    assert np.array_equal(out.numpy(), values(root, (4, 2), dtype.as_numpy_dtype, seed=3))


@pytest.mark.parametrize("mode", MODES)
def test_alltoall_and_reducescatter(hvd, mode):
    n, r = hvd.size(), hvd.rank()
    for dtype in TF_DTYPES:
        # rank r sends (p + 1) rows to rank p, each row [r, p].
        splits = [p + 1 for p in range(n)]
        rows = np.concatenate([np.tile([r, p], (p + 1, 1)) for p in range(n)])
        x = tf.constant(rows.astype(dtype.as_numpy_dtype))
        out, received = run(mode, lambda t: hvd.alltoall(t, splits=splits), x)
        expected = np.concatenate([np.tile([q, r], (r + 1, 1)) for q in range(n)])
        assert out.dtype == dtype and np.array_equal(out.numpy().astype(np.int64), expected)
        assert received.dtype == tf.int32 and received.numpy().tolist() == [r + 1] * n
        # Without splits, Horovod's TF alltoall returns the output alone (equal parts).
        x = tf.constant(np.repeat(np.arange(n) + 10 * r, 2).astype(dtype.as_numpy_dtype))
        out = run(mode, lambda t: hvd.alltoall(t), x)
        assert isinstance(out, tf.Tensor) and out.dtype == dtype
        assert out.numpy().astype(np.int64).tolist() == [10 * q + r for q in range(n)
                                                         for _ in range(2)]
        parts = everyone(hvd, (2 * n + 1, 2), dtype)
        out = run(mode, lambda t: hvd.reducescatter(t, op=hvd.Sum), tf.constant(parts[r]))
        total = np.stack(parts).astype(np.float64).sum(0)
        start = 3 * r if r < 1 else 2 * r + 1
        rows_here = 3 if r == 0 else 2
        assert np.array_equal(out.numpy().astype(np.float64), total[start:start + rows_here])


def test_process_set_and_queries(hvd):
    evens = hvd.add_process_set([r for r in range(hvd.size()) if r % 2 == 0])
    try:
        if evens.included():
            x = tf.constant([float(hvd.rank())])
            out = hvd.allreduce(x, op=hvd.Sum, process_set=evens)
            assert out.numpy()[0] == sum(r for r in range(hvd.size()) if r % 2 == 0)
            assert int(hvd.size_op(process_set=evens)) == len(evens.ranks)
        assert int(hvd.rank_op()) == hvd.rank() and int(hvd.size_op()) == hvd.size()
        assert int(tf.function(lambda: hvd.rank_op())()) == hvd.rank()
    finally:
        hvd.remove_process_set(evens)


def test_join_and_barrier(hvd):
    assert int(hvd.join()) in range(hvd.size())
    hvd.barrier()
    tf.function(hvd.barrier)()


def test_many_collectives_in_one_function_keep_order(hvd):
    @tf.function
    def step(x):
        return [hvd.allreduce(x * float(i), op=hvd.Sum) for i in range(12)]

    outs = step(tf.ones([3]))
    assert [float(o.numpy()[0]) for o in outs] == [float(i * hvd.size()) for i in range(12)]


@pytest.mark.parametrize("mode", MODES)
def test_gradients_as_horovod(hvd, mode):
    n, r = hvd.size(), hvd.rank()
    v = tf.Variable(tf.constant([1.0, 2.0, 3.0]) * (r + 1))

    def grads():
        with tf.GradientTape(persistent=True) as tape:
            summed = tf.reduce_sum(hvd.allreduce(v, op=hvd.Sum) * 2.0)
            averaged = tf.reduce_sum(hvd.allreduce(v) * 3.0)
            gathered = tf.reduce_sum(hvd.allgather(v) * tf.cast(tf.range(3 * n), tf.float32))
            root = tf.reduce_sum(hvd.broadcast(v, 0) * 5.0)
            scattered = tf.reduce_sum(hvd.reducescatter(tf.reshape(
                tf.tile(v, [2 * n]), [2 * n, 3]), op=hvd.Sum))
            sent = hvd.alltoall(tf.tile(v, [n]))
            spread = tf.reduce_sum(sent * 7.0)
        return [tape.gradient(y, v) for y in (summed, averaged, gathered, root, scattered,
                                              spread)]

    g_sum, g_avg, g_gather, g_root, g_scatter, g_spread = run(mode, grads)
    assert np.array_equal(g_sum.numpy(), [2.0 * n] * 3)      # Sum of the incoming gradients
    assert np.array_equal(g_avg.numpy(), [3.0] * 3)          # Average of the incoming ones
    assert np.array_equal(g_gather.numpy(), np.arange(3 * r, 3 * r + 3, dtype=np.float32))
    assert np.array_equal(g_root.numpy(), [5.0] * 3 if r == 0 else [0.0] * 3)
    assert np.array_equal(g_scatter.numpy(), [2.0 * n * n] * 3)  # gathered, times size for Sum
    assert np.array_equal(g_spread.numpy(), [7.0 * n] * 3)


@pytest.mark.parametrize("mode", MODES)
def test_distributed_gradient_tape_and_broadcast_variables(hvd, mode):
    n, r = hvd.size(), hvd.rank()
    w = tf.Variable([float(r + 1), -1.0])
    b = tf.Variable(2.0 * r)

    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(w * w) * float(r + 1) + b
        tape = hvd.DistributedGradientTape(tape, compression=hvd.Compression.fp16)
        return tape.gradient(loss, [w, b])

    g_w, g_b = run(mode, step)
    assert np.array_equal(g_w.numpy(), np.mean([[2.0 * (k + 1) ** 2, -2.0 * (r + 1)]
                                                for k in range(n)], 0) * [1, 0] +
                          [0, np.mean([-2.0 * (k + 1) for k in range(n)])])
    assert float(g_b) == 1.0
    def broadcast():
        hvd.broadcast_variables([w, b], root_rank=n - 1)

    run(mode, broadcast)
    assert w.numpy().tolist() == [float(n), -1.0] and float(b) == 2.0 * (n - 1)
    assert hvd.broadcast_object({"from": r}, root_rank=1) == {"from": 1}
    assert hvd.allgather_object(r * 10) == [k * 10 for k in range(n)]


@pytest.mark.parametrize("mode", MODES)
def test_broadcast_variables_of_a_keras_model_and_optimizer(hvd, mode):
    """tf.keras is Keras 3 from TF 2.16: model.variables and optimizer.variables are
    keras.Variables (no read_value), as in the TF2 migration of docs/tensorflow.md."""
    n, r = hvd.size(), hvd.rank()
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
    opt = tf.keras.optimizers.SGD(0.1, momentum=0.9)
    opt.build(model.trainable_variables)
    for k, v in enumerate(model.variables + opt.variables):
        v.assign(tf.fill(v.shape, tf.cast(10 * r + k, v.dtype)))

    def broadcast():
        hvd.broadcast_variables(model.variables, root_rank=n - 1)
        hvd.broadcast_variables(opt.variables, root_rank=n - 1)

    run(mode, broadcast)
    for k, v in enumerate(model.variables + opt.variables):
        expected = np.full(v.shape, 10 * (n - 1) + k, v.numpy().dtype)
        assert np.array_equal(v.numpy(), expected), v.path


@pytest.mark.parametrize("mode", MODES)
def test_partial_distributed_gradient_tape_keeps_local_sources_local(hvd, mode):
    """Horovod's register_local_source / PartialDistributedGradientTape(local_layers=): those
    gradients are this rank's own, divided by the size (scale_local_gradients), not reduced."""
    n, r = hvd.size(), hvd.rank()
    layer = tf.keras.layers.Dense(1, use_bias=False, kernel_initializer="ones")
    layer.build((None, 2))
    w = tf.Variable([1.0, 1.0])

    def step(partial):
        x = tf.fill([3, 2], float(r + 1))
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(layer(x)) + tf.reduce_sum(w) * float(r + 1)
        if partial:
            tape = hvd.PartialDistributedGradientTape(tape, local_layers=layer)
        else:
            tape = hvd.DistributedGradientTape(tape, scale_local_gradients=False)
            tape.register_local_source(layer.kernel)
        return tape.gradient(loss, [layer.kernel, w])

    mean = (n + 1) / 2
    g_kernel, g_w = run(mode, step, True)
    assert np.allclose(g_kernel.numpy(), np.full((2, 1), (r + 1) / n))
    assert np.allclose(g_w.numpy(), [mean, mean])
    g_kernel, g_w = run(mode, step, False)
    assert np.allclose(g_kernel.numpy(), np.full((2, 1), r + 1.0))
    assert np.allclose(g_w.numpy(), [mean, mean])


@pytest.mark.parametrize("mode", MODES)
def test_distributed_gradient_tape_groups_as_horovod(hvd, mode, monkeypatch):
    """groups=<n>: n near-equal grouped allreduces; groups=[[variables]]: one per list and every
    other gradient alone; num_groups: the deprecated integer spelling. Each gradient is still
    the average over the ranks."""
    import runrun.tensorflow.gradient_tape as gradient_tape

    n, r = hvd.size(), hvd.rank()
    variables = [tf.Variable(tf.fill([k + 1], 1.0)) for k in range(5)]
    sizes = []
    real = gradient_tape.grouped_allreduce

    def spy(tensors, **kw):
        sizes.append(len(tensors))
        return real(tensors, **kw)

    monkeypatch.setattr(gradient_tape, "grouped_allreduce", spy)

    def step(**grouping):
        with tf.GradientTape() as tape:
            loss = sum(tf.reduce_sum(v) * float((k + 1) * (r + 1)) for k, v in enumerate(variables))
        return hvd.DistributedGradientTape(tape, **grouping).gradient(loss, variables)

    mean = (n + 1) / 2
    for grouping, expected in [({}, [5]), ({"groups": 2}, [3, 2]), ({"groups": 4}, [2, 1, 1, 1]),
                               ({"groups": [[variables[3], variables[1]]]}, [2, 1, 1, 1])]:
        sizes.clear()
        grads = run(mode, lambda: step(**grouping))
        assert sizes == expected, grouping
        for k, g in enumerate(grads):
            assert np.array_equal(g.numpy(), np.full([k + 1], (k + 1) * mean)), (grouping, k)
    with pytest.warns(DeprecationWarning, match="num_groups"):
        sizes.clear()
        run(mode, lambda: step(num_groups=3))
    assert sizes == [2, 2, 1]
    with pytest.raises(ValueError, match="DistributedGradientTape: groups must be"):
        hvd.DistributedGradientTape(tf.GradientTape(), groups="two")


def test_sync_batch_normalization_under_horovods_tensorflow_name(hvd):
    """hvd.SyncBatchNormalization (horovod.tensorflow's) in a tf.function: the statistics of
    the concatenated batch."""
    n, r = hvd.size(), hvd.rank()
    x = np.random.default_rng(3).normal(size=(2 * n, 5)).astype("float32")
    sync = hvd.SyncBatchNormalization()
    plain = tf.keras.layers.BatchNormalization()
    mine = tf.function(lambda t: sync(t, training=True))(x[2 * r:2 * r + 2])
    whole = plain(x, training=True)
    assert np.allclose(mine.numpy(), whole.numpy()[2 * r:2 * r + 2], rtol=1e-4, atol=1e-4)


def test_elastic_tensorflow_state_saves_restores_and_syncs_variables(hvd):
    """horovod.tensorflow.elastic's TensorFlowState (the elastic job itself:
    tests/integration/elastic/elastic_frameworks.sh)."""
    r = hvd.rank()
    w = tf.Variable([float(r), 1.0])
    state = hvd.elastic.TensorFlowState([w], epoch=r)
    w.assign([7.0, 7.0])
    state.restore()  # back to the values at construction (the last save)
    assert w.numpy().tolist() == [float(r), 1.0] and state.epoch == r
    state.sync()  # rank 0's variables and attributes everywhere, saved as the new commit
    assert w.numpy().tolist() == [0.0, 1.0] and state.epoch == 0
    w.assign([3.0, 3.0])
    state.restore()
    assert w.numpy().tolist() == [0.0, 1.0]
    with pytest.raises(ValueError, match="no global variables"):
        hvd.elastic.TensorFlowState()


def test_unnamed_ops_of_a_function_retraced_on_one_rank_only_still_match(hvd):
    """An unnamed op (and a gradient's) is named at trace time after the function and its place
    in that trace: rank 0 traces once, the others retrace for a new batch size, and every
    step's ops still match (a global counter would have named the retrace's ops anew)."""
    r = hvd.rank()
    bn = hvd.SyncBatchNormalization()

    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = bn(x, training=True) + hvd.allreduce(tf.reduce_sum(x, 0))
            loss = tf.reduce_sum(y * tf.range(4, dtype=tf.float32))
        return tape.gradient(loss, x)

    for batch in ([2, 2, 2] if r == 0 else [2, 3, 3]):
        x = tf.reshape(tf.range(batch * 4, dtype=tf.float32), [batch, 4])
        assert step(x).shape == [batch, 4]


def test_unnamed_ops_in_control_flow_match_whatever_each_rank_built_before(hvd):
    """TF names a tf.cond branch's or a while_loop body's graph from a process-wide counter
    (`cond_true_38`): after rank 0 alone built another function with a tf.cond, the unnamed ops
    inside control flow are still named alike on every rank (they stalled before), and two
    branches of one kind in one function get different names."""
    if hvd.rank() == 0:
        tf.function(lambda x: tf.cond(x[0] > 0, lambda: x * 2, lambda: x))(tf.ones([2]))

    @tf.function
    def step(x):
        doubled = tf.cond(x[0] > 0, lambda: hvd.allreduce(x * 2, op=hvd.Sum), lambda: x)
        tripled = tf.cond(x[0] > 0, lambda: hvd.allreduce(x * 3, op=hvd.Sum), lambda: x)

        def body(i, acc):
            return i + 1, acc + hvd.allreduce(acc, op=hvd.Sum)

        _, looped = tf.while_loop(lambda i, acc: i < 2, body, [0, x])
        return doubled, tripled, looped

    size = hvd.size()
    doubled, tripled, looped = step(tf.ones([3]))
    assert doubled.numpy().tolist() == [2.0 * size] * 3
    assert tripled.numpy().tolist() == [3.0 * size] * 3
    assert looped.numpy().tolist() == [float((1 + size) ** 2)] * 3


def test_unnamed_op_gradients_of_a_nested_function_match_whatever_each_rank_ran_before(hvd):
    """The gradient of a tf.function called from another (or from an eager tape) is traced in
    a graph TF numbers from a process-wide counter (`__backward_forward_42`), which every eager
    op, variable and function call moves: after rank 0 alone evaluated, the unnamed gradient
    ops are still named alike on every rank (they stalled before)."""
    w = tf.Variable([1.0, 2.0])

    @tf.function
    def forward(x):
        return hvd.allreduce(x * w, op=hvd.Sum)

    @tf.function
    def train_step(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(forward(x))
        return tape.gradient(loss, w)

    if hvd.rank() == 0:
        tf.function(lambda x: tf.reduce_sum(x * w))(tf.ones([2]))
    x = tf.ones([2]) * (hvd.rank() + 1)
    for _ in range(2):
        assert train_step(x).numpy().tolist() == (x * hvd.size()).numpy().tolist()
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(forward(x))
    assert tape.gradient(loss, w).numpy().tolist() == (x * hvd.size()).numpy().tolist()


def test_control_flow_graph_labels_are_counter_free_and_ordered():
    from runrun.tensorflow.graph import graph_label
    labels = []

    @tf.function
    def labelled(x):
        def branch(factor):
            labels.append(graph_label(tf.compat.v1.get_default_graph()))
            return x * factor
        y = tf.cond(x[0] > 0, lambda: branch(2), lambda: x)
        return tf.cond(y[0] > 0, lambda: branch(3), lambda: y)

    labelled(tf.ones([2]))
    assert labels == ["labelled/cond.0", "labelled/cond.1"]


def test_errors_are_tensorflow_exceptions_with_runrun_messages(hvd):
    r = hvd.rank()
    with pytest.raises(tf.errors.FailedPreconditionError, match="mismatched shape") as info:
        hvd.allreduce(tf.ones([r + 1]), name="tf.mismatch")
    assert isinstance(info.value, hvd.MismatchError) and isinstance(info.value,
                                                                    hvd.HorovodInternalError)
    with pytest.raises(tf.errors.InvalidArgumentError, match="dtype uint16 is not supported"):
        hvd.allreduce(tf.ones([2], tf.uint16))
    with pytest.raises(ValueError, match="dtype complex64 is not supported"):
        hvd.allgather(tf.ones([2], tf.complex64))
    with pytest.raises(tf.errors.InvalidArgumentError, match="0-dimensional"):
        hvd.allgather(tf.constant(1.0))
    # Inside tf.function, py_function turns a ValueError into InvalidArgumentError and
    # anything else into UnknownError; the message is runrun's.
    with pytest.raises(tf.errors.InvalidArgumentError, match="dtype uint16 is not supported"):
        tf.function(lambda x: hvd.allreduce(x))(tf.ones([2], tf.uint16))
    with pytest.raises(tf.errors.UnknownError, match="mismatched shape"):
        tf.function(lambda x: hvd.allreduce(x, name="tf.fn.mismatch"))(tf.ones([r + 1]))
