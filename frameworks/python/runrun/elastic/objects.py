"""broadcast_object on numpy, for the state classes of frameworks without one of their own
(runrun.keras on any backend, runrun.jax): root_rank's picklable object on every rank.

Why here: ObjectState's plain attributes (epoch, batch, counters) are pickled and broadcast at
sync; doing it through runrun.common's numpy adapter needs no framework. Thread-safety: any
thread, one call at a time (the op names are fixed, so two concurrent calls would collide).
"""

import numpy as np

from runrun.common import basics, object_codec
from runrun.common import collectives as _c
from runrun.common.numpy_tensors import ADAPTER as _NP
from runrun.common.process_sets import global_process_set


def broadcast_object(obj, root_rank=0, name="elastic.object", process_set=global_process_set):
    """root_rank's picklable `obj` (root_rank: a global rank of the set) on every rank."""
    is_root = basics.rank() == root_rank
    payload = (np.frombuffer(object_codec.dumps(obj), np.uint8)
               if is_root else np.zeros(0, np.uint8))
    length = _c.broadcast(_NP, np.array([payload.size], np.int64), root_rank, name + ".len",
                          process_set).wait()
    if not is_root:
        payload = np.zeros(int(length[0]), np.uint8)
    payload = _c.broadcast(_NP, payload, root_rank, name + ".data", process_set).wait()
    return obj if is_root else object_codec.loads(payload.tobytes())
