"""The exceptions runrun raises, classified as Horovod's are, so scripts written for Horovod
catch the same things: a failure of a collective or of the runtime is a HorovodInternalError
(a RuntimeError; what elastic training recovers from), with subclasses saying which kind of
failure it was; an argument rejected at call time (a dtype, a layout, an unknown process set, a
name already in flight...) is an InvalidArgumentError, a ValueError as in Horovod and not a
HorovodInternalError, or an InvalidArgumentRuntimeError (also a RuntimeError) where Horovod
raises a RuntimeError for it; an op or option this build lacks is an UnsupportedError, a
NotImplementedError (itself a RuntimeError, as Horovod's). The message is the core's, naming
rank, op, tensor and what to do.

The extension (runrun._core) maps C API status codes to these classes through
exception_for_status; the codes match runrun_status in core/include/runrun/c_api.h.
"""


class HorovodInternalError(RuntimeError):
    """A collective or the runtime failed (Horovod's name, kept for drop-in compatibility)."""


RunrunError = HorovodInternalError


class InvalidArgumentError(ValueError):
    """An argument was rejected (dtype, device, layout, shape, unknown set, a name already in
    flight...): a bug in the calling code, so not a HorovodInternalError."""


class InvalidArgumentRuntimeError(InvalidArgumentError, RuntimeError):
    """An argument refused at call time that Horovod refuses with a RuntimeError (its core
    refuses it once enqueued, a HorovodInternalError in horovod.torch): reducescatter with an
    op other than Average or Sum, an allgather or reducescatter of a 0-d tensor, a sparse
    allreduce of a dense tensor. Both classes, as numpy's AxisError is both a ValueError and an
    IndexError: a script written for Horovod catches RuntimeError, one written for runrun
    ValueError / InvalidArgumentError. Not a HorovodInternalError: elastic training does not
    retry a call that can only fail again."""


class MismatchError(HorovodInternalError):
    """Ranks submitted the same op name with different shapes, dtypes, ops or roots."""


class PeerFailureError(HorovodInternalError):
    """A peer process died or its transport failed; the job cannot continue."""


class CollectiveTimeoutError(HorovodInternalError):
    """An op did not complete within the configured bound (a stalled or hung peer)."""


class ShutDownError(HorovodInternalError):
    """The runtime was shut down (or never started) while the op was pending."""


class UnsupportedError(NotImplementedError):
    """The op or option is not available in this build or backend (not a failure of the
    runtime, so not a HorovodInternalError)."""


class InternalError(HorovodInternalError):
    """A bug in runrun: please report it with the message."""


class HostsUpdatedInterrupt(RuntimeError):
    """The launcher published a new generation (hosts were added or removed): the state is
    consistent on every rank (raised at a commit), so training goes on from it at the new size
    without a rollback. `skip_sync`: the ranks need not broadcast the state again (Horovod's
    attribute; runrun always syncs, since new ranks may have joined). Here, as in Horovod's
    horovod.common.exceptions; runrun.elastic exports it too."""

    def __init__(self, skip_sync=False):
        super().__init__("the job's hosts changed: re-initializing in the new generation")
        self.skip_sync = skip_sync


_BY_STATUS = {
    1: InvalidArgumentError,
    2: MismatchError,
    3: PeerFailureError,
    4: CollectiveTimeoutError,
    5: ShutDownError,
    6: InternalError,
    7: UnsupportedError,
}


def exception_for_status(status):
    """The exception class for a runrun_status code (HorovodInternalError for unknown ones)."""
    return _BY_STATUS.get(int(status), HorovodInternalError)
