"""The Ray actor that holds one rank of a runrun job (runrun.ray.RayExecutor's workers, and the
probe Ray Train's workers answer for RunrunConfig).

Why: a rank must live in one long-lived process so that runrun's runtime (hvd.init() in the
user's function) survives from one `run` to the next, as in Horovod's RayExecutor. The class is
plain Python; the executor wraps it with ray.remote and its resources at start(). Thread-safety:
Ray runs an actor's methods one at a time (no max_concurrency is set).
"""

import os
import socket

from runrun.common import direct_env


def describe_node():
    """Where this process runs, as the driver needs it to place ranks: Ray's node id, the node's
    address, the host name, the process id and the GPUs Ray assigned to it."""
    import ray

    return {
        "node_id": ray.get_runtime_context().get_node_id(),
        "address": ray.util.get_node_ip_address(),
        "hostname": socket.gethostname(),
        "pid": os.getpid(),
        "gpu_ids": [str(gpu) for gpu in ray.get_gpu_ids()],
    }


def free_ports(count):
    return [direct_env.free_port() for _ in range(count)]


class RunrunWorker:
    """One rank: sets the job's environment, then runs what the driver sends."""

    def __init__(self, executable_cls=None, executable_args=(), executable_kwargs=None):
        self._executable_cls = executable_cls
        self._executable_args = tuple(executable_args or ())
        self._executable_kwargs = dict(executable_kwargs or {})
        self.executable = None

    def node(self):
        return describe_node()

    def free_ports(self, count):
        return free_ports(count)

    def set_env(self, variables):
        """The job's variables (direct_env.rank_env, CUDA_VISIBLE_DEVICES, the user's extra
        ones); then the executable is built, as Horovod builds it after its environment."""
        direct_env.apply(variables)
        if self._executable_cls is not None and self.executable is None:
            self.executable = self._executable_cls(*self._executable_args,
                                                   **self._executable_kwargs)
        return True

    def env(self, name):
        return os.environ.get(name)

    def execute(self, fn):
        """Horovod's execute: fn(executable), the object start(executable_cls=...) built."""
        return fn(self.executable)

    def run(self, fn, args=(), kwargs=None):
        return fn(*args, **(kwargs or {}))
