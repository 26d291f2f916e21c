"""The error a RayExecutor or Ray Train job raises on the driver when a rank fails.

Why: the driver must say which rank failed and where, whatever Ray's error says (an actor that
died names only its actor id). Thread-safety: plain exception.
"""


class WorkerFailedError(RuntimeError):
    """A rank died (its actor's process ended) or its function raised. `rank`, `node` (the
    node's address and Ray node id) and `cause` (Ray's error, with the rank's traceback when
    the function raised)."""

    def __init__(self, rank, node, how, cause):
        self.rank = rank
        self.node = node
        self.cause = cause
        what = ("its worker died (the actor's process ended)" if how == "died"
                else "its function raised")
        super().__init__(f"runrun.ray: rank {rank} on node {node} failed: {what}; every "
                         f"worker of the job was stopped.\n{cause}")


class ElasticJobFailedError(RuntimeError):
    """An elastic RayExecutor job ended without a result: fewer than min_workers could run for
    elastic_timeout, the resets exceeded reset_limit, or a worker failed after another returned.
    The message names what was lost (which worker, rank, node, and how)."""

    def __init__(self, why):
        super().__init__(f"runrun.ray: elastic job failed: {why}; every worker of the job was "
                         "stopped")
