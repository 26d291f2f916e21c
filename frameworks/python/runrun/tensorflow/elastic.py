"""Elastic training for TensorFlow 2 (Horovod's horovod.tensorflow.elastic): `run`,
`TensorFlowState` (a list of variables of a custom training loop) and `TensorFlowKerasState` (a
Keras model and its optimizer). docs/elastic.md.

    state = hvd.elastic.TensorFlowState(variables, step=0)
    @hvd.elastic.run
    def train(state):
        while state.step < steps:
            train_step()              # a tf.function with DistributedGradientTape
            state.step += 1
            state.commit()

Why: the custom-loop scripts of horovod.tensorflow keep their state in tf.Variables; a reset
rolls them back to the last commit (restore) and the new generation starts from rank 0's
values (sync), as the Keras and JAX states do. A lost peer inside a tf.function arrives as a
tf.errors.OpError carrying runrun's message; `run` turns it back into the HorovodInternalError
the elastic loop catches (runrun.elastic.framework_errors).
Thread-safety: the state is used from the training thread.
"""

import tensorflow as tf

from runrun.common import basics
from runrun.common.exceptions import InvalidArgumentError
from runrun.elastic import HorovodInternalError, HostsUpdatedInterrupt, ObjectState, State
from runrun.elastic import run_fn as _run_fn
from runrun.elastic.framework_errors import translating
from runrun.elastic.objects import broadcast_object
from runrun.tensorflow.functions import broadcast_variables
from runrun.tensorflow.keras.elastic import KerasState  # runrun.keras', through the shim


def _framework_errors():
    return (tf.errors.OpError,)


def run(func):
    """Decorator: runs `func(state, ...)` again after every reset of the job (runrun.elastic's
    loop); a runrun failure inside a tf.function (a tf.errors.OpError naming it) counts as the
    HorovodInternalError it is."""
    return _run_fn(translating(func, _framework_errors))


class TensorFlowState(ObjectState):
    """`TensorFlowState(variables, session=None, **attrs)`: save() copies the variables' values,
    restore() assigns them back, sync() broadcasts them from rank 0. TensorFlow 2 has no global
    variables to default to: pass the list (e.g. model.variables + optimizer.variables).
    `session` (TF1) is accepted for Horovod compatibility. Other keyword arguments are plain
    attributes (ObjectState)."""

    def __init__(self, variables=None, session=None, **kwargs):
        del session
        if variables is None:
            raise InvalidArgumentError(
                "TensorFlowState: TensorFlow 2 has no global variables to track; pass the "
                "variables (e.g. model.variables + optimizer.variables)")
        self.variables = list(variables)
        super().__init__(bcast_object=broadcast_object, get_rank=basics.rank, **kwargs)
        self._values = None
        self._save_variables()

    def _save_variables(self):
        self._values = [tf.convert_to_tensor(v).numpy().copy() for v in self.variables]

    def save(self):
        self._save_variables()
        super().save()

    def restore(self):
        for variable, value in zip(self.variables, self._values):
            variable.assign(value)
        super().restore()

    def sync(self):
        broadcast_variables(self.variables, root_rank=0)
        super().sync()
        self._save_variables()  # new ranks had no commit: the synced values are the first


class TensorFlowKerasState(KerasState):
    """`TensorFlowKerasState(model, optimizer=None, backend=None, **attrs)`: the model's and
    optimizer's variables (runrun.keras.elastic.KerasState); `backend` (TF1's session source)
    is accepted for Horovod compatibility."""

    def __init__(self, model, optimizer=None, backend=None, **kwargs):
        del backend
        super().__init__(model, optimizer, **kwargs)


__all__ = ["HorovodInternalError", "HostsUpdatedInterrupt", "ObjectState", "State",
           "TensorFlowKerasState", "TensorFlowState", "run"]
