"""horovod.tensorflow.keras.callbacks for Keras 3, on every backend.

BroadcastGlobalVariablesCallback(root_rank): root_rank's model and optimizer variables on every
rank before the first step (on_train_begin, after building the optimizer; Horovod broadcast
after the first batch because Keras 2 created optimizer slots lazily: here the first step
already starts from the same weights), or after the first batch, as Horovod, for a model
that has no variables before it (no input shape). MetricAverageCallback: epoch-end metrics
averaged over the ranks (one allreduce of all of them, in name order). LearningRateScheduleCallback
and
LearningRateWarmupCallback: Horovod's schedules (lr = initial_lr * multiplier(epoch)), set
through the optimizer's learning-rate variable, which the compiled train step reads.
momentum_correction is accepted and has no effect: Keras 3 compiles the momentum into the
train step as a constant (docs/keras.md).
Thread-safety: Keras calls callbacks from the fit loop's thread.
"""

import keras
import numpy as np

from runrun.common import basics
from runrun.common.ops import Average
from runrun.common.process_sets import global_process_set
from runrun.keras import host_values as hv
from runrun.keras.functions import _sync_jax_state, broadcast_variables


class BroadcastGlobalVariablesCallback(keras.callbacks.Callback):
    """Broadcasts root_rank's model and optimizer variables to every rank when training
    starts (once per callback object), except `local_variables` (each rank keeps its own, as
    for the variables of PartialDistributedOptimizer's local layers). `device` is accepted for
    Horovod compatibility."""

    def __init__(self, root_rank=0, device="", local_variables=None,
                 process_set=global_process_set):
        super().__init__()
        del device
        self.root_rank = root_rank
        self.process_set = process_set
        self.broadcast_done = False
        # id -> variable (held, so the ids stay unique): Keras 3 variables have no ref().
        self._local_variables = {id(v): v for v in (local_variables or [])}

    def _broadcast(self):
        model = self.model
        optimizer = getattr(model, "optimizer", None)
        if optimizer is not None and not optimizer.built:
            optimizer.build(model.trainable_variables)
        variables = list(model.variables)
        if optimizer is not None:
            variables += list(optimizer.variables)
        variables = [v for v in variables if id(v) not in self._local_variables]
        broadcast_variables(variables, self.root_rank, self.process_set, model=model)
        self.broadcast_done = True

    def on_train_begin(self, logs=None):
        # A model without an input shape (Sequential([Dense(8), ...])) has no variables until
        # its first batch: building the optimizer now would build it for none. Such a model is
        # broadcast after its first batch, as Horovod broadcasts every model.
        if not self.broadcast_done and self.model.built and self.model.trainable_variables:
            self._broadcast()

    def on_batch_end(self, batch, logs=None):
        if not self.broadcast_done:  # a model first built by its first batch
            self._broadcast()


class MetricAverageCallback(keras.callbacks.Callback):
    """Replaces each epoch-end metric in `logs` by its average over the ranks (every rank
    must log the same metrics). `device` is accepted for Horovod compatibility."""

    def __init__(self, device="", process_set=global_process_set):
        super().__init__()
        del device
        self.process_set = process_set

    def on_epoch_end(self, epoch, logs=None):
        if not logs:
            return
        names = sorted(logs)
        values = np.array([float(np.asarray(logs[n])) for n in names], dtype=np.float64)
        averaged = hv.allreduce_array(values, Average, name=f"MetricAverageCallback.{epoch}",
                                      process_set=self.process_set)
        for name, value in zip(names, averaged.tolist()):
            logs[name] = value


def _get_lr(optimizer):
    return float(keras.ops.convert_to_numpy(optimizer.learning_rate))


class LearningRateScheduleCallback(keras.callbacks.Callback):
    """lr = initial_lr * multiplier(epoch) from start_epoch until end_epoch (exclusive); a
    constant multiplier m means m ** (epoch - start_epoch), as in Horovod (its PR 3135: the
    decay counts from start_epoch, initial_lr at start_epoch). staircase: set at each epoch's
    first batch; else every batch with a fractional epoch (steps_per_epoch from fit's params
    when None)."""

    def __init__(self, initial_lr, multiplier, start_epoch=0, end_epoch=None, staircase=True,
                 momentum_correction=True, steps_per_epoch=None):
        super().__init__()
        if initial_lr is None:
            raise ValueError("Parameter `initial_lr` is required")
        del momentum_correction  # see the module docstring
        self.initial_lr = initial_lr
        self.multiplier = multiplier if callable(multiplier) else \
            (lambda epoch: multiplier ** (epoch - start_epoch))
        self.start_epoch = start_epoch
        self.end_epoch = end_epoch
        self.staircase = staircase
        self.steps_per_epoch = steps_per_epoch
        self.current_epoch = None

    def _autodetect_steps_per_epoch(self):
        steps = (self.params or {}).get("steps")
        if steps:
            return steps
        raise ValueError(
            f"Could not autodetect the number of steps per epoch; pass steps_per_epoch to "
            f"{type(self).__name__}() or steps_per_epoch to fit()")

    def _adjust_learning_rate(self, epoch):
        _sync_jax_state(self.model)
        self.model.optimizer.learning_rate = self.initial_lr * self.multiplier(epoch)

    def on_train_begin(self, logs=None):
        if not self.staircase and not self.steps_per_epoch:
            self.steps_per_epoch = self._autodetect_steps_per_epoch()

    def on_epoch_begin(self, epoch, logs=None):
        self.current_epoch = epoch

    def on_train_batch_begin(self, batch, logs=None):
        if self.current_epoch < self.start_epoch or \
                (self.end_epoch is not None and self.current_epoch >= self.end_epoch):
            return
        if self.staircase and batch == 0:
            self._adjust_learning_rate(self.current_epoch)
        elif not self.staircase:
            self._adjust_learning_rate(self.current_epoch + float(batch) / self.steps_per_epoch)

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            _sync_jax_state(self.model)
            logs["lr"] = _get_lr(self.model.optimizer)


class LearningRateWarmupCallback(LearningRateScheduleCallback):
    """Horovod's gradual warmup: from initial_lr / size to initial_lr over warmup_epochs
    (lr = initial_lr / size * (epoch * (size - 1) / warmup_epochs + 1), per batch)."""

    def __init__(self, initial_lr, warmup_epochs=5, momentum_correction=True,
                 steps_per_epoch=None, verbose=0):
        def multiplier(epoch):
            epoch += 1.0 / self.steps_per_epoch
            size = basics.size()
            return 1.0 / size * (epoch * (size - 1) / warmup_epochs + 1)

        super().__init__(initial_lr, multiplier, start_epoch=0, end_epoch=warmup_epochs,
                         staircase=False, momentum_correction=momentum_correction,
                         steps_per_epoch=steps_per_epoch)
        self.verbose = verbose

    def on_epoch_end(self, epoch, logs=None):
        super().on_epoch_end(epoch, logs)
        if epoch == self.end_epoch - 1 and self.verbose > 0 and basics.rank() == 0:
            print(f"\nEpoch {epoch + 1}: finished gradual learning rate warmup to "
                  f"{_get_lr(self.model.optimizer):g}.")
