"""A lost peer seen through a compiled step: the framework's own error turned back into the
HorovodInternalError the elastic loop catches.

Why: inside tf.function (runrun.tensorflow runs its ops as tf.py_function nodes) and inside
jax.jit (runrun's XLA FFI handler, or ordered io_callbacks) an exception raised by runrun
reaches the script as the framework's error (tf.errors.OpError, jax.errors.JaxRuntimeError)
carrying runrun's message;
Horovod's TensorFlow `run` recognises its ops' failures the same way, by their message.
Thread-safety: stateless.
"""

import functools

from runrun.common.exceptions import HorovodInternalError

# The runtime failures (HorovodInternalError and its subclasses) by class name, and the openings
# of the core's failure messages (core/health/peer_health.cc, process_set_worker.cc, controller.cc).
_MARKERS = ("HorovodInternalError", "PeerFailureError", "CollectiveTimeoutError",
            "ShutDownError", "runrun on rank ", "runrun is shut down", "runrun was shut down",
            "runrun shut down")


def is_runrun_failure(error):
    """True when `error`, or an exception it was raised from, is a runtime failure of runrun."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, HorovodInternalError):
            return True
        if any(marker in str(error) for marker in _MARKERS):
            return True
        error = error.__cause__ or error.__context__
    return False


def translating(func, error_types):
    """Wraps `func` so that an error of `error_types()` (a tuple, looked up at the call) that
    is a runrun failure leaves it as HorovodInternalError (the original as its cause)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        types = error_types()
        try:
            return func(*args, **kwargs)
        except types as error:
            if isinstance(error, HorovodInternalError) or not is_runrun_failure(error):
                raise
            raise HorovodInternalError(str(error)) from error

    return wrapper
