"""Save / restore / sync of KerasState and JaxState without a launcher (ctest elastic.state): what
restore() brings back is exactly what the last commit saw, later changes to the live values
(numpy leaves changed in place, a fit's steps, the optimizer's iterations and slots, plain
attributes) do not reach the saved copies, sync() at size 1 keeps the values, and the Keras
elastic callbacks count epochs and batches across fits and commit the live weights (Keras on
TensorFlow, then on JAX in a second process). A runrun failure that a compiled step
reports as the framework's error (tf.errors.OpError, JaxRuntimeError with runrun's message) is
recognised as one, other errors are not. Usage: PYTHONPATH=... KERAS_BACKEND=tensorflow python
state_check.py"""
import numpy as np


def check_jax():
    import jax
    import jax.numpy as jnp

    import runrun.jax as hvd
    from runrun.elastic.framework_errors import is_runrun_failure

    state = hvd.elastic.JaxState(params={"w": jnp.ones(3)}, buf=(np.zeros(2),), step=0,
                                 log=["a"])
    assert sorted(state._saved_trees) == ["buf", "params"], state._saved_trees
    state.params = {"w": jnp.zeros(3)}
    state.buf[0][:] = 5.0  # in place: the saved copy must not change
    state.step = 4
    state.log.append("b")
    state.restore()
    assert np.array_equal(state.params["w"], np.ones(3)) and np.array_equal(state.buf[0], [0, 0])
    assert state.step == 0 and state.log == ["a"]
    state.params, state.step = {"w": jnp.full(3, 2.0)}, 7
    state.commit()
    state.params, state.step = {"w": jnp.full(3, 9.0)}, 8
    state.restore()
    assert np.array_equal(state.params["w"], np.full(3, 2.0)) and state.step == 7
    state.sync()
    assert np.array_equal(state.params["w"], np.full(3, 2.0)) and state.step == 7
    assert is_runrun_failure(jax.errors.JaxRuntimeError(
        "INTERNAL: CpuCallback error: runrun on rank 1: lost rank 2"))
    assert not is_runrun_failure(jax.errors.JaxRuntimeError("RESOURCE_EXHAUSTED: out of memory"))
    print("JaxState: ok")


def check_keras():
    import keras

    import runrun.keras as hvd
    from runrun.elastic.framework_errors import is_runrun_failure

    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    model.compile(loss="mse",
                  optimizer=hvd.DistributedOptimizer(keras.optimizers.SGD(0.1, momentum=0.9)))
    state = hvd.elastic.KerasState(model, epoch=0, batch=0)
    initial = [w.copy() for w in model.get_weights()]
    x, y = np.ones((8, 4), np.float32), np.zeros((8, 1), np.float32)
    model.fit(x, y, batch_size=8, epochs=1, verbose=0)
    state.epoch = 3
    state.restore()  # before any commit: the weights and the unbuilt optimizer of the start
    assert all(np.array_equal(a, b) for a, b in zip(initial, model.get_weights()))
    assert int(model.optimizer.iterations.numpy()) == 0 and state.epoch == 0
    commits = []

    class Snapshot(keras.callbacks.Callback):  # what each epoch's commit saved
        def on_epoch_end(self, epoch, logs=None):
            commits.append([w.copy() for w in state._saved_model])

    callbacks = [hvd.elastic.UpdateBatchStateCallback(state),
                 hvd.elastic.UpdateEpochStateCallback(state),
                 hvd.elastic.CommitStateCallback(state, batches_per_commit=2), Snapshot()]
    model.fit(x, y, batch_size=4, epochs=2, verbose=0, callbacks=callbacks)
    assert state.epoch == 2 and state.batch == 0
    # Commits during fit saw the live weights (on JAX, fit keeps them outside the variables).
    assert not all(np.array_equal(a, b) for a, b in zip(*commits))
    assert all(np.array_equal(a, b) for a, b in zip(commits[1], model.get_weights()))
    committed = [w.copy() for w in model.get_weights()]
    slots = [v.numpy().copy() for v in model.optimizer.variables]
    assert int(model.optimizer.iterations.numpy()) == 4
    model.fit(x, y, batch_size=8, epochs=1, verbose=0)
    state.restore()
    assert all(np.array_equal(a, b) for a, b in zip(committed, model.get_weights()))
    assert all(np.array_equal(a, v.numpy()) for a, v in zip(slots, model.optimizer.variables))
    state.sync()
    assert all(np.array_equal(a, b) for a, b in zip(committed, model.get_weights()))
    if keras.backend.backend() == "tensorflow":
        import tensorflow as tf

        assert is_runrun_failure(tf.errors.UnknownError(None, None, "runrun on rank 0: lost 1"))
        assert not is_runrun_failure(tf.errors.InvalidArgumentError(None, None, "bad shape"))
    print("KerasState (%s): ok" % keras.backend.backend())


if __name__ == "__main__":
    import importlib.util
    import sys

    missing = [m for m in ("jax", "keras", "tensorflow") if importlib.util.find_spec(m) is None]
    if missing:
        print("SKIP: no " + ", ".join(missing))
        sys.exit(77)
    import os
    import subprocess

    import runrun.jax

    runrun.jax.init()
    if sys.argv[1:] == ["--keras"]:
        check_keras()
        sys.exit(0)
    check_jax()
    check_keras()
    runrun.jax.shutdown()
    # Keras on the JAX backend, in a process of its own (the backend is chosen at import).
    env = dict(os.environ, KERAS_BACKEND="jax")
    subprocess.run([sys.executable, __file__, "--keras"], env=env, check=True, timeout=100)
    print("PASS")
