"""runrun.keras (issue 12, point 1) on the Keras backend this process runs (KERAS_BACKEND):
the Horovod Keras flow unchanged but for the import, training equivalence with one process on
the concatenated batch (DistributedOptimizer inside model.fit's compiled step, with
backward_passes_per_step), the callbacks, load_model, the ops on backend tensors, errors."""


import keras
import numpy as np
import pytest

import runrun.tensorflow.keras as hvd_tf_path  # noqa: F401  (Horovod's path, any backend)

BACKEND = keras.backend.backend()


def make_model(seed):
    keras.utils.set_random_seed(seed)
    model = keras.Sequential([keras.Input(shape=(6,)), keras.layers.Dense(8, activation="tanh"),
                              keras.layers.Dense(1)])
    return model


def data(samples=64, seed=5):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(samples, 6)).astype("float32")
    y = (x @ rng.normal(size=(6, 1))).astype("float32")
    return x, y


def shard(hvd, array, batch):
    """This rank's part of every global batch of `batch` rows (contiguous rows per rank), so
    that the ranks' local batches concatenate to the global batch."""
    r, local = hvd.rank(), batch // hvd.size()
    steps = len(array) // batch
    return np.concatenate([array[s * batch + r * local:s * batch + (r + 1) * local]
                           for s in range(steps)])


def test_horovod_import_path_is_the_same_module(hvd):
    import runrun.tensorflow.keras as via_tf

    assert via_tf is hvd and via_tf.callbacks is hvd.callbacks


def test_horovod_keras_flow(hvd):
    """The typical Horovod script, only the import changed: every rank ends with rank 0's
    trajectory (identical weights) and the loss goes down."""
    x, y = data(256)
    x, y = x[hvd.rank()::hvd.size()], y[hvd.rank()::hvd.size()]
    model = make_model(seed=100 + hvd.rank())  # different initial weights on every rank
    opt = keras.optimizers.SGD(learning_rate=0.01 * hvd.size(), momentum=0.9)
    opt = hvd.DistributedOptimizer(opt)
    model.compile(optimizer=opt, loss="mse")
    callbacks = [hvd.callbacks.BroadcastGlobalVariablesCallback(0)]
    history = model.fit(x, y, batch_size=16, steps_per_epoch=256 // 16 // hvd.size(),
                        epochs=2, callbacks=callbacks, verbose=0)
    mine = np.concatenate([w.reshape(-1) for w in model.get_weights()])
    root = keras.ops.convert_to_numpy(hvd.broadcast(mine, 0))
    assert np.array_equal(mine, root)
    assert history.history["loss"][-1] < history.history["loss"][0]


def test_broadcast_callback_with_a_model_built_by_its_first_batch(hvd):
    """Horovod's tensorflow2_keras_mnist.py: a Sequential without an input shape has no
    variables before its first batch; the callback broadcasts after it, as Horovod's (building
    the optimizer for no variables at train begin failed the first step: 'Unknown variable')."""
    keras.utils.set_random_seed(500 + hvd.rank())
    model = keras.Sequential([keras.layers.Dense(8, activation="tanh"), keras.layers.Dense(1)])
    model.compile(optimizer=hvd.DistributedOptimizer(keras.optimizers.Adam(0.01)), loss="mse")
    x, y = data(64)
    model.fit(x[hvd.rank()::hvd.size()], y[hvd.rank()::hvd.size()], batch_size=8, epochs=1,
              verbose=0, callbacks=[hvd.callbacks.BroadcastGlobalVariablesCallback(0)])
    for w in model.get_weights():
        assert np.array_equal(w, keras.ops.convert_to_numpy(hvd.broadcast(w, 0)))


@pytest.mark.parametrize("passes", [1, 2])
def test_training_equals_one_process_on_the_concatenated_batch(hvd, passes):
    check_accumulated_training_as_one_process(hvd, passes)


