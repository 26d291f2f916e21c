"""runrun.keras: horovod.tensorflow.keras for Keras 3 on each of its backends (TensorFlow,
JAX, PyTorch): `import runrun.keras as hvd` (or `import runrun.tensorflow.keras as hvd`, the
same module under Horovod's path). docs/keras.md.

Importing it imports keras (and so the backend KERAS_BACKEND names); the backend's runrun
adapter is imported when first needed. Nothing is compiled against a framework.
"""

from runrun.common.api import *  # noqa: F401,F403  (the names every adapter shares)
from runrun.common.exceptions import (
    HorovodInternalError,
    InvalidArgumentError,
    MismatchError,
    UnsupportedError,
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
from runrun.keras.optimizer import DistributedOptimizer, PartialDistributedOptimizer
from runrun.keras.sync_batch_norm import SyncBatchNormalization
