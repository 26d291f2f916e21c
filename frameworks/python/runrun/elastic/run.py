"""The loop around an elastic training function (Horovod's `hvd.elastic.run`).

    @hvd.elastic.run
    def train(state): ...
    train(state)

runs `train(state)` after `state.sync()`. When a collective fails (HorovodInternalError: a peer
died or stalled) the state rolls back to its last commit; when the hosts changed
(HostsUpdatedInterrupt, raised at a commit) it keeps the committed state. Either way runrun is
shut down and initialized again, which joins the launcher's next generation (new rank and size),
the state is synced from the new rank 0 and the reset callbacks run; then `train` is called
again. The launcher bounds the number of resets (--reset-limit) and the wait for a generation
(--elastic-timeout); a rank that is not part of the next generation gets an error from init.
"""

import functools

from runrun.common import basics
from runrun.common.exceptions import HorovodInternalError
from runrun.elastic import generations
from runrun.elastic.exceptions import HostsUpdatedInterrupt


def _reset():
    basics.shutdown()
    basics.init()


def _reset_into_next_generation(reset):
    """Re-initializes until this rank is part of a working generation. Connecting the new
    generation may fail too (a member that never came: the launcher stops it after
    --elastic-timeout and publishes another generation): then try the next one. When the
    join itself fails (no newer generation within --elastic-timeout, or none for this worker),
    the error goes to the script."""
    while True:
        before = generations.generation()
        try:
            reset()
            return
        except HorovodInternalError:
            if generations.generation() == before:
                raise
            generations.report_failure()


def run_fn(func, reset=_reset):
    """Wraps `func(state, *args, **kwargs)` in the elastic loop; `reset` re-initializes the
    framework's runtime (runrun's shutdown + init by default)."""

    @functools.wraps(func)
    def wrapper(state, *args, **kwargs):
        skip_sync = False
        while True:
            try:
                if not skip_sync:
                    state.sync()
                return func(state, *args, **kwargs)
            except HorovodInternalError:
                generations.report_failure()
                state.restore()
                skip_sync = False
            except HostsUpdatedInterrupt as interrupt:
                skip_sync = interrupt.skip_sync
            _reset_into_next_generation(reset)
            state.on_reset()

    return wrapper
