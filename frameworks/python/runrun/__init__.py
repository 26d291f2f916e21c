"""runrun: a collective-communication runtime for data-parallel training (Horovod's successor).

`import runrun` needs neither torch nor any framework: it offers the runtime's basics
(init, rank, size, process sets, timeline). Framework adapters live in subpackages:
`import runrun.torch as hvd` is a drop-in for `import horovod.torch as hvd`.
"""

from runrun.common.api import *  # noqa: F401,F403  (the names every adapter shares)
from runrun.common.exceptions import HorovodInternalError, RunrunError
from runrun.runner import run  # noqa: F401  (Horovod's horovod.run)

__version__ = "0.1.0"
