"""runrun --profile inside model.fit on the Keras backend this process runs (issue 14): the
DistributedOptimizer reports every update step with no script change, from inside the compiled
train step (TensorFlow's py_function; JAX: the gradient allreduce's own marks and one step-end
io_callback) or eagerly (torch); 10 steps, so rank 0's read of the runtime's per-rank lateness
runs inside the train step too; two steps per execution of the compiled function
(steps_per_execution=2; torch allows only 1): still one record per step.
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
    x = np.random.default_rng(hvd.rank()).normal(size=(steps * batch, 6)).astype("float32")
    model.fit(x, x[:, :1], batch_size=batch, epochs=1, shuffle=False, verbose=0)
    grad_bytes = sum(int(np.prod(w.shape)) * 4 for w in model.trainable_weights)
    records = profiler._steps
    assert [r["step"] for r in records] == list(range(1, steps + 1))
    for r in records:
        assert r["rank"] == hvd.rank() and r["bytes"] == grad_bytes, r
        assert r["step_s"] > 0 and r["compute_s"] > 0 and r["communication_s"] > 0, r
        assert r["optimizer_s"] >= 0 and r["exposed_s"] >= 0 and r["busbw_gbit"] > 0, r
        assert r["compute_s"] + r["exposed_s"] + r["optimizer_s"] <= r["step_s"] + 1e-9, r
    # This runtime was started without RUNRUN_PROFILE: it records no lateness, so rank 0's read
    # at step 10 (inside the train step) finds none.
    assert profiler._lateness is None
