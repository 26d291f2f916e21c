"""Loads the extension runrun._core once.

Why: Open MPI loads its transport plugins with dlopen and some builds expect libmpi's symbols
to be global; Python loads extensions (and so their libmpi dependency) RTLD_LOCAL. Like mpi4py
and Horovod we make libmpi global first when it is on the system. RUNRUN_PRELOAD_MPI=0 skips it.
"""

import ctypes
import os
import threading

_lock = threading.Lock()
_core = None

_MPI_SONAMES = ("libmpi.so.40", "libmpi.so.12", "libmpi.so")


def _preload_mpi():
    if os.environ.get("RUNRUN_PRELOAD_MPI", "1") == "0":
        return
    for soname in _MPI_SONAMES:
        try:
            ctypes.CDLL(soname, mode=ctypes.RTLD_GLOBAL)
            return
        except OSError:
            continue


def core():
    """The runrun._core module; raises ImportError naming how to build it when missing."""
    global _core
    if _core is not None:
        return _core
    with _lock:
        if _core is None:
            _preload_mpi()
            try:
                from runrun import _core as module
            except ImportError as err:
                raise ImportError(
                    f"runrun's extension runrun._core could not be loaded ({err}); build and "
                    "install it with `make install` (or `pip install .` from the repository)"
                ) from err
            _core = module
    return _core
