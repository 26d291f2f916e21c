"""runrun on Ray: Horovod's RayExecutor (workers are Ray actors in a placement group) and a Ray
Train backend (RunrunConfig, RunrunTrainer). docs/ray.md.

Why: one import for the driver script; Ray is imported only here, so `import runrun` never
needs it. Thread-safety: see each class.
"""

from runrun.ray.errors import WorkerFailedError
from runrun.ray.executor import RayExecutor, RaySettings

__all__ = ["RayExecutor", "RaySettings", "WorkerFailedError", "RunrunConfig", "RunrunTrainer",
           "ElasticRayExecutor"]


def __getattr__(name):
    # Ray Train and the elastic executor are imported on first use: the executor alone needs
    # neither Ray Train's extras nor the elastic machinery.
    if name in ("RunrunConfig", "RunrunTrainer", "RunrunBackend"):
        from runrun.ray import train_backend
        return getattr(train_backend, name)
    if name == "ElasticRayExecutor":
        from runrun.ray.elastic import ElasticRayExecutor
        return ElasticRayExecutor
    raise AttributeError(f"module 'runrun.ray' has no attribute {name!r}")
