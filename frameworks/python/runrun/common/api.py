"""The part of Horovod's module-level API that is the same in every adapter: the queries,
init/shutdown, the reduce ops, process sets and profile_step.

Why: runrun.torch, runrun.tensorflow, runrun.keras and runrun.jax each re-export these names
(`hvd.rank()`, `hvd.Average`, `hvd.add_process_set`, ...); listing them once here keeps the
adapters identical where Horovod's are. An adapter does `from runrun.common.api import *` and
adds what is its own (ops on its tensors, its exception classes where they differ, its optimizer).
Nothing here imports a framework.
"""

from runrun.common.basics import (
    ccl_built,
    cross_rank,
    cross_size,
    cuda_built,
    ddl_built,
    gloo_built,
    gloo_enabled,
    init,
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
    shutdown,
    size,
    start_timeline,
    stop_timeline,
)
from runrun.common.ops import Adasum, Average, Max, Min, Product, ReduceOp, Sum
from runrun.common.process_sets import (
    ProcessSet,
    add_process_set,
    global_process_set,
    remove_process_set,
)
from runrun.common.profile import profile_step  # ends a step of a custom loop (--profile)

__all__ = [
    "Adasum",
    "Average",
    "Max",
    "Min",
    "ProcessSet",
    "Product",
    "ReduceOp",
    "Sum",
    "add_process_set",
    "ccl_built",
    "cross_rank",
    "cross_size",
    "cuda_built",
    "ddl_built",
    "global_process_set",
    "gloo_built",
    "gloo_enabled",
    "init",
    "is_homogeneous",
    "is_initialized",
    "local_rank",
    "local_size",
    "mpi_built",
    "mpi_enabled",
    "mpi_threads_supported",
    "nccl_built",
    "profile_step",
    "rank",
    "remove_process_set",
    "rocm_built",
    "shutdown",
    "size",
    "start_timeline",
    "stop_timeline",
]
