"""runrun --profile inside model.fit on the Keras backend this process runs (issue 14): the
DistributedOptimizer reports every update step with no script change, from inside the compiled
train step (TensorFlow: the allreduce's py_function and graph ops that write the step end into
a tf.Variable ring, no py_function for it; JAX: the gradient allreduce's own marks and a
native step-end custom call) or eagerly (torch); 10 steps, so rank 0's read of the runtime's
per-rank lateness runs too; two steps per execution of the compiled function
(steps_per_execution=2; torch allows only 1): still one record per step, in order.
The Keras suite runs it on every backend at 2 and 4 ranks (run_framework_tests.sh)."""

import keras
import numpy as np
import pytest

from runrun.common import profile

BACKEND = keras.backend.backend()


@pytest.fixture
def profiler(monkeypatch):
    """A profiler as RUNRUN_PROFILE=1 makes one, for this test only (no output, no table)."""
    installed = profile.StepProfiler(interval=0)
    monkeypatch.setattr(profile, "_profiler", installed)
    monkeypatch.setattr(profile, "_checked", True)
    return installed


def test_fit_reports_every_update_step(hvd, profiler):
    keras.utils.set_random_seed(3)
    model = keras.Sequential([keras.Input(shape=(6,)), keras.layers.Dense(8, activation="tanh"),
                              keras.layers.Dense(1)])
    model.compile(optimizer=hvd.DistributedOptimizer(keras.optimizers.SGD(0.01)), loss="mse",
                  jit_compile=False, steps_per_execution=1 if BACKEND == "torch" else 2)
    steps, batch = 10, 4
    profiler._drain_every = 3  # TensorFlow: also take the step-end ring inside the train step
    x = np.random.default_rng(hvd.rank()).normal(size=(steps * batch, 6)).astype("float32")
    model.fit(x, x[:, :1], batch_size=batch, epochs=1, shuffle=False, verbose=0)
    grad_bytes = sum(int(np.prod(w.shape)) * 4 for w in model.trainable_weights)
    records = profiler.records()
    assert [r["step"] for r in records] == list(range(1, steps + 1))
    for r in records:
        assert r["rank"] == hvd.rank() and r["bytes"] == grad_bytes, r
        assert r["step_s"] > 0 and r["compute_s"] > 0 and r["communication_s"] > 0, r
        assert r["optimizer_s"] >= 0 and r["exposed_s"] >= 0 and r["busbw_gbit"] > 0, r
        assert r["compute_s"] + r["exposed_s"] + r["optimizer_s"] <= r["step_s"] + 1e-9, r
    # This runtime was started without RUNRUN_PROFILE: it records no lateness, so rank 0's read
    # at step 10 finds none.
    assert profiler._lateness is None


def _op_types(concrete):
    """The op types of a traced tf.function, the functions it calls included."""
    graph_def = concrete.graph.as_graph_def()
    types = [node.op for node in graph_def.node]
    for function in graph_def.library.function:
        types += [node.op for node in function.node_def]
    return types


def test_tensorflow_step_end_is_no_py_function(hvd, profiler):
    """Keras on TensorFlow: the step end is graph ops (no Python round trip per step); the
    gradient allreduce is the only py_function of the step; the records are right."""
    if BACKEND != "tensorflow":
        return  # JAX: tests/python/test_jax_profile.py; torch: eager, no graph
    import tensorflow as tf

    keras.utils.set_random_seed(5)
    model = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(2)])
    optimizer = hvd.DistributedOptimizer(keras.optimizers.SGD(0.01))
    optimizer.build(model.trainable_variables)
    x = tf.ones((4, 3))

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model(x) ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply(grads, model.trainable_variables)

    types = _op_types(step.get_concrete_function())
    assert types.count("EagerPyFunc") == 1, types  # the allreduce only
    assert "Timestamp" in types and "ResourceScatterUpdate" in types, types
    profiler._drain_every = 3  # take the ring inside the allreduce's py_function, every step
    for _ in range(3):
        step()
    assert len(profiler._steps) >= 2  # steps 1 and 2 taken by steps 2 and 3, inside the step
    records = profiler.records()
    assert [r["step"] for r in records] == [1, 2, 3], records
    assert all(r["bytes"] == (3 * 2 + 2) * 4 and r["optimizer_s"] >= 0 for r in records), records
    assert all(r["compute_s"] > 0 and r["step_s"] > 0 for r in records), records
