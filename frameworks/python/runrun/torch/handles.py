"""Handles of runrun.torch's asynchronous ops: the framework-neutral ones of
runrun.common.handles (poll, synchronize, CombinedHandle; Handle = runrun._core.Handle),
re-exported here."""

from runrun.common import handles as _handles
from runrun.common.handles import CombinedHandle, poll, synchronize  # noqa: F401


def __getattr__(attribute):
    return getattr(_handles, attribute)
