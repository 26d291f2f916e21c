"""The version of the NCCL that runrun's runtime would use for CUDA tensors (hvd.nccl_built()).

Why: Horovod's nccl_built() returns the NCCL version it was compiled against (an int, 0 when
none) and scripts compare it (`if hvd.nccl_built() and hvd.nccl_built() < 2700:`). runrun links
no NCCL: the runtime opens one at run time (ops/nccl/nccl_library.cc, docs/gpu.md), so the
answer is the version of the library that search finds, asked with ncclGetVersion, or 0 where
it finds none or one the runtime would refuse (older than 2.11 or lacking an entry point), i.e.
where a CUDA tensor would not go over NCCL. The search is the runtime's, in its order:
RUNRUN_NCCL_LIBRARY when set (and nowhere else), a libnccl.so* already loaded into this process
(torch's nvidia-nccl wheel, once torch is imported), then the dynamic linker by soname.
Keep the order, the minimum version and the entry points in step with
ops/cuda/library_search.cc and ops/nccl/nccl_library.cc.
Thread-safety: stateless; dlopen is thread-safe.
"""

import ctypes
import os

ENV_VAR = "RUNRUN_NCCL_LIBRARY"
LOADED_PREFIX = "libnccl.so"
SONAMES = ("libnccl.so.2", "libnccl.so")
# NCCL 2.11.0 as ncclGetVersion encodes it (10000 * major + 100 * minor + patch).
MINIMUM_VERSION = 21100
# Every entry point the runtime resolves; a library lacking one is refused.
ENTRY_POINTS = (
    "ncclGetVersion", "ncclGetErrorString", "ncclGetUniqueId", "ncclCommInitRank",
    "ncclCommDestroy", "ncclCommAbort", "ncclCommGetAsyncError", "ncclAllReduce",
    "ncclBroadcast", "ncclAllGather", "ncclReduce", "ncclReduceScatter", "ncclSend",
    "ncclRecv", "ncclGroupStart", "ncclGroupEnd", "ncclRedOpCreatePreMulSum",
    "ncclRedOpDestroy",
)


def loaded_libraries(prefix=LOADED_PREFIX):
    """Paths of the shared objects mapped into this process whose file name starts with
    `prefix` (from /proc/self/maps; none where that file does not exist)."""
    found = []
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                fields = line.split(None, 5)
                if len(fields) < 6:
                    continue
                path = fields[5].strip()
                if os.path.basename(path).startswith(prefix) and path not in found:
                    found.append(path)
    except OSError:
        pass
    return found


def _open(path, no_load=False):
    mode = os.RTLD_NOW | os.RTLD_LOCAL | (os.RTLD_NOLOAD if no_load else 0)
    try:
        return ctypes.CDLL(path, mode=mode)
    except OSError:
        return None


def find_library(environ=None):
    """The ctypes handle of the NCCL the runtime's search would open, or None."""
    environ = os.environ if environ is None else environ
    explicit = environ.get(ENV_VAR)
    if explicit:
        return _open(explicit)  # an explicit choice that fails is not a fallback
    for path in loaded_libraries():
        library = _open(path, no_load=True)
        if library is not None:
            return library
    for soname in SONAMES:
        library = _open(soname)
        if library is not None:
            return library
    return None


def usable_version(library):
    """ncclGetVersion of `library` when the runtime would use it, else 0."""
    if library is None:
        return 0
    if any(not hasattr(library, name) for name in ENTRY_POINTS):
        return 0
    get_version = library.ncclGetVersion
    get_version.argtypes = [ctypes.POINTER(ctypes.c_int)]
    get_version.restype = ctypes.c_int
    version = ctypes.c_int(0)
    if get_version(ctypes.byref(version)) != 0:  # ncclSuccess
        return 0
    return version.value if version.value >= MINIMUM_VERSION else 0


def nccl_version(environ=None):
    """The version code of the NCCL a CUDA tensor would use in this process, 0 if none."""
    return int(usable_version(find_library(environ)))
