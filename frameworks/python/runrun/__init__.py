"""runrun: a collective-communication runtime for data-parallel training (Horovod's successor).

`import runrun` needs neither torch nor any framework: it offers the runtime's basics
(init, rank, size, process sets, timeline). Framework adapters live in subpackages:
`import runrun.torch as hvd` is a drop-in for `import horovod.torch as hvd`.
"""

from runrun.common.basics import (
    cross_rank,
    cross_size,
    cuda_built,
    gloo_built,
    gloo_enabled,
    init,
    is_initialized,
    local_rank,
    local_size,
    mpi_built,
    mpi_enabled,
    mpi_threads_supported,
    nccl_built,
    rank,
    shutdown,
    size,
    start_timeline,
    stop_timeline,
)
from runrun.common.exceptions import HorovodInternalError, RunrunError
from runrun.common.ops import Average, Max, Min, Product, ReduceOp, Sum
from runrun.common.process_sets import (
    ProcessSet,
    add_process_set,
    global_process_set,
    remove_process_set,
)

__version__ = "0.1.0"
