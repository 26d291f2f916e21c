"""A rank of elastic_frameworks.sh: elastic_train.py's training (same batch on every rank,
commit after every step, a worker that kills itself at a step) written for Keras 3
(ELASTIC_FRAMEWORK=keras: model.fit with KerasState and the Keras elastic callbacks, one batch
per epoch, TensorFlow backend by default), for JAX (ELASTIC_FRAMEWORK=jax: a jitted optax step
through runrun.jax.DistributedOptimizer, with JaxState) or for a TensorFlow custom loop
(ELASTIC_FRAMEWORK=tensorflow: a tf.function step with DistributedGradientTape and momentum
SGD on tf.Variables, with runrun.tensorflow.elastic.TensorFlowState). Its output lines are
elastic_train.py's, so elastic_lib.sh's oracle_check applies: "commit step=S size=N" per commit
(rank 0), "final total=... size=... resets=[...]" and "final weights ..."; --oracle prints the
weights of STEPS plain steps in one process (other arguments: the test's token, ignored).
Environment: ELASTIC_STEPS (10), ELASTIC_KILL_WORKER / ELASTIC_KILL_STEP, ELASTIC_STEP_SLEEP
(0.05).
"""
import os
import signal
import sys
import time

import numpy as np

FRAMEWORK = os.environ.get("ELASTIC_FRAMEWORK", "keras")
STEPS = int(os.environ.get("ELASTIC_STEPS", "10"))
KILL_WORKER = os.environ.get("ELASTIC_KILL_WORKER")
KILL_STEP = int(os.environ.get("ELASTIC_KILL_STEP", "-1"))
PAUSE = float(os.environ.get("ELASTIC_STEP_SLEEP", "0.05"))


def batch():
    rng = np.random.RandomState(7)
    return rng.randn(8, 4).astype(np.float32), rng.randn(8, 1).astype(np.float32)


def show(values):
    return " ".join("%.6f" % v for v in np.concatenate([np.ravel(v) for v in values]))


def maybe_die(step):
    if os.environ.get("RUNRUN_ELASTIC_WORKER") == KILL_WORKER and step == KILL_STEP:
        print("elastic-kill t=%.3f" % time.time(), flush=True)
        os.kill(os.getpid(), signal.SIGKILL)


def committed_steps(state, hvd, step, one):
    """The loop of the JAX and TensorFlow mains (wrapped in their hvd.elastic.run): step()
    until STEPS, each step counted over the ranks (`one`: a framework array [1]) and
    committed."""
    while state.step < STEPS:
        maybe_die(state.step)
        step()
        size = int(np.asarray(hvd.allreduce(one, op=hvd.Sum, name="size"))[0])
        state.total += size
        state.step += 1
        if hvd.rank() == 0:
            print("commit step=%d size=%d" % (state.step, size), flush=True)
        time.sleep(PAUSE)
        state.commit()


def report(hvd, state, weights, resets):
    if hvd.rank() == 0:
        print("final total=%d size=%d resets=%s" % (state.total, hvd.size(), resets), flush=True)
        print("final weights " + show(weights), flush=True)


# Keras -----------------------------------------------------------------------------------
def keras_model(optimizer):
    import keras

    keras.utils.set_random_seed(1234)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    model.compile(loss="mse", optimizer=optimizer)
    return model


def keras_oracle():
    import keras

    model = keras_model(keras.optimizers.SGD(0.1, momentum=0.9))
    model.fit(*batch(), batch_size=8, epochs=STEPS, shuffle=False, verbose=0)
    print(show(model.get_weights()))


