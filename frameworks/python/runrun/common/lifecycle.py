"""Starting and stopping the process's runtime, and the hooks other modules run then.

Why: modules that keep state per runtime (runrun.common.names' counters, process_sets' ids,
profile's last read of the runtime) register hooks here when they are imported, instead of this
module importing them: it sits just above runrun.common.state (the runtime and its queries), so
that those modules can import both and the package's imports have no cycle
(tests/python/test_import_graph.py). runrun.common.basics adds init()'s process sets on top.
Order:
- start(): the runtime is created and installed in runrun.common.state; then the init hooks
  run, in registration order (a module registers when it is imported, so after the modules it
  imports: names' hook before process_sets').
- shutdown(): while the runtime still runs, the before-shutdown hooks (in reverse registration
  order: they may read it); then the runtime is uninstalled and the shutdown hooks run (in
  reverse registration order); then the runtime shuts down (pending ops fail with
  ShutDownError).
A module that registers while the runtime runs has its init hook run at once, so that it starts
from the state a module imported before init() has.
Thread-safety: start(), shutdown() (but its before-shutdown hooks) and add_hooks() run under
one lock, the init and shutdown hooks too (one at a time; a hook may register others).
"""

import atexit
import os
import threading

from runrun.common import loader, state
from runrun.common.exceptions import InvalidArgumentError

_lock = threading.RLock()
_init_hooks = []
_before_shutdown_hooks = []
_shutdown_hooks = []
_atexit_registered = False


def add_hooks(on_init=None, before_shutdown=None, on_shutdown=None):
    """Registers a module's hooks (functions without arguments): on_init after every start of
    the runtime (at once when it runs now), before_shutdown while it still runs at shutdown,
    on_shutdown once it is uninstalled."""
    with _lock:
        if on_init is not None:
            _init_hooks.append(on_init)
            if state.is_initialized():
                on_init()
        if before_shutdown is not None:
            _before_shutdown_hooks.append(before_shutdown)
        if on_shutdown is not None:
            _shutdown_hooks.append(on_shutdown)


def start(comm=None, backend=None):
    """Starts the runtime (idempotent) and runs the init hooks. `comm` is accepted for Horovod
    compatibility: only None or a list of all ranks is supported (another list raises
    InvalidArgumentError). `backend`: "mpi", "gloo" or None (RUNRUN_BACKEND/auto)."""
    global _atexit_registered
    if comm is not None and not isinstance(comm, (list, tuple)):
        raise InvalidArgumentError("init(comm=<MPI communicator>) is not supported by runrun; "
                                   "use init() and process sets (add_process_set) instead")
    with _lock:
        if state.is_initialized():
            return
        try:
            runtime = loader.core().Runtime(backend)
        finally:
            # The core read the launcher's rendezvous secret and removed it from the C
            # environment; Python's copy goes too, so that subprocesses never inherit it.
            os.environ.pop("RUNRUN_RENDEZVOUS_SECRET", None)
        topology = runtime.topology()
        if comm and not _is_every_rank(comm, topology.size):
            runtime.shutdown()  # every rank passes the same list: all refuse alike
            raise InvalidArgumentError(_comm_refusal(list(comm), topology.size))
        state.install(runtime, topology)
        for hook in list(_init_hooks):
            hook()
        if not _atexit_registered:
            atexit.register(shutdown)
            _atexit_registered = True


def _is_every_rank(comm, size):
    """Whether the list `comm` names every rank 0..size-1 (Horovod's [] means all too)."""
    try:
        return sorted(comm) == list(range(size))
    except TypeError:  # not all integers
        return False


def _comm_refusal(comm, size):
    """Why init(comm=<list>) refuses a list that is not every rank, and what to do instead."""
    message = (f"init(comm={comm!r}): runrun's world is every launched rank, so a list must "
               f"name all {size} ranks (0..{size - 1}); start only the ranks you need (-np)")
    if all(isinstance(r, int) and 0 <= r < size for r in comm):
        message += (", or keep them all and use a process set: "
                    f"init(process_sets=[ProcessSet({comm!r})])")
    return message


def shutdown():
    """Stops the runtime; pending ops fail with ShutDownError. Safe to call more than once."""
    if state.is_initialized():
        for hook in reversed(_before_shutdown_hooks):
            hook()
    with _lock:
        runtime = state.uninstall()
        for hook in reversed(_shutdown_hooks):
            hook()
    if runtime is not None:
        runtime.shutdown()
        del runtime
