"""The interrupt elastic training raises besides HorovodInternalError (Horovod's names)."""


class HostsUpdatedInterrupt(RuntimeError):
    """The launcher published a new generation (hosts were added or removed): the state is
    consistent on every rank (raised at a commit), so training goes on from it at the new size
    without a rollback. `skip_sync`: the ranks need not broadcast the state again (Horovod's
    attribute; runrun always syncs, since new ranks may have joined)."""

    def __init__(self, skip_sync=False):
        super().__init__("the job's hosts changed: re-initializing in the new generation")
        self.skip_sync = skip_sync
