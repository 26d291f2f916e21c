"""runrun.tensorflow and XLA (issue 39, point 12). runrun's ops are tf.py_function nodes, which
XLA cannot compile; inside tf.function(jit_compile=True) (or a function it calls, or a tf.cond
or while_loop in it) every op is refused when it is traced, with UnsupportedError naming the op
and saying what to do, instead of XLA's "unsupported operations ... EagerPyFunc" when the
function is first called. Plain tf.function, jit_compile=False and auto-clustering
(tf.config.optimizer.set_jit) still run the op, with exact results on every rank."""

import numpy as np
import pytest
import tensorflow as tf

# autograph may put "in user code: <the trace>" before the message.
REFUSAL = (r"\b{op}: runrun ops cannot be compiled by XLA in TensorFlow.*"
           r"jit_compile=False.*reduce them outside it.*docs/tensorflow\.md")


def refused(hvd, op, function):
    """function, as a tf.function(jit_compile=True), raises the XLA refusal naming `op` the
    first time it is called (at trace time), also as TF's and Python's usual classes."""
    with pytest.raises(hvd.UnsupportedError, match=REFUSAL.format(op=op)) as raised:
        tf.function(function, jit_compile=True)()
    assert isinstance(raised.value, tf.errors.UnimplementedError)
    assert isinstance(raised.value, NotImplementedError)


def test_every_op_is_refused_when_traced_for_xla(hvd):
    n = hvd.size()
    x = tf.constant([1.0, 2.0])
    v = tf.Variable([1.0, 2.0])
    slices = tf.IndexedSlices(tf.constant([[1.0]]), tf.constant([0]), tf.constant([2, 1]))
    calls = {
        "allreduce": [lambda: hvd.allreduce(x), lambda: hvd.allreduce(x, name="xla.ar"),
                      lambda: hvd.allreduce(slices)],
        "grouped_allreduce": [lambda: hvd.grouped_allreduce([x, x])],
        "allgather": [lambda: hvd.allgather(x), lambda: hvd.grouped_allgather([x])],
        "broadcast": [lambda: hvd.broadcast(x, 0)],
        "alltoall": [lambda: hvd.alltoall(tf.zeros([n]))],
        "reducescatter": [lambda: hvd.reducescatter(tf.zeros([n])),
                          lambda: hvd.grouped_reducescatter([tf.zeros([n])])],
        "join": [hvd.join],
        "barrier": [hvd.barrier],
        "broadcast_variables": [lambda: hvd.broadcast_variables([v], 0)],
        "broadcast_": [lambda: hvd.broadcast_([v], 0)],
        "rank_op": [hvd.rank_op],
        "size_op": [hvd.size_op],
        "local_rank_op": [hvd.local_rank_op],
        "local_size_op": [hvd.local_size_op],
        "process_set_included_op": [hvd.process_set_included_op],
    }
    for op, functions in calls.items():
        for function in functions:
            refused(hvd, op, function)
    # Nothing was enqueued: the ranks go on alike.
    assert float(hvd.allreduce(tf.constant(1.0), op=hvd.Sum, name="xla.after")) == n


def test_refused_in_functions_xla_compiles_with_the_jit_function(hvd):
    """A plain tf.function called from a jit_compile one, and a tf.cond branch or while_loop
    body in one, are compiled by XLA with it: refused there too."""
    x = tf.constant([1.0, 2.0])
    inner = tf.function(lambda t: hvd.allreduce(t))
    refused(hvd, "allreduce", lambda: inner(x))
    refused(hvd, "allreduce",
            lambda: tf.cond(x[0] > 0, lambda: hvd.allreduce(x), lambda: x))

    def loop():
        return tf.while_loop(lambda i, t: i < 2, lambda i, t: (i + 1, hvd.allreduce(t)),
                             [tf.constant(0), x])[1]
    refused(hvd, "allreduce", loop)


def test_gradient_tape_and_keras_optimizer_are_refused_under_xla(hvd):
    """DistributedGradientTape's gradient inside a jit_compile function, and model.fit with
    the Keras DistributedOptimizer compiled with jit_compile=True, raise the refusal (before:
    XLA's error naming EagerPyFunc, on the first call)."""
    w = tf.Variable([1.0, 2.0])

    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(w * w)
        return hvd.DistributedGradientTape(tape).gradient(loss, [w])
    refused(hvd, "grouped_allreduce", step)

    import keras

    import runrun.keras as hvd_keras
    keras.utils.set_random_seed(3)
    model = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(1)])
    model.compile(optimizer=hvd_keras.DistributedOptimizer(keras.optimizers.SGD(0.1)),
                  loss="mse", jit_compile=True)
    x = np.ones((4, 3), np.float32)
    with pytest.raises(hvd.UnsupportedError, match=REFUSAL.format(op="grouped_allreduce")):
        model.fit(x, x[:, :1], batch_size=2, epochs=1, verbose=0)
    assert float(hvd.allreduce(tf.constant(1.0), op=hvd.Sum, name="xla.after.keras")) == \
        hvd.size()


def test_gradients_from_a_jit_function_reduced_outside_it(hvd):
    """What the refusal advises: XLA computes the gradients, the allreduce runs outside."""
    r, n = hvd.rank(), hvd.size()
    w = tf.Variable([1.0, 2.0])

    @tf.function(jit_compile=True)
    def gradients(scale):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(w * w) * scale
        return tape.gradient(loss, w)

    @tf.function
    def step():
        return hvd.allreduce(gradients(tf.constant(float(r + 1))), op=hvd.Sum)
    total = sum(range(1, n + 1))
    assert step().numpy().tolist() == [2.0 * total, 4.0 * total]


def test_plain_function_and_auto_clustering_still_run_the_ops(hvd):
    """jit_compile=False and plain tf.function run the op; tf.config.optimizer.set_jit(True)
    (XLA auto-clustering) leaves the py_function out of its clusters, so it runs too."""
    r, n = hvd.rank(), hvd.size()
    total = float(sum(range(1, n + 1)))

    def body(x):
        y = x * 2.0 + 1.0
        return hvd.allreduce(y * float(r + 1), op=hvd.Sum) * 3.0 - 1.0

    x = tf.constant([1.0, 2.0])
    expected = [3.0 * total * 3.0 - 1.0, 5.0 * total * 3.0 - 1.0]
    assert tf.function(body, jit_compile=False)(x).numpy().tolist() == expected
    assert tf.function(body)(x).numpy().tolist() == expected
    tf.config.optimizer.set_jit(True)
    try:
        auto = tf.function(body)
        for _ in range(3):
            assert auto(x).numpy().tolist() == expected
    finally:
        tf.config.optimizer.set_jit(False)
