"""Elastic training for Keras 3 (Horovod's horovod.tensorflow.keras.elastic): `run`,
`KerasState` and the callbacks that keep the state's epoch and batch and commit it during
`model.fit`. docs/elastic.md, "Keras".

    state = hvd.elastic.KerasState(model, epoch=0, batch=0)
    @hvd.elastic.run
    def train(state):
        model.fit(..., epochs=epochs - state.epoch, callbacks=[
            hvd.elastic.UpdateEpochStateCallback(state), hvd.elastic.CommitStateCallback(state)])

Thread-safety: the state and the callbacks are used from the training (fit) thread.
"""

import keras

from runrun.common import basics
from runrun.elastic import HorovodInternalError, HostsUpdatedInterrupt, ObjectState, State
from runrun.elastic import run_fn as _run_fn
from runrun.elastic.framework_errors import translating
from runrun.elastic.objects import broadcast_object
from runrun.keras import host_values as hv
from runrun.keras._backend_ops import framework_errors
from runrun.keras.functions import _sync_jax_state


def run(func):
    """Decorator: runs `func(state, ...)` again after every reset of the job (runrun.elastic's
    loop); a runrun failure inside fit's compiled step (a tf.errors.OpError or a
    JaxRuntimeError naming it) counts as the HorovodInternalError it is."""
    return _run_fn(translating(func, framework_errors))


class KerasState(ObjectState):
    """`KerasState(model, optimizer=None, epoch=0, batch=0)`: save() copies the model's weights
    and the optimizer's variables (iterations, learning rate, slots) to numpy; restore()
    assigns them back; sync() broadcasts them from rank 0 (building the optimizer first where
    it is not, so every rank has the same variables). `optimizer` defaults to
    model.optimizer. Other keyword arguments are plain attributes (ObjectState)."""

    def __init__(self, model, optimizer=None, **kwargs):
        self.model = model
        self.optimizer = optimizer if optimizer is not None else getattr(model, "optimizer",
                                                                          None)
        super().__init__(bcast_object=broadcast_object, get_rank=basics.rank, **kwargs)
        self._saved_model = None
        self._saved_optimizer = None
        self._save_objects()

    def _optimizer_variables(self):
        if self.optimizer is None:
            return []
        if not self.optimizer.built and self.model.trainable_variables:
            self.optimizer.build(self.model.trainable_variables)
        return list(self.optimizer.variables)

    def _save_objects(self):
        _sync_jax_state(self.model)  # fit on JAX keeps the live values outside the variables
        self._saved_model = [hv.to_numpy(v).copy() for v in self.model.weights]
        self._saved_optimizer = [hv.to_numpy(v).copy() for v in self._optimizer_variables()]

    def save(self):
        self._save_objects()
        super().save()

    def restore(self):
        for variable, value in zip(self.model.weights, self._saved_model):
            variable.assign(value)
        for variable, value in zip(self._optimizer_variables(), self._saved_optimizer):
            variable.assign(value)
        super().restore()

    def sync(self):
        _sync_jax_state(self.model)
        variables = list(self.model.weights) + self._optimizer_variables()
        arrays = hv.broadcast_arrays([hv.to_numpy(v) for v in variables], 0,
                                     name="elastic.keras_state")
        for variable, value in zip(variables, arrays):
            variable.assign(value)
        super().sync()
        # The copies taken at the last commit follow the synced state (new ranks had none).
        self._save_objects()


class CommitStateCallback(keras.callbacks.Callback):
    """Commits `state` every `batches_per_commit` batches and at the end of every epoch (the
    count restarts at every fit, so that every rank commits at the same batches)."""

    def __init__(self, state, batches_per_commit=1):
        super().__init__()
        self.state = state
        self.batches_per_commit = batches_per_commit
        self.batches_remaining = batches_per_commit

    def on_train_begin(self, logs=None):
        self.batches_remaining = self.batches_per_commit

    def on_train_batch_end(self, batch, logs=None):
        self.batches_remaining -= 1
        if self.batches_remaining <= 0:
            self.state.commit()
            self.batches_remaining = self.batches_per_commit

    def on_epoch_end(self, epoch, logs=None):
        self.state.commit()


class UpdateBatchStateCallback(keras.callbacks.Callback):
    """Keeps `state.batch` = the batches done in the current epoch, counting those done before a
    reset (fit's batch numbers restart at 0 in every fit), and 0 at the end of an epoch.
    Keras 3 gives a callback no way to shorten an epoch (Horovod lowered params['steps'], which
    Keras 3 does not read): to resume mid-epoch, pass steps_per_epoch=steps - state.batch."""

    def __init__(self, state):
        super().__init__()
        self.state = state
        self.offset = state.batch

    def on_train_begin(self, logs=None):
        self.offset = self.state.batch

    def on_train_batch_end(self, batch, logs=None):
        self.state.batch = self.offset + batch + 1

    def on_epoch_end(self, epoch, logs=None):
        self.state.batch = 0
        self.offset = 0


class UpdateEpochStateCallback(keras.callbacks.Callback):
    """Keeps `state.epoch` = the epochs finished over every fit of the job (Keras numbers the
    epochs of each fit from 0; pass epochs=total - state.epoch to fit)."""

    def __init__(self, state):
        super().__init__()
        self.state = state
        self.initial_epoch = state.epoch

    def on_train_begin(self, logs=None):
        self.initial_epoch = self.state.epoch

    def on_epoch_end(self, epoch, logs=None):
        self.state.epoch = self.initial_epoch + epoch + 1


__all__ = ["CommitStateCallback", "HorovodInternalError", "HostsUpdatedInterrupt", "KerasState",
           "ObjectState", "State", "UpdateBatchStateCallback", "UpdateEpochStateCallback", "run"]
