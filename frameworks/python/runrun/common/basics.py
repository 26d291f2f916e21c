"""Runtime lifetime and queries: init, shutdown, rank/size/..., build queries, timeline.

Why: one process holds one runtime (the C API allows more, for tests); this module owns it so
every adapter (runrun.torch, later keras/jax) shares it. Thread-safety: init/shutdown take a lock;
queries read immutable topology captured at init.
"""

import atexit
import os
import threading

from runrun.common import loader
from runrun.common.exceptions import InvalidArgumentError

_lock = threading.Lock()
_runtime = None
_topology = None
_backend = None
_atexit_registered = False


class NotInitializedError(ValueError, RuntimeError):
    """Raised before init() by queries (rank(), size()...: a ValueError, as Horovod's) and by
    collectives (a RuntimeError, as Horovod's HorovodInternalError then): both classes."""


def init(comm=None, process_sets=None, backend=None):
    """Starts the runtime (idempotent). `process_sets`: ProcessSets to register at once
    (collectively on every rank), or "dynamic" (Horovod's switch for add_process_set and
    remove_process_set after init, which runrun always allows). `comm` is accepted for Horovod
    compatibility: only None or a list of all ranks is supported (another list raises
    InvalidArgumentError). `backend`: "mpi", "gloo" or None (RUNRUN_BACKEND/auto)."""
    global _runtime, _topology, _backend, _atexit_registered
    from runrun.common import process_sets as ps

    if isinstance(process_sets, str):
        if process_sets != "dynamic":
            raise InvalidArgumentError(
                f"init(process_sets={process_sets!r}): pass a list of ProcessSets, or "
                "'dynamic' (as in Horovod)")
        process_sets = None  # runrun's process sets can always be added and removed later
    if comm is not None and not isinstance(comm, (list, tuple)):
        raise InvalidArgumentError("init(comm=<MPI communicator>) is not supported by runrun; "
                            "use init() and process sets (add_process_set) instead")
    with _lock:
        if _runtime is None:
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
            _topology = topology
            _backend = runtime.backend_name()
            _runtime = runtime
            ps.on_init(_topology.size)
            if not _atexit_registered:
                atexit.register(shutdown)
                _atexit_registered = True
    for process_set in process_sets or []:
        ps.add_process_set(process_set)


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
    global _runtime, _topology, _backend
    from runrun.common import process_sets as ps

    if _runtime is not None:
        from runrun.common import profile
        profile.before_shutdown()  # reads the runtime's profile data while it still runs
    with _lock:
        runtime, _runtime = _runtime, None
        _topology = None
        _backend = None
        ps.on_shutdown()
    if runtime is not None:
        runtime.shutdown()
        del runtime


def is_initialized():
    return _runtime is not None


def runtime():
    """The running runrun._core.Runtime; raises NotInitializedError before init()."""
    rt = _runtime
    if rt is None:
        raise NotInitializedError("runrun has not been initialized; call init() first")
    return rt


def _topo():
    runtime()
    return _topology


def size():
    return _topo().size


def rank():
    return _topo().rank


def local_size():
    return _topo().local_size


def local_rank():
    return _topo().local_rank


def cross_size():
    return _topo().cross_size


def cross_rank():
    return _topo().cross_rank


def is_homogeneous():
    """True when every host runs the same number of ranks (as Horovod's is_homogeneous())."""
    return _topo().homogeneous


def backend_name():
    runtime()
    return _backend


def mpi_enabled():
    """True when the running runtime moves data over MPI."""
    return _runtime is not None and _backend == "mpi"


def gloo_enabled():
    return _runtime is not None and _backend == "gloo"


def _built(what):
    """Whether this build can run `what`: a backend that is implemented and compiled in (mpi,
    gloo, nccl), or cuda = collectives on GPU tensors. Not whether CMake found a library.
    The types are Horovod's: bool for every query except nccl_built()."""
    return bool(loader.core().build_info()[what])


def mpi_built():
    return _built("mpi")


def gloo_built():
    return _built("gloo")


def nccl_built():
    """The version code of the NCCL a CUDA tensor would use (an int, e.g. 22304 for 2.23.4, as
    Horovod's NCCL_VERSION_CODE), 0 where none is found or the one found is unusable (older
    than 2.11, an entry point missing). runrun links no NCCL: this asks the library the
    runtime's search opens (RUNRUN_NCCL_LIBRARY, a copy already loaded, the dynamic linker;
    runrun.common.nccl_probe), so it can change once torch has loaded its NCCL."""
    if not _built("nccl"):
        return 0
    from runrun.common import nccl_probe

    return nccl_probe.nccl_version()


def cuda_built():
    return _built("cuda")


def ddl_built():
    return False


def ccl_built():
    return False


def rocm_built():
    return False


def mpi_threads_supported():
    return bool(loader.core().mpi_threads_supported())


def start_timeline(file_path, mark_cycles=False):
    """Writes a Chrome-trace JSON of every op to `file_path` until stop_timeline(), in Horovod's
    layout; `mark_cycles` adds a global CYCLE_START mark per negotiation round, as Horovod's."""
    runtime().start_timeline(str(file_path), bool(mark_cycles))


def stop_timeline():
    runtime().stop_timeline()
