"""runrun.keras: horovod.tensorflow.keras for Keras 3 on each of its backends (TensorFlow,
JAX, PyTorch): `import runrun.keras as hvd` (or `import runrun.tensorflow.keras as hvd`, the
same module under Horovod's path). docs/keras.md.

Importing it imports keras (and so the backend KERAS_BACKEND names); the backend's runrun
adapter is imported when first needed. Nothing is compiled against a framework.
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
from runrun.common.exceptions import (
    HorovodInternalError,
    InvalidArgumentError,
    MismatchError,
    UnsupportedError,
)
from runrun.common.ops import Adasum, Average, Max, Min, Product, ReduceOp, Sum
from runrun.common.process_sets import (
    ProcessSet,
    add_process_set,
    global_process_set,
    remove_process_set,
)
from runrun.keras import callbacks, elastic
from runrun.keras.compression import Compression
from runrun.keras.functions import (
    allgather,
    allreduce,
    broadcast,
    broadcast_global_variables,
    broadcast_variables,
    load_model,
    reducescatter,
)
from runrun.keras.optimizer import DistributedOptimizer
