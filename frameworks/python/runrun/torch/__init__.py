"""runrun.torch: a drop-in for horovod.torch (`import runrun.torch as hvd`).

Importing this module imports torch; `import runrun` alone does not.
"""

from runrun.common.api import *  # noqa: F401,F403  (the names every adapter shares)
from runrun.common.exceptions import (
    CollectiveTimeoutError,
    HorovodInternalError,
    InvalidArgumentError,
    InvalidArgumentRuntimeError,
    MismatchError,
    PeerFailureError,
    ShutDownError,
    UnsupportedError,
)
from runrun.torch import callbacks
from runrun.torch.autograd import (
    allgather,
    allreduce,
    alltoall,
    broadcast,
    grouped_allgather,
    grouped_allreduce,
    grouped_reducescatter,
    reducescatter,
)
from runrun.torch.checkpoint import load_checkpoint, save_checkpoint
from runrun.torch.collectives import (
    allgather_async,
    allreduce_,
    allreduce_async,
    allreduce_async_,
    alltoall_async,
    barrier,
    broadcast_,
    broadcast_async,
    broadcast_async_,
    grouped_allgather_async,
    grouped_allreduce_,
    grouped_allreduce_async,
    grouped_allreduce_async_,
    grouped_reducescatter_async,
    join,
    reducescatter_async,
)
from runrun.torch.compression import Compression
from runrun.torch.evaluation import average_metrics, distributed_evaluation, evaluate
from runrun.torch.functions import (
    allgather_object,
    broadcast_object,
    broadcast_optimizer_state,
    broadcast_parameters,
)
from runrun.torch.handles import poll, synchronize
from runrun.torch.optimizer import DistributedOptimizer
from runrun.torch.scatter import scatter_dataset
from runrun.torch.sparse import sparse_allreduce_async
from runrun.torch.sync_batch_norm import SyncBatchNorm

# isort: split
from runrun.torch import elastic  # noqa: E402  (hvd.elastic, docs/elastic.md)
