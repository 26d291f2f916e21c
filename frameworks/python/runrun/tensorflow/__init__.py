"""runrun.tensorflow: a drop-in for horovod.tensorflow on TensorFlow 2
(`import runrun.tensorflow as hvd`), eager and inside tf.function; runrun.tensorflow.keras is
runrun.keras under Horovod's path. docs/tensorflow.md.

Importing this module imports TensorFlow; nothing in runrun is compiled against it (DLPack and
runrun._core only), so a new TensorFlow release needs no rebuild.
"""

from runrun.common.api import *  # noqa: F401,F403  (the names every adapter shares)
from runrun.common.exceptions import HorovodInternalError
from runrun.tensorflow.compression import Compression
from runrun.tensorflow.errors import (
    CollectiveTimeoutError,
    InvalidArgumentError,
    MismatchError,
    PeerFailureError,
    ShutDownError,
    UnsupportedError,
)
from runrun.tensorflow.functions import (
    allgather_object,
    broadcast_,
    broadcast_global_variables,
    broadcast_object,
    broadcast_object_fn,
    broadcast_variables,
)
from runrun.tensorflow.gradient_tape import (
    DistributedGradientTape,
    PartialDistributedGradientTape,
)
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
from runrun.tensorflow.optimizer import DistributedOptimizer
from runrun.tensorflow.queries import (
    local_rank_op,
    local_size_op,
    process_set_included_op,
    rank_op,
    size_op,
)


def __getattr__(name):
    """SyncBatchNormalization (a Keras layer, Horovod's horovod.tensorflow name) and the elastic
    module are imported when first used: Keras stays unimported for scripts that use neither."""
    if name == "SyncBatchNormalization":
        from runrun.tensorflow.keras import SyncBatchNormalization  # runrun.keras' (the shim)
        return SyncBatchNormalization
    if name == "elastic":
        import importlib
        return importlib.import_module("runrun.tensorflow.elastic")
    raise AttributeError(f"module 'runrun.tensorflow' has no attribute '{name}'")
