"""runrun.jax: Horovod's API for JAX (`import runrun.jax as hvd`), on CPU jax.Arrays, eagerly
and inside jax.jit (docs/jax.md). Every op returns new arrays: jax.Arrays are immutable.

Importing this module imports jax (not optax: DistributedOptimizer imports it when called).
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
from runrun.common.exceptions import (
    CollectiveTimeoutError,
    HorovodInternalError,
    InvalidArgumentError,
    MismatchError,
    PeerFailureError,
    ShutDownError,
    UnsupportedError,
)
from runrun.common.ops import Adasum, Average, Max, Min, Product, ReduceOp, Sum
from runrun.common.profile import profile_step  # ends a step of a custom loop (--profile)
from runrun.common.process_sets import (
    ProcessSet,
    add_process_set,
    global_process_set,
    remove_process_set,
)
from runrun.jax.collectives import (
    allgather,
    allreduce,
    alltoall,
    barrier,
    broadcast,
    grouped_allgather,
    grouped_allreduce,
    grouped_reducescatter,
    join,
    reducescatter,
)
from runrun.jax import elastic
from runrun.jax.functions import broadcast_optimizer_state, broadcast_parameters
from runrun.jax.optimizer import DistributedOptimizer, allreduce_gradients
