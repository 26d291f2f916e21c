"""Runtime lifetime and queries under Horovod's names: init, shutdown, rank/size/..., build
queries, timeline (what runrun.common.api gives every adapter, and scripts import from here).

Why: the pieces live where nothing above them is imported: the runtime and its queries in
runrun.common.state (a leaf), its start and stop with the hooks other modules register in
runrun.common.lifecycle; this module adds what needs the modules above both, init()'s
`process_sets` (registered through runrun.common.process_sets). Thread-safety: as lifecycle's
(init/shutdown take a lock) and state's (queries read immutable topology captured at init).
"""

from runrun.common import lifecycle
from runrun.common import process_sets as ps
from runrun.common.exceptions import InvalidArgumentError
from runrun.common.lifecycle import shutdown  # noqa: F401
from runrun.common.state import (  # noqa: F401
    NotInitializedError,
    backend_name,
    ccl_built,
    cross_rank,
    cross_size,
    cuda_built,
    ddl_built,
    gloo_built,
    gloo_enabled,
    is_homogeneous,
    is_initialized,
    local_rank,
    local_size,
    mpi_built,
    mpi_enabled,
    mpi_threads_supported,
    nccl_built,
    rank,
    rocm_built,
    runtime,
    size,
    start_timeline,
    stop_timeline,
)


def init(comm=None, process_sets=None, backend=None):
    """Starts the runtime (idempotent). `process_sets`: ProcessSets to register at once
    (collectively on every rank), or "dynamic" (Horovod's switch for add_process_set and
    remove_process_set after init, which runrun always allows). `comm` is accepted for Horovod
    compatibility: only None or a list of all ranks is supported (another list raises
    InvalidArgumentError). `backend`: "mpi", "gloo" or None (RUNRUN_BACKEND/auto)."""
    if isinstance(process_sets, str):
        if process_sets != "dynamic":
            raise InvalidArgumentError(
                f"init(process_sets={process_sets!r}): pass a list of ProcessSets, or "
                "'dynamic' (as in Horovod)")
        process_sets = None  # runrun's process sets can always be added and removed later
    lifecycle.start(comm, backend)
    for process_set in process_sets or []:
        ps.add_process_set(process_set)
