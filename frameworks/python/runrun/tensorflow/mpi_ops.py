"""runrun.tensorflow.mpi_ops: Horovod's horovod.tensorflow.mpi_ops path (scripts import ops and
queries from it: `from horovod.tensorflow.mpi_ops import allgather, size_op`). The same objects
as runrun.tensorflow; nothing of its own.
"""

from runrun.tensorflow import *  # noqa: F401,F403
