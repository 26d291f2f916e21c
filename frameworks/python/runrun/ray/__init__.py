"""runrun on Ray: Horovod's RayExecutor (workers are Ray actors in a placement group, or,
elastic, pinned to the nodes as they come and go) and a Ray Train backend (RunrunConfig,
RunrunTrainer). docs/ray.md.

Why: one import for the driver script; Ray is imported only here, so `import runrun` never
needs it. Thread-safety: see each class.
"""

from runrun.ray.errors import ElasticJobFailedError, WorkerFailedError
from runrun.ray.executor import RayExecutor, RaySettings

__all__ = ["RayExecutor", "RaySettings", "WorkerFailedError", "ElasticJobFailedError",
           "RunrunConfig", "RunrunTrainer"]


def __getattr__(name):
    # Ray Train is imported on first use: the executor alone does not need Ray Train's extras.
    if name in ("RunrunConfig", "RunrunTrainer", "RunrunBackend"):
        from runrun.ray import train_backend
        return getattr(train_backend, name)
    raise AttributeError(f"module 'runrun.ray' has no attribute {name!r}")
