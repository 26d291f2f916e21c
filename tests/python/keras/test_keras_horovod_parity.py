"""runrun.keras where it differed from Horovod 0.28.1's horovod.tensorflow.keras, on the Keras
backend this process runs: SyncBatchNormalization takes Horovod's `fused` argument (refusing
True and None, as Horovod), and DistributedOptimizer(process_set=s) on a rank outside s applies
that rank's own gradients instead of failing."""

import keras
import numpy as np
import pytest


def test_sync_batch_normalization_takes_horovods_fused_argument(hvd):
    """Horovod's scripts write SyncBatchNormalization(fused=False) (Keras 2's argument, which
    Keras 3 refuses); Horovod refuses only fused=True and fused=None."""
    n, r = hvd.size(), hvd.rank()
    x = np.random.default_rng(3).normal(loc=1.0, size=(2 * n, 3)).astype("float32")
    layer = hvd.SyncBatchNormalization(fused=False, momentum=0.5, name="sync_bn_fused_false")
    mine = keras.ops.convert_to_numpy(layer(x[2 * r:2 * r + 2], training=True))
    whole = (x - x.mean(0)) / np.sqrt(x.var(0) + layer.epsilon)
    np.testing.assert_allclose(mine, whole[2 * r:2 * r + 2], rtol=1e-4, atol=1e-4)
    assert "fused" not in layer.get_config()  # saved and loaded as a Keras 3 layer
    for fused in (True, None):
        with pytest.raises(ValueError, match="does not support fused=True"):
            hvd.SyncBatchNormalization(fused=fused)


def one_kernel_model():
    """out = x @ kernel (2 features, kernel zeros): with loss = mean(out), the kernel's
    gradient is the batch mean of x."""
    model = keras.Sequential([keras.Input(shape=(2,)),
                              keras.layers.Dense(1, use_bias=False, kernel_initializer="zeros")])
    return model


@pytest.mark.parametrize("passes", [1, 2])
def test_distributed_optimizer_on_a_rank_outside_its_process_set(hvd, passes):
    """The set is every rank but the last. Its ranks apply the gradient averaged over the set;
    the last rank applies its own (as Horovod's, summed over backward_passes_per_step),
    instead of failing with 'not a member of process set'."""
    n, r = hvd.size(), hvd.rank()
    if n < 2:
        pytest.skip("a set that leaves a rank out needs 2 ranks")
    members = list(range(n - 1))
    subset = hvd.add_process_set(members)
    try:
        model = one_kernel_model()
        opt = hvd.DistributedOptimizer(keras.optimizers.SGD(learning_rate=1.0),
                                       process_set=subset, backward_passes_per_step=passes)
        model.compile(optimizer=opt, loss=lambda y_true, y_pred: keras.ops.mean(y_pred))
        x = np.full((4 * passes, 2), r + 1.0, "float32")  # the gradient: r + 1 on this rank
        model.fit(x, np.zeros((4 * passes, 1), "float32"), batch_size=4, epochs=1,
                  shuffle=False, verbose=0)
        step = np.mean([k + 1.0 for k in members]) if r in members else r + 1.0
        np.testing.assert_allclose(keras.ops.convert_to_numpy(model.layers[0].kernel),
                                   np.full((2, 1), -passes * step), rtol=1e-6)
    finally:
        hvd.remove_process_set(subset)
