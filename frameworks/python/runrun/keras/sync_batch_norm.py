"""SyncBatchNormalization: a Keras 3 BatchNormalization whose training statistics are those of
the whole batch over the ranks of a process set, as horovod.tensorflow.SyncBatchNormalization
(runrun.torch has SyncBatchNorm), on every Keras backend.

Why: with small per-rank batches (detection, segmentation, large inputs) each rank's own batch
statistics are noisy; synchronized ones are what one process on the concatenated batch computes.
In training each call sums, per channel, the count, the sum and the sum of squares of its
inputs (a mask counts) in one Sum allreduce of 3C values, and derives mean and variance from
the totals, so ranks may hold batches of different sizes. The allreduce is
the backend framework's differentiable one (runrun.tensorflow, runrun.torch or runrun.jax
`allreduce`, whose gradient is the Sum allreduce of the incoming gradient), so gradients reach
every rank's inputs as they would on one process. The moving statistics are updated from the
synchronized ones, identical on every rank; inference uses them and communicates nothing.
The op is named after the layer ("SyncBatchNormalization.<layer name>"): every rank must build
its layers under the same names (Keras names them in creation order). The class is registered
for saving (package "runrun"), so keras.models.load_model finds it once runrun.keras is
imported; `process_set` is not saved (a loaded layer uses the global set).
Thread-safety: as a Keras layer (called by the training loop's thread, or traced).
"""

import keras
from keras import ops

from runrun.common.ops import Sum
from runrun.common.process_sets import global_process_set
from runrun.keras._backend_ops import differentiable_allreduce


def _allreduce_sum(tensor, name, process_set):
    """The differentiable Sum allreduce of the framework Keras runs on."""
    allreduce = differentiable_allreduce("SyncBatchNormalization")
    return allreduce(tensor, op=Sum, name=name, process_set=process_set)


@keras.saving.register_keras_serializable(package="runrun")
class SyncBatchNormalization(keras.layers.BatchNormalization):
    """keras.layers.BatchNormalization with batch statistics synchronized over `process_set`
    in training (every argument of BatchNormalization; `synchronized` is tf.distribute's and
    must stay False). `fused`: Horovod's argument (Keras 2's), accepted as Horovod does: False
    is what the layer does anyway (Keras 3 has no fused kernel to choose); True and None
    (Keras 2's "fused when possible") raise ValueError."""

    def __init__(self, *args, fused=False, process_set=global_process_set, **kwargs):
        if fused in (True, None):
            raise ValueError("SyncBatchNormalization does not support fused=True (nor "
                             "fused=None): its statistics are synchronized outside the fused "
                             "kernel; pass fused=False or leave it out")
        super().__init__(*args, **kwargs)
        if self.synchronized:
            raise ValueError(
                "SyncBatchNormalization synchronizes over runrun's ranks; synchronized=True "
                "(tf.distribute's) cannot be combined with it")
        self._runrun_process_set = process_set

    def _moments(self, inputs, mask):
        process_set = self._runrun_process_set
        if process_set.size() == 1:
            return super()._moments(inputs, mask)
        axes = self._reduction_axes
        if mask is None:
            count = ops.sum(ops.ones_like(inputs), axis=axes)
        else:  # as Keras: masked-out values are left out (not multiplied by 0: NaN, inf)
            keep = ops.broadcast_to(ops.expand_dims(ops.cast(mask, "bool"), axis=-1),
                                    ops.shape(inputs))
            inputs = ops.where(keep, inputs, 0)
            count = ops.sum(ops.cast(keep, inputs.dtype), axis=axes)
        total = ops.sum(inputs, axis=axes)
        total_of_squares = ops.sum(ops.square(inputs), axis=axes)
        channels = total.shape[0]
        totals = _allreduce_sum(ops.concatenate([total, total_of_squares, count], axis=0),
                                f"SyncBatchNormalization.{self.name}", process_set)
        count = ops.maximum(totals[2 * channels:], 1.0)
        mean = totals[:channels] / count
        variance = ops.maximum(totals[channels:2 * channels] / count - ops.square(mean), 0.0)
        return mean, variance
