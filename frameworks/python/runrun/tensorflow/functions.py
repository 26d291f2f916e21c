"""horovod.tensorflow's helpers beyond single ops: broadcast_variables, broadcast_,
broadcast_global_variables (refused, as Horovod's in eager mode) and the object collectives
(Python objects pickled by runrun.common.object_codec: cloudpickle when installed, as
Horovod).

Why: a job starts from rank 0's weights (broadcast_variables after building the model, or in
the first step of a tf.function) and shares small Python state (epochs, configs).
broadcast_variables enqueues every variable's broadcast before waiting for any in eager mode;
inside tf.function it adds one broadcast node and one assign per variable.
Objects travel as uint8 numpy arrays through runrun.common's numpy adapter.
Thread-safety: as the ops (one name in flight per op).
"""

import numpy as np
import tensorflow as tf

from runrun.common import basics, object_codec
from runrun.common import collectives as _c
from runrun.common.names import op_name
from runrun.common.numpy_tensors import ADAPTER as _NP
from runrun.common.process_sets import global_process_set, process_set_id
from runrun.tensorflow import graph
from runrun.tensorflow.errors import UnsupportedError, tf_errors
from runrun.tensorflow.ops import broadcast
from runrun.tensorflow.tensor_bridge import ADAPTER as _T
from runrun.tensorflow.tensor_bridge import carried, uncarried


def _value_of(variable):
    """The current value of a tf.Variable or a Keras 3 variable (keras.Variable has no
    read_value; both convert to a tensor, as Horovod passes them to broadcast)."""
    return tf.convert_to_tensor(variable)


@tf_errors
def _broadcast_eagerly(variables, root_rank, process_set, name=None):
    handles = [_c.broadcast(_T, carried(_value_of(v)), root_rank,
                            None if name is None else f"{name}.{i}", process_set)
               for i, v in enumerate(variables)]
    for variable, handle in zip(variables, handles):
        variable.assign(uncarried(handle.wait(), variable.dtype))


def broadcast_variables(variables, root_rank, process_set=global_process_set, inplace=False):
    """Assigns root_rank's values to every variable of `variables` (tf.Variables or Keras 3
    variables, e.g. model.variables and optimizer.variables) on every rank of the set.
    Eager: returns None once done. Inside tf.function: returns the group of assign ops.
    `inplace` is accepted for Horovod compatibility (assign is always used)."""
    del inplace
    variables = list(variables)
    if graph.eager():
        _broadcast_eagerly(variables, root_rank, process_set)
        return None
    graph.require_tf2_mode("broadcast_variables")
    return tf.group(*[v.assign(broadcast(_value_of(v), root_rank, process_set=process_set))
                      for v in variables])


def broadcast_global_variables(root_rank):
    """Horovod's TF1 helper (tf.compat.v1.global_variables()): raises, as Horovod's does in
    eager mode, a RuntimeError (UnsupportedError is one) naming broadcast_variables. TF2 code
    keeps no global variable collection (inside a tf.function Horovod's would broadcast an
    empty list), and runrun has no TF1 graph mode."""
    if not graph.eager():
        graph.require_tf2_mode("broadcast_global_variables")
    raise UnsupportedError(
        "broadcast_global_variables() does not support TensorFlow 2 (eager or tf.function: no "
        "global variable collection); use hvd.broadcast_variables(model.variables, "
        f"root_rank={root_rank}) and hvd.broadcast_variables(optimizer.variables, "
        f"root_rank={root_rank}) instead")


def broadcast_(variables, root_rank, name=None, process_set=global_process_set):
    """Horovod's in-place broadcast of variables: assigns root_rank's values to `variables`
    (one op `<name>.<i>` each when named) and returns their new values as tensors. TF has no
    in-place collective on a variable's buffer: this is broadcast_variables' assign."""
    variables = list(variables)
    if graph.eager():
        _broadcast_eagerly(variables, root_rank, process_set, name)
        return [_value_of(v) for v in variables]
    graph.require_tf2_mode("broadcast_")
    assigns = [v.assign(broadcast(_value_of(v), root_rank,
                                  None if name is None else f"{name}.{i}",
                                  process_set=process_set))
               for i, v in enumerate(variables)]
    with tf.control_dependencies(assigns):
        return [tf.identity(_value_of(v)) for v in variables]


def _bytes_of(obj):
    return np.frombuffer(object_codec.dumps(obj), dtype=np.uint8)


@tf_errors
def broadcast_object(obj, root_rank=0, session=None, name=None,
                     process_set=global_process_set):
    """root_rank's `obj` (object_codec: cloudpickle or pickle) on every rank of the set
    (eager only; `session` is ignored). root_rank is a global rank, as in broadcast and in
    Horovod."""
    del session
    name = op_name("broadcast_object", name,
                   0 if name is not None else process_set_id(process_set))
    payload = _bytes_of(obj) if basics.rank() == root_rank else np.zeros(0, np.uint8)
    length = _c.broadcast(_NP, np.array([payload.size], np.int64), root_rank, name + ".len",
                          process_set).wait()
    if payload.size != length[0]:
        payload = np.zeros(int(length[0]), np.uint8)
    payload = _c.broadcast(_NP, payload, root_rank, name + ".data", process_set).wait()
    return object_codec.loads(payload.tobytes())


def broadcast_object_fn(root_rank=0, session=None, name=None, process_set=global_process_set):
    """Horovod's broadcast_object_fn: a function obj -> root_rank's obj, each call a
    broadcast_object named `name` (default 'broadcast_object_fn'). Horovod builds it on TF1
    placeholders and a session; here it runs eagerly and `session` is ignored."""
    del session
    name = name or "broadcast_object_fn"

    def _bcast(obj):
        return broadcast_object(obj, root_rank, name=name, process_set=process_set)
    return _bcast


@tf_errors
def allgather_object(obj, session=None, name=None, process_set=global_process_set):
    """The list of every rank's `obj` (object_codec), in rank order of the set (eager
    only)."""
    del session
    name = op_name("allgather_object", name,
                   0 if name is not None else process_set_id(process_set))
    payload = _bytes_of(obj)
    lengths = _c.allgather(_NP, np.array([payload.size], np.int64), name + ".len",
                           process_set).wait()
    gathered = _c.allgather(_NP, payload, name + ".data", process_set).wait()
    out, offset = [], 0
    for n in lengths.tolist():
        out.append(object_codec.loads(gathered[offset:offset + n].tobytes()))
        offset += n
    return out
