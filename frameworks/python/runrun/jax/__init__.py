"""runrun.jax: Horovod's API for JAX (`import runrun.jax as hvd`), on CPU jax.Arrays, eagerly
and inside jax.jit (docs/jax.md). Every op returns new arrays: jax.Arrays are immutable.

Importing this module imports jax (not optax: DistributedOptimizer imports it when called).
"""

from runrun.common.api import *  # noqa: F401,F403  (the names every adapter shares)
from runrun.common.exceptions import (
    CollectiveTimeoutError,
    HorovodInternalError,
    InvalidArgumentError,
    MismatchError,
    PeerFailureError,
    ShutDownError,
    UnsupportedError,
)
from runrun.jax import elastic
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
from runrun.jax.functions import broadcast_optimizer_state, broadcast_parameters
from runrun.jax.optimizer import DistributedOptimizer, allreduce_gradients
