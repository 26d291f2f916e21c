"""runrun.tensorflow.DistributedOptimizer (horovod.tensorflow's): a Keras optimizer is wrapped
by runrun.keras' DistributedOptimizer with the arguments Horovod forwards, and trains as one
process on the concatenated batch; a tf.compat.v1 optimizer is refused."""

import warnings

import numpy as np
import pytest
import tensorflow as tf


def make_model(seed):
    tf.keras.utils.set_random_seed(seed)
    return tf.keras.Sequential([tf.keras.Input(shape=(6,)),
                                tf.keras.layers.Dense(8, activation="tanh"),
                                tf.keras.layers.Dense(1)])


def shard(hvd, array, batch):
    """This rank's rows of every global batch of `batch` rows (contiguous per rank)."""
    local = batch // hvd.size()
    return np.concatenate([array[s + hvd.rank() * local:s + (hvd.rank() + 1) * local]
                           for s in range(0, len(array), batch)])


@pytest.mark.parametrize("passes", [1, 2])
def test_keras_optimizer_trains_as_one_process_on_the_concatenated_batch(hvd, passes):
    batch = 8 * hvd.size()
    rng = np.random.default_rng(5)
    x = rng.normal(size=(batch * 4 * passes, 6)).astype("float32")
    y = (x @ rng.normal(size=(6, 1))).astype("float32")
    model = make_model(seed=200 + hvd.rank())  # different initial weights on every rank
    initial = [hvd.broadcast(w, 0).numpy() for w in model.get_weights()]
    model.set_weights(initial)
    opt = hvd.DistributedOptimizer(tf.keras.optimizers.SGD(learning_rate=0.05, momentum=0.5),
                                   backward_passes_per_step=passes)
    assert isinstance(opt, tf.keras.optimizers.SGD)
    model.compile(optimizer=opt, loss="mse")
    model.fit(shard(hvd, x, batch), shard(hvd, y, batch), batch_size=batch // hvd.size(),
              shuffle=False, epochs=1, verbose=0)
    # Horovod sums the local passes' gradients, Keras' accumulation averages them.
    reference = make_model(seed=0)
    reference.set_weights(initial)
    reference.compile(loss="mse", optimizer=tf.keras.optimizers.SGD(
        learning_rate=0.05 * passes, momentum=0.5,
        gradient_accumulation_steps=passes if passes > 1 else None))
    reference.fit(x, y, batch_size=batch, shuffle=False, epochs=1, verbose=0)
    for mine, ref in zip(model.get_weights(), reference.get_weights()):
        np.testing.assert_allclose(mine, ref, rtol=2e-5, atol=2e-6)
    assert not np.allclose(reference.get_weights()[0], initial[0])  # it did train


def test_arguments_horovod_does_not_forward_are_dropped_with_a_warning(hvd):
    """As horovod.tensorflow.DistributedOptimizer: op and groups do not reach the Keras
    optimizer (it averages); runrun says so."""
    with pytest.warns(UserWarning, match="ignores op=SUM"):
        opt = hvd.DistributedOptimizer(tf.keras.optimizers.SGD(0.1), op=hvd.Sum)
    assert opt._runrun["op"] == hvd.Average
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hvd.DistributedOptimizer(tf.keras.optimizers.SGD(0.1), compression=hvd.Compression.fp16)


def test_tf1_optimizer_and_other_objects_are_refused(hvd):
    legacy = tf.compat.v1.train.GradientDescentOptimizer(0.1)
    with pytest.raises(NotImplementedError, match="does not wrap tf.compat.v1 optimizers") as e:
        hvd.DistributedOptimizer(legacy)
    assert isinstance(e.value, tf.errors.UnimplementedError)
    assert isinstance(e.value, hvd.UnsupportedError)
    with pytest.raises(ValueError, match="wraps a Keras optimizer"):
        hvd.DistributedOptimizer(object())
    with pytest.raises(ValueError, match="Adasum"):
        hvd.DistributedOptimizer(tf.keras.optimizers.SGD(0.1), op=hvd.Adasum)
    with pytest.raises(ValueError, match="gradient_predivide_factor"):
        hvd.DistributedOptimizer(tf.keras.optimizers.SGD(0.1), op=hvd.Sum,
                                 gradient_predivide_factor=2.0)
