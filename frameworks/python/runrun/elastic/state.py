"""What elastic training commits, rolls back to and re-broadcasts (Horovod's State API).

A State holds the training state a script cannot afford to lose. `commit()` saves a copy (in
memory, on every rank) and checks whether the hosts changed; after a failed collective the `run`
decorator calls `restore()` (back to the last commit), re-initializes runrun in the next
generation and calls `sync()` (rank 0's state to every rank, new ranks included), then the reset
callbacks (for the learning rate that depends on the size, say).
"""

import copy

from runrun.elastic import generations
from runrun.elastic.exceptions import HostsUpdatedInterrupt


class State:
    """Base of the state classes: commit / restore / sync / check_host_updates and the reset
    callbacks. Subclasses implement save, restore and sync."""

    def __init__(self):
        self._reset_callbacks = []

    def register_reset_callbacks(self, callbacks):
        """Functions called (without arguments) after every reset, once the new generation is
        initialized and the state synced: hvd.size() is the new size there."""
        self._reset_callbacks.extend(callbacks)

    def on_reset(self):
        for callback in self._reset_callbacks:
            callback()

    def commit(self):
        """Saves the state (the point a failure rolls back to), then raises
        HostsUpdatedInterrupt when the launcher published a new generation."""
        self.save()
        self.check_host_updates()

    def check_host_updates(self):
        """Raises HostsUpdatedInterrupt when the hosts changed since this rank's generation
        started. Collective over nothing: every rank sees the same published generation only
        eventually, so call it where every rank calls it (commit does)."""
        if generations.hosts_updated():
            raise HostsUpdatedInterrupt(skip_sync=False)

    def save(self):
        raise NotImplementedError

    def restore(self):
        raise NotImplementedError

    def sync(self):
        raise NotImplementedError


class ObjectState(State):
    """A state of plain Python attributes (`ObjectState(bcast_object, get_rank, epoch=0)`):
    kept as attributes, deep-copied at save, broadcast from rank 0 by `bcast_object` at sync."""

    def __init__(self, bcast_object, get_rank, **kwargs):
        super().__init__()
        self._bcast_object = bcast_object
        self._rank = get_rank
        self._saved_state = kwargs
        self._set_attrs()

    def _set_attrs(self):
        for attr, value in self._saved_state.items():
            setattr(self, attr, copy.deepcopy(value))

    def save(self):
        self._saved_state = {attr: copy.deepcopy(getattr(self, attr))
                             for attr in self._saved_state}

    def restore(self):
        self._set_attrs()

    def sync(self):
        if self._saved_state:
            self._saved_state = self._bcast_object(self._saved_state)
            self._set_attrs()