def test_training_after_rank_0_alone_built_other_functions(hvd):
    """Rank 0 alone trains a plain model with gradient accumulation first (functions the other
    ranks never build), then every rank trains with backward_passes_per_step: the conditional
    update's allreduce is named alike on every rank (on TensorFlow, a tf.cond branch's graph is
    named from a process-wide counter that now differs between ranks; it stalled before)."""
    if hvd.rank() == 0:
        alone = make_model(seed=1)
        alone.compile(optimizer=keras.optimizers.SGD(0.1, gradient_accumulation_steps=2),
                      loss="mse")
        alone.fit(*data(16), batch_size=4, verbose=0)
    check_accumulated_training_as_one_process(hvd, passes=2)


def check_accumulated_training_as_one_process(hvd, passes):
    batch, steps = 16, 4
    x, y = data(batch * steps * passes)
    model = make_model(seed=200 + hvd.rank())
    opt = hvd.DistributedOptimizer(keras.optimizers.SGD(learning_rate=0.05),
                                   backward_passes_per_step=passes)
    model.compile(optimizer=opt, loss="mse")
    # Horovod sums the gradients of the local passes, Keras' accumulation averages them: the
    # reference's lr is lr * passes.
    ref_opt = keras.optimizers.SGD(learning_rate=0.05 * passes,
                                   gradient_accumulation_steps=passes if passes > 1 else None)
    check_trains_as_one_process(hvd, model, make_model(seed=0), ref_opt, x, y, batch,
                                rtol=2e-5, atol=2e-6)


def check_trains_as_one_process(hvd, model, reference, ref_opt, x, y, batch, rtol, atol):
    """Fits the compiled `model` on this rank's shard of every global batch of `batch` rows,
    and `reference` (compiled with `ref_opt`) in this process on the whole batches, both from
    rank 0's initial weights: every weight must agree."""
    initial = [keras.ops.convert_to_numpy(hvd.broadcast(w, 0)) for w in model.get_weights()]
    reference.set_weights(initial)
    reference.compile(optimizer=ref_opt, loss="mse")
    reference.fit(x, y, batch_size=batch, shuffle=False, epochs=1, verbose=0)
    model.fit(shard(hvd, x, batch), shard(hvd, y, batch), batch_size=batch // hvd.size(),
              shuffle=False, epochs=1, verbose=0,
              callbacks=[hvd.callbacks.BroadcastGlobalVariablesCallback(0)])
    for mine, ref in zip(model.get_weights(), reference.get_weights()):
        np.testing.assert_allclose(mine, ref, rtol=rtol, atol=atol)
    assert not np.allclose(reference.get_weights()[0], initial[0])  # it did train


def test_fp16_compression_and_groups_keep_ranks_identical(hvd):
    x, y = data(64)
    model = make_model(seed=300 + hvd.rank())
    opt = hvd.DistributedOptimizer(keras.optimizers.Adam(0.01),
                                   compression=hvd.Compression.fp16, groups=2)
    model.compile(optimizer=opt, loss="mse")
    model.fit(x[hvd.rank()::hvd.size()], y[hvd.rank()::hvd.size()], batch_size=8, epochs=1,
              verbose=0, callbacks=[hvd.callbacks.BroadcastGlobalVariablesCallback(0)])
    for w in model.get_weights():
        assert np.array_equal(w, keras.ops.convert_to_numpy(hvd.broadcast(w, 0)))


def test_adasum_trains_ranks_alike_and_refuses_averaged_aggregation(hvd):
    """op=Adasum reduces the gradients with Adasum (as Horovod's Keras optimizer): the ranks
    stay identical; average_aggregated_gradients=True with it is Horovod's ValueError."""
    with pytest.raises(ValueError, match="Adasum does not support average_aggregated_gradients"):
        hvd.DistributedOptimizer(keras.optimizers.SGD(0.1), op=hvd.Adasum,
                                 backward_passes_per_step=2, average_aggregated_gradients=True)
    x, y = data(32)
    model = make_model(seed=500 + hvd.rank())
    model.compile(optimizer=hvd.DistributedOptimizer(keras.optimizers.SGD(0.05), op=hvd.Adasum),
                  loss="mse")
    model.fit(x[hvd.rank()::hvd.size()], y[hvd.rank()::hvd.size()], batch_size=8, epochs=1,
              verbose=0, callbacks=[hvd.callbacks.BroadcastGlobalVariablesCallback(0)])
    for w in model.get_weights():
        assert np.array_equal(w, keras.ops.convert_to_numpy(hvd.broadcast(w, 0)))


