"""Process sets: collectives over a subset of ranks, with Horovod's API.

A ProcessSet is a list of ranks plus the id the runtime gave it when it was registered
(collectively, on every rank) by init(process_sets=...) or add_process_set(). The global set
(id 0, every rank) always exists. The ids are the runtime's: they are given at every init()
and forgotten at shutdown (hooks, runrun.common.lifecycle). Thread-safety: registration is
collective and should happen from one thread per process, as in Horovod.
"""

from runrun.common import lifecycle, names, state
from runrun.common.exceptions import InvalidArgumentError


class ProcessSet:
    """A subset of ranks. `process_set_id` is None until registered."""

    def __init__(self, ranks):
        if hasattr(ranks, "Get_group"):
            raise InvalidArgumentError(
                "ProcessSet(<MPI communicator>) is not supported by runrun; pass a list of ranks")
        self.ranks = sorted(int(r) for r in ranks)
        if len(set(self.ranks)) != len(self.ranks):
            raise InvalidArgumentError(f"ProcessSet ranks contain duplicates: {self.ranks}")
        self.process_set_id = None

    def _require_id(self):
        if self.process_set_id is None:
            if not state.is_initialized():  # an op before init(): say that, not the set
                state.runtime()  # raises NotInitializedError with what to do
            raise InvalidArgumentError(
                f"ProcessSet{self.ranks} is not registered; pass it to init(process_sets=...) "
                "or add_process_set() on every rank first")
        return self.process_set_id

    def size(self):
        self._require_id()
        return len(self.ranks)

    def rank(self):
        """This process's rank within the set, or -1 when it is not a member."""
        return state.runtime().process_set_rank(self._require_id())

    def included(self):
        return state.rank() in self.ranks

    def __repr__(self):
        return f"ProcessSet(process_set_id={self.process_set_id}, ranks={self.ranks})"


global_process_set = ProcessSet([])
_registered = {}


def _on_init():
    """At every init(): the global set is every rank, and no other set is registered."""
    global_process_set.ranks = list(range(state.size()))
    global_process_set.process_set_id = 0
    _registered.clear()
    _registered[0] = global_process_set


def _on_shutdown():
    """At shutdown: every set is unregistered (their ids were the runtime's)."""
    for process_set in _registered.values():
        if process_set is not global_process_set:
            process_set.process_set_id = None
    _registered.clear()
    global_process_set.process_set_id = None


def process_set_id(process_set):
    """The id to pass to the runtime for `process_set` (a ProcessSet or None for global)."""
    if process_set is None:
        return 0
    if not isinstance(process_set, ProcessSet):
        raise InvalidArgumentError(
            f"process_set must be a ProcessSet, got {type(process_set).__name__}")
    return process_set._require_id()


def registered(process_set_id):
    """The registered ProcessSet with this id (0: the global set), or None."""
    return _registered.get(int(process_set_id))


def add_process_set(process_set):
    """Registers a set on every rank (collective: all ranks call it with the same ranks).
    Accepts a ProcessSet or a list of ranks; returns the registered ProcessSet."""
    if not isinstance(process_set, ProcessSet):
        process_set = ProcessSet(process_set)
    if process_set.process_set_id is not None:
        raise InvalidArgumentError(f"{process_set} is already registered")
    world = state.size()
    bad = [r for r in process_set.ranks if r < 0 or r >= world]
    if bad or not process_set.ranks:
        raise InvalidArgumentError(
            f"ProcessSet ranks {process_set.ranks} must be a non-empty list of ranks in "
            f"[0, {world})")
    process_set.process_set_id = state.runtime().add_process_set(process_set.ranks)
    _registered[process_set.process_set_id] = process_set
    names.forget(process_set.process_set_id)
    return process_set


def remove_process_set(process_set):
    """Unregisters a set on every rank (collective). Returns False for the global set or an
    unregistered one, as Horovod does."""
    if process_set is global_process_set or process_set.process_set_id in (None, 0):
        return False
    state.runtime().remove_process_set(process_set.process_set_id)
    _registered.pop(process_set.process_set_id, None)
    names.forget(process_set.process_set_id)
    process_set.process_set_id = None
    return True


lifecycle.add_hooks(on_init=_on_init, on_shutdown=_on_shutdown)
