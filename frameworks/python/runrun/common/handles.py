"""Handles of asynchronous ops: poll() and synchronize() with Horovod's semantics, for every
adapter.

Why: Horovod returns opaque handles from *_async ops; synchronize(handle) waits and returns the
op's output (raising HorovodInternalError on failure). A handle here is the extension's own
object (runrun._core.Handle: one object per op, no Python wrapper on the hot path); it carries
the op's result, or how to build it once the op completed. CombinedHandle joins several ops
into one result (sparse allreduce). Thread-safety: a handle is used by one thread at a time;
waiting releases the GIL.
"""

from runrun.common import bound_calls, loader
from runrun.common.exceptions import InvalidArgumentError

_handle_type = None


def __getattr__(attribute):
    # `Handle` is runrun._core.Handle: poll() -> bool, wait() -> result (raises the op's error
    # once), .op and .name, take_output(i), received_splits(), join_result(). Looked up lazily:
    # without a built extension, importing an adapter still works (init() then says how to
    # build it; common/bound_calls.py keeps the Python functions).
    if attribute == "Handle":
        return _core_handle_type()
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")


def _core_handle_type():
    global _handle_type
    if _handle_type is None:
        _handle_type = loader.core().Handle
    return _handle_type


def new_handle(core_handle, result=None, finish=None):
    """Gives `core_handle` (from a runrun._core.Runtime collective) what wait() returns:
    `result`, or finish(core_handle) once the op succeeded. Returns it."""
    core_handle.set_result(result, finish)
    return core_handle


class CombinedHandle:
    """Several pending ops whose outputs combine into one result (sparse_allreduce_async).
    Calling it waits and returns the result too, as Horovod's sparse handles (callables) do."""

    __slots__ = ("_parts", "_finish", "_result", "_done", "__weakref__")

    def __init__(self, parts, combine):
        self._parts = list(parts)
        self._finish = combine
        self._result = None
        self._done = False

    def poll(self):
        return self._done or all(part.poll() for part in self._parts)

    def wait(self):
        if not self._done:
            try:
                self._result = self._finish([part.wait() for part in self._parts])
            finally:
                self._done = True
                self._parts = []
                self._finish = None
        return self._result

    def __call__(self):
        return self.wait()

    def __repr__(self):
        return f"<runrun combined handle of {len(self._parts)} ops>"


def poll(handle):
    """True when the op of `handle` finished; synchronize() then returns without blocking."""
    _check(handle)
    return handle.poll()


def synchronize(handle):
    """Waits for `handle`'s op and returns its output (tensor, or (tensor, splits) for
    alltoall); raises a HorovodInternalError subclass with the runtime's message on failure."""
    _check(handle)
    return handle.wait()


synchronize = bound_calls.wait(synchronize)  # the extension's Handle waited on in C


def _check(handle):
    core_type = _handle_type or _core_handle_type()
    if type(handle) is not core_type and not isinstance(handle, (core_type, CombinedHandle)):
        raise InvalidArgumentError(
            f"expected a handle returned by an *_async op, got {type(handle).__name__}")
