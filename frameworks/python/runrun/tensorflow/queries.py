"""horovod.tensorflow's *_op queries: the runtime's rank and sizes as int32 scalar tensors
(read when the op runs, also inside tf.function). Thread-safety: any thread."""

import tensorflow as tf

from runrun.common import basics
from runrun.common.process_sets import global_process_set


def _query(function, name):
    return tf.py_function(lambda: tf.constant(function(), tf.int32), [], tf.int32, name=name) \
        if not tf.executing_eagerly() else tf.constant(function(), tf.int32)


def _in_set(process_set, what):
    if process_set is global_process_set:
        return getattr(basics, what)
    return getattr(process_set, what)


def rank_op(name=None, process_set=global_process_set):
    return _query(_in_set(process_set, "rank"), name)


def size_op(name=None, process_set=global_process_set):
    return _query(_in_set(process_set, "size"), name)


def local_rank_op(name=None):
    return _query(basics.local_rank, name)


def local_size_op(name=None):
    return _query(basics.local_size, name)


def process_set_included_op(process_set=global_process_set, name=None):
    return _query(lambda: int(process_set.included()), name)
