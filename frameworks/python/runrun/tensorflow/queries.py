"""horovod.tensorflow's *_op queries: the runtime's rank and sizes as int32 scalar tensors
(read when the op runs, also inside tf.function), with Horovod's arguments: size_op and
process_set_included_op take a process set id first (`process_set_id=0, name=None`), as
Horovod's; runrun's `process_set=` keyword (a ProcessSet) is kept.
Thread-safety: any thread.
"""

import tensorflow as tf

from runrun.common import basics
from runrun.common import process_sets as _sets
from runrun.common.process_sets import ProcessSet, global_process_set
from runrun.tensorflow.errors import InvalidArgumentError
from runrun.tensorflow.graph import refuse_xla

# Horovod's process_set_included_op codes (horovod/common/basics.py).
_ERROR_INIT = -1
_ERROR_UNKNOWN_SET = -3


def _query(function, name, op):
    """function() as an int32 scalar: now in eager mode, a py_function node in a graph (one
    that XLA must compile is refused, naming `op`: graph.refuse_xla)."""
    if tf.executing_eagerly():
        return tf.constant(function(), tf.int32)
    refuse_xla(op)
    return tf.py_function(lambda: tf.constant(function(), tf.int32), [], tf.int32, name=name)


def _in_set(process_set, what):
    if process_set is global_process_set:
        return getattr(basics, what)
    return getattr(process_set, what)


def _chosen_set(process_set_id, process_set):
    """The ProcessSet the caller means, or the registered id to look up when the op runs:
    Horovod's process_set_id (an int) or runrun's process_set (a ProcessSet, also accepted
    in process_set_id's place)."""
    if isinstance(process_set_id, ProcessSet):
        process_set_id, process_set = None, process_set_id
    if process_set is None or process_set is global_process_set:
        return process_set_id or 0
    if process_set_id not in (None, 0, process_set.process_set_id):
        raise InvalidArgumentError(
            f"process_set_id={process_set_id} and process_set={process_set} name different "
            "sets; pass one of them")
    return process_set


def _registered(chosen):
    """The ProcessSet of `chosen` (a ProcessSet or an id), None for an unknown id."""
    if isinstance(chosen, ProcessSet):
        return chosen
    if chosen == 0:
        return global_process_set
    return _sets.registered(chosen)


def rank_op(name=None, process_set=global_process_set):
    """This process's rank (in `process_set`, runrun's keyword: -1 outside it)."""
    return _query(_in_set(process_set, "rank"), name, "rank_op")


def size_op(process_set_id=0, name=None, process_set=None):
    """The number of processes of the set (`process_set_id`, or runrun's `process_set=`)."""
    chosen = _chosen_set(process_set_id, process_set)

    def size():
        found = _registered(chosen)
        if found is None:
            raise InvalidArgumentError(
                f"size_op: no process set with id {chosen} is registered; pass the "
                "process_set_id of a set from add_process_set() or init(process_sets=...)")
        return basics.size() if found is global_process_set else found.size()
    return _query(size, name, "size_op")


def local_rank_op(name=None):
    return _query(basics.local_rank, name, "local_rank_op")


def local_size_op(name=None):
    return _query(basics.local_size, name, "local_size_op")


def process_set_included_op(process_set_id=0, name=None, process_set=None):
    """1 when this process belongs to the set, 0 when not; as Horovod, -1 before init() and
    -3 for an unknown process set id."""
    chosen = _chosen_set(process_set_id, process_set)

    def included():
        if not basics.is_initialized():
            return _ERROR_INIT
        found = _registered(chosen)
        if found is None or found.process_set_id is None:
            return _ERROR_UNKNOWN_SET
        return int(found.included())
    return _query(included, name, "process_set_included_op")
