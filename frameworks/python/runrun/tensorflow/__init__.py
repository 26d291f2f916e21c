"""runrun.tensorflow: a drop-in for horovod.tensorflow on TensorFlow 2
(`import runrun.tensorflow as hvd`), eager and inside tf.function; runrun.tensorflow.keras is
runrun.keras under Horovod's path. docs/tensorflow.md.

Importing this module imports TensorFlow; nothing in runrun is compiled against it (DLPack and
runrun._core only), so a new TensorFlow release needs no rebuild.
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
from runrun.common.exceptions import HorovodInternalError
from runrun.common.ops import Adasum, Average, Max, Min, Product, ReduceOp, Sum
from runrun.common.process_sets import (
    ProcessSet,
    add_process_set,
    global_process_set,
    remove_process_set,
)
from runrun.tensorflow.compression import Compression
from runrun.tensorflow.errors import (
    CollectiveTimeoutError,
    InvalidArgumentError,
    MismatchError,
    PeerFailureError,
    ShutDownError,
    UnsupportedError,
)
from runrun.tensorflow.functions import allgather_object, broadcast_object, broadcast_variables
from runrun.tensorflow.gradient_tape import DistributedGradientTape
from runrun.tensorflow.ops import (
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
from runrun.tensorflow.queries import (
    local_rank_op,
    local_size_op,
    process_set_included_op,
    rank_op,
    size_op,
)
