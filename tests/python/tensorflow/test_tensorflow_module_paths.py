"""Horovod's inner module path: `from horovod.tensorflow.mpi_ops import allgather, size_op`."""

import runrun.tensorflow as hvd
from runrun.tensorflow import mpi_ops


def test_mpi_ops_is_runrun_tensorflow():
    for name in ("allreduce", "allgather", "broadcast", "alltoall", "size_op", "rank_op",
                 "Sum", "Average", "join", "barrier", "init", "size"):
        assert getattr(mpi_ops, name) is getattr(hvd, name), name
