"""The process's runtime and every query that reads it: rank(), size(), ..., the backend, the
build queries, the timeline. A leaf of the package (it imports only the loader, and
nccl_probe when asked): any module may read the runtime here without importing what starts it.

Why: one process holds one runtime (the C API allows more, for tests), shared by every adapter.
Starting and stopping it, and what other modules do then, is runrun.common.lifecycle's (the
only caller of install() and uninstall()); the public names, with init()'s process sets, are
runrun.common.basics'. Thread-safety: install()/uninstall() run under lifecycle's lock; queries
read the topology captured at init without a lock.
"""

import functools

from runrun.common import loader

# The running runrun._core.Runtime, None when not initialized. The extension's bound calls
# (frameworks/csrc/bound_call.cc) read it from this module's dict under this name, once per
# call: keep the name. Python reads it through current() or runtime().
_runtime = None
_topology = None
_backend = None


class NotInitializedError(ValueError, RuntimeError):
    """Raised before init() by queries (rank(), size()...: a ValueError, as Horovod's) and by
    collectives (a RuntimeError, as Horovod's HorovodInternalError then): both classes."""


# current() -> the running Runtime or None, without raising: for the paths that fall back when
# there is none (the ops' fast paths). A C callable (a dict lookup), so that it adds no Python
# call to the per-op path (test_common_numpy counts them).
current = functools.partial(globals().get, "_runtime")


def install(runtime, topology):
    """lifecycle.start(): `runtime` (just started; `topology` its topology()) becomes the
    process's runtime, set last, so that a reader that sees it sees the topology too."""
    global _runtime, _topology, _backend
    _topology = topology
    _backend = runtime.backend_name()
    _runtime = runtime


def uninstall():
    """lifecycle.shutdown(): forgets the runtime (queries raise NotInitializedError from now
    on) and returns it, for the caller to shut down (None when there was none)."""
    global _runtime, _topology, _backend
    runtime, _runtime = _runtime, None
    _topology = None
    _backend = None
    return runtime


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
    from runrun.common import nccl_probe  # ctypes work, only when asked

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