def keras_main():
    import keras

    import runrun.keras as hvd

    hvd.init()
    model = keras_model(hvd.DistributedOptimizer(keras.optimizers.SGD(0.1, momentum=0.9)))
    state = hvd.elastic.KerasState(model, epoch=0, batch=0, total=0)
    resets = []
    state.register_reset_callbacks([lambda: resets.append(hvd.size())])

    class Steps(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            maybe_die(state.epoch)

        def on_epoch_end(self, epoch, logs=None):  # after UpdateEpochStateCallback
            size = int(np.asarray(hvd.allreduce(np.ones(1, np.float32), op=hvd.Sum,
                                                name="size"))[0])
            state.total += size
            if hvd.rank() == 0:
                print("commit step=%d size=%d" % (state.epoch, size), flush=True)
            time.sleep(PAUSE)

    @hvd.elastic.run
    def train(state):
        callbacks = [hvd.elastic.UpdateBatchStateCallback(state),
                     hvd.elastic.UpdateEpochStateCallback(state), Steps(),
                     hvd.elastic.CommitStateCallback(state, batches_per_commit=1000)]
        model.fit(*batch(), batch_size=8, epochs=STEPS - state.epoch, shuffle=False, verbose=0,
                  callbacks=callbacks)

    train(state)
    assert state.epoch == STEPS and state.batch == 0, (state.epoch, state.batch)
    report(hvd, state, model.get_weights(), resets)
    hvd.shutdown()


# JAX -------------------------------------------------------------------------------------
def jax_setup(tx):
    import jax
    import jax.numpy as jnp
    import optax

    x, y = batch()
    rng = np.random.RandomState(1234)
    params = {"w": jnp.asarray(rng.randn(4, 1).astype(np.float32)), "b": jnp.zeros(1)}

    def loss(params):
        return jnp.mean((x @ params["w"] + params["b"] - y) ** 2)

    @jax.jit
    def update(params, opt_state):
        updates, opt_state = tx.update(jax.grad(loss)(params), opt_state, params)
        return optax.apply_updates(params, updates), opt_state

    return params, update


def jax_oracle():
    import optax

    tx = optax.sgd(0.1, momentum=0.9)
    params, update = jax_setup(tx)
    opt_state = tx.init(params)
    for _ in range(STEPS):
        params, opt_state = update(params, opt_state)
    print(show([params["w"], params["b"]]))


def jax_main():
    import jax.numpy as jnp
    import optax

    import runrun.jax as hvd

    hvd.init()
    tx = hvd.DistributedOptimizer(optax.sgd(0.1, momentum=0.9))
    params, update = jax_setup(tx)
    state = hvd.elastic.JaxState(params=params, opt_state=tx.init(params), step=0, total=0)
    resets = []
    state.register_reset_callbacks([lambda: resets.append(hvd.size())])

    def step():
        state.params, state.opt_state = update(state.params, state.opt_state)

    hvd.elastic.run(committed_steps)(state, hvd, step, jnp.ones(1))
    report(hvd, state, [state.params["w"], state.params["b"]], resets)
    hvd.shutdown()


# TensorFlow custom loop ----------------------------------------------------------------
def tf_setup(hvd):
    """Variables (weights and momentum) and a tf.function step; hvd=None: one plain process."""
    import tensorflow as tf

    x, y = batch()
    rng = np.random.RandomState(1234)
    w = tf.Variable(rng.randn(4, 1).astype(np.float32))
    b = tf.Variable(np.zeros(1, np.float32))
    velocity = [tf.Variable(tf.zeros_like(w)), tf.Variable(tf.zeros_like(b))]

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((x @ w + b - y) ** 2)
        if hvd is not None:
            tape = hvd.DistributedGradientTape(tape)
        for var, vel, grad in zip([w, b], velocity, tape.gradient(loss, [w, b])):
            vel.assign(0.9 * vel - 0.1 * grad)
            var.assign_add(vel)

    return [w, b], velocity, step


def tensorflow_oracle():
    weights, _, step = tf_setup(None)
    for _ in range(STEPS):
        step()
    print(show([v.numpy() for v in weights]))


def tensorflow_main():
    import runrun.tensorflow as hvd

    hvd.init()
    weights, velocity, step = tf_setup(hvd)
    state = hvd.elastic.TensorFlowState(weights + velocity, step=0, total=0)
    resets = []
    state.register_reset_callbacks([lambda: resets.append(hvd.size())])

    hvd.elastic.run(committed_steps)(state, hvd, step, np.ones(1, np.float32))
    report(hvd, state, [v.numpy() for v in weights], resets)
    hvd.shutdown()


if __name__ == "__main__":
    oracle = sys.argv[1:] == ["--oracle"]
    main, oracle_main = {"keras": (keras_main, keras_oracle), "jax": (jax_main, jax_oracle),
                         "tensorflow": (tensorflow_main, tensorflow_oracle)}[FRAMEWORK]
    oracle_main() if oracle else main()