def test_groups_as_horovod(hvd):
    """Horovod's groups: lists of variables (every other variable a group of its own) or a
    number of groups; num_groups is its deprecated spelling. Training equals one process on the
    whole batch."""
    with pytest.warns(DeprecationWarning, match="num_groups"):
        assert hvd.DistributedOptimizer(keras.optimizers.SGD(0.1),
                                        num_groups=3)._runrun["groups"] == 3
    batch = 16
    x, y = data(batch * 4)
    model = make_model(seed=400 + hvd.rank())
    first = model.layers[0]
    opt = hvd.DistributedOptimizer(keras.optimizers.SGD(0.05),
                                   groups=[[first.kernel, first.bias]])
    model.compile(optimizer=opt, loss="mse")
    check_trains_as_one_process(hvd, model, make_model(seed=0), keras.optimizers.SGD(0.05),
                                x, y, batch, rtol=2e-5, atol=2e-6)
    object.__setattr__(opt, "_runrun_variables", list(model.trainable_variables))
    assert opt._group_positions([0, 1, 2, 3], opt._runrun["groups"]) == [[0, 1], [2], [3]]
    assert opt._group_positions([0, 1, 2, 3, 4], 3) == [[0, 1], [2, 3], [4]]
    with pytest.raises(ValueError, match="groups must be"):
        hvd.DistributedOptimizer(keras.optimizers.SGD(0.1), groups="two")


def two_branch_model(local_initial):
    """out = shared(x) + local(x), two bias-free Dense(1) on inputs of 2 features: with
    loss = mean(out), each kernel's gradient is the batch mean of x."""
    inputs = keras.Input(shape=(2,))
    shared = keras.layers.Dense(1, use_bias=False, kernel_initializer="zeros", name="shared")
    local = keras.layers.Dense(1, use_bias=False, name="local",
                               kernel_initializer=keras.initializers.Constant(local_initial))
    outputs = keras.layers.Add()([shared(inputs), local(inputs)])
    return keras.Model(inputs, outputs), shared, local


@pytest.mark.parametrize("scale", [True, False])
def test_partial_distributed_optimizer_keeps_local_layers_local(hvd, scale):
    """Horovod's model-parallel API: the local layer's gradient is this rank's own (divided by
    the size with scale_local_gradients), the shared one is averaged; the broadcast callback
    leaves the local variables alone (local_variables=)."""
    n, r = hvd.size(), hvd.rank()
    model, shared, local = two_branch_model(local_initial=float(r))
    opt = hvd.PartialDistributedOptimizer(keras.optimizers.SGD(learning_rate=1.0),
                                          local_layers=[local], scale_local_gradients=scale)
    model.compile(optimizer=opt, loss=lambda y_true, y_pred: keras.ops.mean(y_pred))
    x = np.full((4, 2), r + 1.0, "float32")  # gradient of either kernel: r + 1 on this rank
    callback = hvd.callbacks.BroadcastGlobalVariablesCallback(
        0, local_variables=local.trainable_weights)
    model.fit(x, np.zeros((4, 1), "float32"), batch_size=4, epochs=1, shuffle=False, verbose=0,
              callbacks=[callback])
    shared_kernel = keras.ops.convert_to_numpy(shared.kernel)
    local_kernel = keras.ops.convert_to_numpy(local.kernel)
    np.testing.assert_allclose(shared_kernel, np.full((2, 1), -(n + 1) / 2), rtol=1e-6)
    step = (r + 1.0) / n if scale else r + 1.0
    np.testing.assert_allclose(local_kernel, np.full((2, 1), r - step), rtol=1e-6)


