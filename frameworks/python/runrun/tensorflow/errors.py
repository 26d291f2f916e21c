"""runrun's exceptions as TensorFlow's usual ones, for runrun.tensorflow's eager ops.

Why: a TF user catches tf.errors.OpError subclasses; a Horovod user catches
HorovodInternalError / ValueError. Each class here derives from both (e.g. a shape mismatch is
a tf.errors.FailedPreconditionError, as in Horovod's TF ops, and a runrun MismatchError), and
carries runrun's message (rank, op, tensor, what to do) unchanged.
Inside tf.function the ops run in tf.py_function, which turns a Python exception into
tf.errors.InvalidArgumentError (ValueError, TypeError), UnimplementedError
(NotImplementedError) or UnknownError (anything else), keeping the message: docs/tensorflow.md.
One raised while a tf.function is traced keeps its class (autograph rebuilds it).
Thread-safety: stateless.
"""

import functools

import tensorflow as tf

from runrun.common import exceptions as rx


def _combined(tf_class, runrun_class):
    class Combined(tf_class, runrun_class):
        # runrun raises Combined(message); autograph re-raises an OpError raised while a
        # tf.function is traced as type(e)(node_def, op, message, payloads) when __init__ takes
        # exactly those arguments (else it becomes a StagingError, no longer caught as this).
        def __init__(self, node_def, op=None, message=None, *args):
            if op is None and message is None:
                node_def, message = None, node_def
            tf_class.__init__(self, node_def, op, message, *args)

        def __str__(self):
            return self.message

    Combined.__name__ = Combined.__qualname__ = runrun_class.__name__
    Combined.__module__ = __name__
    return Combined


InvalidArgumentError = _combined(tf.errors.InvalidArgumentError, rx.InvalidArgumentError)
MismatchError = _combined(tf.errors.FailedPreconditionError, rx.MismatchError)
PeerFailureError = _combined(tf.errors.AbortedError, rx.PeerFailureError)
CollectiveTimeoutError = _combined(tf.errors.DeadlineExceededError, rx.CollectiveTimeoutError)
ShutDownError = _combined(tf.errors.AbortedError, rx.ShutDownError)
UnsupportedError = _combined(tf.errors.UnimplementedError, rx.UnsupportedError)
InternalError = _combined(tf.errors.InternalError, rx.InternalError)
HorovodInternalError = _combined(tf.errors.UnknownError, rx.HorovodInternalError)

# Most specific first: the subclasses of HorovodInternalError before it.
_MAPPING = (
    (rx.InvalidArgumentError, InvalidArgumentError),
    (rx.MismatchError, MismatchError),
    (rx.PeerFailureError, PeerFailureError),
    (rx.CollectiveTimeoutError, CollectiveTimeoutError),
    (rx.ShutDownError, ShutDownError),
    (rx.UnsupportedError, UnsupportedError),
    (rx.InternalError, InternalError),
    (rx.HorovodInternalError, HorovodInternalError),
)


def as_tf_error(error):
    """The TF-flavoured class of runrun error `error` (an instance), or None."""
    if isinstance(error, tf.errors.OpError):
        return None
    for runrun_class, tf_class in _MAPPING:
        if isinstance(error, runrun_class):
            return tf_class(str(error))
    return None


def tf_errors(function):
    """Decorates an eager op: runrun's exceptions leave it as their TF-flavoured classes."""
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except (rx.HorovodInternalError, rx.InvalidArgumentError, rx.UnsupportedError) as e:
            mapped = as_tf_error(e)
            if mapped is None:
                raise
            raise mapped from e
    return wrapper
