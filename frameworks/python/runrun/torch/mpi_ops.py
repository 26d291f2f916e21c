"""runrun.torch.mpi_ops: Horovod's horovod.torch.mpi_ops path (scripts import the ops, reduce
ops and handles from it: `from horovod.torch.mpi_ops import synchronize`). The same objects as
runrun.torch; nothing of its own.
"""

from runrun.torch import *  # noqa: F401,F403