def test_local_variables_sum_the_accumulated_passes_as_the_shared_ones(hvd):
    """backward_passes_per_step=2: Horovod sums the two local passes of every gradient, the
    local variables' included (Keras' accumulation averages them)."""
    n, r = hvd.size(), hvd.rank()
    model, shared, local = two_branch_model(local_initial=0.0)
    opt = hvd.PartialDistributedOptimizer(keras.optimizers.SGD(learning_rate=1.0),
                                          local_layers=local, backward_passes_per_step=2,
                                          scale_local_gradients=False)
    model.compile(optimizer=opt, loss=lambda y_true, y_pred: keras.ops.mean(y_pred))
    model.fit(np.full((8, 2), r + 1.0, "float32"), np.zeros((8, 1), "float32"), batch_size=4,
              epochs=1, shuffle=False, verbose=0)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(shared.kernel),
                               np.full((2, 1), -2 * (n + 1) / 2), rtol=1e-6)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(local.kernel),
                               np.full((2, 1), -2 * (r + 1.0)), rtol=1e-6)


def test_register_local_var_on_a_distributed_optimizer(hvd):
    n, r = hvd.size(), hvd.rank()
    model, shared, local = two_branch_model(local_initial=0.0)
    opt = hvd.DistributedOptimizer(keras.optimizers.SGD(learning_rate=1.0))
    for var in local.trainable_weights:
        opt.register_local_var(var)
    model.compile(optimizer=opt, loss=lambda y_true, y_pred: keras.ops.mean(y_pred))
    model.fit(np.full((4, 2), r + 1.0, "float32"), np.zeros((4, 1), "float32"), batch_size=4,
              epochs=1, verbose=0)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(shared.kernel),
                               np.full((2, 1), -(n + 1) / 2), rtol=1e-6)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(local.kernel),
                               np.full((2, 1), -(r + 1.0) / n), rtol=1e-6)


@pytest.mark.parametrize("uneven", [False, True])
def test_sync_batch_normalization_uses_the_statistics_of_the_whole_batch(hvd, uneven):
    """Training-mode output and moving statistics equal plain BatchNormalization's on the
    concatenated batch (ranks with batches of different sizes too)."""
    n, r = hvd.size(), hvd.rank()
    sizes = [3 + (k if uneven else 0) for k in range(n)]
    x = np.random.default_rng(7).normal(loc=2.0, size=(sum(sizes), 4, 3)).astype("float32")
    start = sum(sizes[:r])
    sync = hvd.SyncBatchNormalization(momentum=0.5)
    plain = keras.layers.BatchNormalization(momentum=0.5)
    mine = keras.ops.convert_to_numpy(sync(x[start:start + sizes[r]], training=True))
    whole = keras.ops.convert_to_numpy(plain(x, training=True))
    np.testing.assert_allclose(mine, whole[start:start + sizes[r]], rtol=1e-4, atol=1e-4)
    for a, b in ((sync.moving_mean, plain.moving_mean),
                 (sync.moving_variance, plain.moving_variance)):
        np.testing.assert_allclose(keras.ops.convert_to_numpy(a), keras.ops.convert_to_numpy(b),
                                   rtol=1e-5, atol=1e-6)
    # Inference uses the moving statistics and communicates nothing.
    np.testing.assert_allclose(keras.ops.convert_to_numpy(sync(x[:2], training=False)),
                               keras.ops.convert_to_numpy(plain(x[:2], training=False)),
                               rtol=1e-5, atol=1e-5)


def bn_model(seed, norm):
    keras.utils.set_random_seed(seed)
    return keras.Sequential([keras.Input(shape=(6,)), keras.layers.Dense(8), norm,
                             keras.layers.Activation("tanh"), keras.layers.Dense(1)])


def test_sync_batch_normalization_trains_as_one_process_on_the_concatenated_batch(hvd):
    """Gradients flow through the synchronized statistics to every rank's inputs: training
    with DistributedOptimizer equals one process with BatchNormalization on the whole batch."""
    batch, steps = 16, 3
    x, y = data(batch * steps)
    model = bn_model(400 + hvd.rank(), hvd.SyncBatchNormalization())
    model.compile(optimizer=hvd.DistributedOptimizer(keras.optimizers.SGD(learning_rate=0.1)),
                  loss="mse")
    check_trains_as_one_process(hvd, model, bn_model(0, keras.layers.BatchNormalization()),
                                keras.optimizers.SGD(learning_rate=0.1), x, y, batch,
                                rtol=1e-4, atol=1e-5)


