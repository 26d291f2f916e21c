"""Handles of asynchronous ops: poll() and synchronize() with Horovod's semantics.

Why: Horovod returns opaque handles from *_async ops; synchronize(handle) waits and returns the
op's output (raising HorovodInternalError on failure). Here a handle wraps the extension's
handle plus how to build the output once it completed. Thread-safety: a handle is used by one
thread at a time; waiting releases the GIL.
"""

from runrun.common.exceptions import InvalidArgumentError


class Handle:
    """One pending op. `finish(core_handle)` builds the result after a successful wait."""

    __slots__ = ("_core", "_finish", "_result", "_done", "__weakref__")

    def __init__(self, core_handle, finish):
        self._core = core_handle
        self._finish = finish
        self._result = None
        self._done = False

    def poll(self):
        """True once the op finished (successfully or not); never blocks."""
        return self._done or self._core.poll()

    def wait(self):
        """Waits, then returns the op's result; raises the op's error (once per failure)."""
        if not self._done:
            core_handle = self._core
            try:
                core_handle.wait(-1.0)
                self._result = self._finish(core_handle)
            finally:
                # Drops the borrowed tensors and the C handle as soon as the op is over.
                self._done = True
                self._core = None
                self._finish = None
        return self._result

    def __repr__(self):
        state = "done" if self._done else "pending"
        name = "" if self._core is None else f" {self._core.op} '{self._core.name}'"
        return f"<runrun handle{name} {state}>"


class CombinedHandle(Handle):
    """Several pending ops whose outputs combine into one result (sparse_allreduce_async).
    Calling it waits and returns the result too, as Horovod's sparse handles (callables) do."""

    __slots__ = ("_parts",)

    def __init__(self, parts, combine):
        super().__init__(None, None)
        self._parts = list(parts)
        self._finish = combine

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


def _check(handle):
    if not isinstance(handle, Handle):
        raise InvalidArgumentError(
            f"expected a handle returned by an *_async op, got {type(handle).__name__}")