def test_metric_average_callback(hvd):
    x, y = data(32, seed=hvd.rank())  # different data, so different losses per rank
    model = make_model(seed=1)
    model.compile(optimizer=hvd.DistributedOptimizer(keras.optimizers.SGD(0.01)), loss="mse",
                  metrics=["mae"])
    history = model.fit(x, y, batch_size=8, epochs=1, verbose=0,
                        callbacks=[hvd.callbacks.MetricAverageCallback()])
    logged = np.array([history.history["loss"][0], history.history["mae"][0]], np.float32)
    everyone = keras.ops.convert_to_numpy(hvd.allgather(logged[None, :]))
    assert np.array_equal(everyone, np.repeat(logged[None, :], hvd.size(), 0))


class _RecordLR(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.seen = []

    def on_train_batch_end(self, batch, logs=None):
        if hasattr(self.model, "jax_state_sync"):
            self.model.jax_state_sync()
        self.seen.append(float(keras.ops.convert_to_numpy(self.model.optimizer.learning_rate)))


def test_learning_rate_warmup_and_schedule(hvd):
    n, steps = hvd.size(), 4
    x, y = data(8 * steps)
    model = make_model(seed=2)
    model.compile(optimizer=hvd.DistributedOptimizer(keras.optimizers.SGD(1.0)), loss="mse")
    record = _RecordLR()
    model.fit(x, y, batch_size=8, epochs=4, verbose=0, callbacks=[
        hvd.callbacks.LearningRateWarmupCallback(initial_lr=0.4, warmup_epochs=2),
        hvd.callbacks.LearningRateScheduleCallback(initial_lr=0.4, multiplier=0.5,
                                                   start_epoch=2),
        record])
    expected = []
    for epoch in range(2):
        for batch in range(steps):
            e = epoch + batch / steps + 1.0 / steps
            expected.append(0.4 / n * (e * (n - 1) / 2 + 1))
    # A constant multiplier decays from start_epoch on, as in Horovod (m ** (epoch - start)).
    expected += [0.4] * steps + [0.4 * 0.5] * steps
    np.testing.assert_allclose(record.seen, expected, rtol=1e-6)


def test_load_model_wraps_the_optimizer_and_keeps_its_state(hvd, tmp_path):
    x, y = data(32)
    model = make_model(seed=3)
    model.compile(optimizer=hvd.DistributedOptimizer(keras.optimizers.Adam(0.01)), loss="mse")
    model.fit(x, y, batch_size=8, epochs=1, verbose=0)
    path = str(tmp_path / f"model_rank{hvd.rank()}.keras")
    model.save(path)
    loaded = hvd.load_model(path)
    assert type(loaded.optimizer).__name__ == "Adam"
    assert any(c.__name__ == "_DistributedMixin" for c in type(loaded.optimizer).__mro__)
    assert int(keras.ops.convert_to_numpy(loaded.optimizer.iterations)) == 4
    loaded.fit(x[hvd.rank()::hvd.size()], y[hvd.rank()::hvd.size()], batch_size=4, epochs=1,
               verbose=0)
    for w in loaded.get_weights():  # identical start, averaged gradients: identical weights
        assert np.array_equal(w, keras.ops.convert_to_numpy(hvd.broadcast(w, 0)))


def test_load_model_of_a_legacy_h5_file_keeps_what_it_holds(hvd, tmp_path):
    """Horovod's Keras examples checkpoint to .h5: Keras 3 loads such a file's optimizer with
    its iteration count and learning rate but no slots. load_model carries those, warns that the
    slots start fresh (as keras.models.load_model does silently), and training goes on."""
    x, y = data(32)
    model = make_model(seed=6)
    # ("mse" itself does not load back from .h5 in Keras 3.15; its long name does.)
    model.compile(optimizer=hvd.DistributedOptimizer(keras.optimizers.SGD(0.05, momentum=0.9)),
                  loss="mean_squared_error")
    model.fit(x, y, batch_size=8, epochs=1, verbose=0)
    path = str(tmp_path / f"model_rank{hvd.rank()}.h5")
    model.save(path)
    with pytest.warns(UserWarning, match="start fresh"):
        loaded = hvd.load_model(path)
    assert any(c.__name__ == "_DistributedMixin" for c in type(loaded.optimizer).__mro__)
    assert int(keras.ops.convert_to_numpy(loaded.optimizer.iterations)) == 4
    loaded.fit(x[hvd.rank()::hvd.size()], y[hvd.rank()::hvd.size()], batch_size=4, epochs=1,
               verbose=0)
    for w in loaded.get_weights():
        assert np.array_equal(w, keras.ops.convert_to_numpy(hvd.broadcast(w, 0)))


def test_load_model_with_backward_passes_keeps_the_state_in_its_variables(hvd, tmp_path):
    """With backward_passes_per_step the wrapped optimizer has Keras' gradient accumulators
    before its slots: the loaded state goes to the slots, not (by position) into the
    accumulators with the last slots dropped."""
    x, y = data(32)
    model = make_model(seed=4)
    model.compile(optimizer=keras.optimizers.SGD(0.05, momentum=0.9), loss="mse")
    model.fit(x, y, batch_size=8, epochs=1, verbose=0)
    path = str(tmp_path / f"model_rank{hvd.rank()}.keras")
    model.save(path)
    loaded = hvd.load_model(path, backward_passes_per_step=2)
    accumulators = loaded.optimizer._accumulated_gradients
    assert accumulators and all(
        not np.any(keras.ops.convert_to_numpy(v)) for v in accumulators)
    slots = [v for v in loaded.optimizer.variables if all(v is not a for a in accumulators)]
    assert len(slots) == len(model.optimizer.variables)
    for mine, saved in zip(slots, model.optimizer.variables):
        assert np.array_equal(keras.ops.convert_to_numpy(mine), keras.ops.convert_to_numpy(saved))


def test_ops_on_backend_tensors(hvd):
    n, r = hvd.size(), hvd.rank()
    t = keras.ops.convert_to_tensor(np.array([1.0, 2.0], np.float32) * (r + 1))
    summed = hvd.allreduce(t, op=hvd.Sum)
    assert keras.ops.is_tensor(summed)
    total = sum(k + 1 for k in range(n))
    assert keras.ops.convert_to_numpy(summed).tolist() == [1.0 * total, 2.0 * total]
    assert np.allclose(keras.ops.convert_to_numpy(hvd.allreduce(t)), [total / n, 2 * total / n])
    gathered = keras.ops.convert_to_numpy(hvd.allgather(keras.ops.reshape(t, (1, 2))))
    assert gathered.shape == (n, 2) and gathered[:, 0].tolist() == [k + 1.0 for k in range(n)]
    assert keras.ops.convert_to_numpy(hvd.broadcast(t, n - 1)).tolist() == [n * 1.0, n * 2.0]
    v = keras.Variable(np.full((3,), float(r)))
    hvd.broadcast_variables([v], root_rank=n - 1)
    assert keras.ops.convert_to_numpy(v).tolist() == [n - 1.0] * 3


def test_errors(hvd):
    with pytest.raises(hvd.MismatchError, match="mismatched shape"):
        hvd.allreduce(keras.ops.ones((hvd.rank() + 1,)), name="keras.mismatch")
    with pytest.raises(ValueError, match="keras.optimizers.Optimizer"):
        hvd.DistributedOptimizer(object())
    with pytest.raises(hvd.UnsupportedError, match="broadcast_variables"):
        hvd.broadcast_global_variables(0)
    if BACKEND == "tensorflow":
        import tensorflow as tf

        with pytest.raises(tf.errors.FailedPreconditionError, match="mismatched shape"):
            hvd.allreduce(keras.ops.ones((hvd.rank() + 1,)), name="keras.mismatch.tf")
