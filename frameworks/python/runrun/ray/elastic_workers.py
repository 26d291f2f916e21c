"""The workers of an elastic RayExecutor job: one Ray actor each, pinned to its node.

Why: the launcher's elastic driver starts a worker process per slot with a stable worker id and
the environment of an elastic rank (launcher/elastic/elastic_worker_process.cc: the job's store
address,
port and secret, RUNRUN_ELASTIC_WORKER, RUNRUN_ELASTIC_TIMEOUT, RUNRUN_CONTROLLER=gloo as its rank
shim sets it); here a worker is a RunrunWorker actor placed on its node with
NodeAffinitySchedulingStrategy (a placement group's bundles cannot grow when a node joins) and
given that environment as an actor-call argument (never a command line: it holds the secret).
Thread-safety: driver only.
"""

import dataclasses

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from runrun.ray.worker import RunrunWorker

# The names of rendezvous/elastic_keys.h (the protocol between an elastic driver and its
# ranks); the driver writes them exactly as the launcher's does
# (launcher/elastic/elastic_generations.cc).
CONTROL_GENERATION = 0
GENERATION_KEY = "elastic/generation"


def failed_key(generation):
    return f"elastic/failed/{generation}"


def assignment_key(worker_id):
    return f"elastic/assign/{worker_id}"


def joined_key(worker_id):
    return f"elastic/joined/{worker_id}"


def format_assignment(rank, size, host_index):
    return f"{rank} {size} {host_index}"


@dataclasses.dataclass
class ElasticWorkerRecord:
    """What the driver knows of one worker (ended ones are kept for the messages)."""
    id: int
    node_id: str
    actor: object
    env_ref: object = None      # the ObjectRef of its set_env() call
    ref: object = None          # the ObjectRef of its current run() call, if any
    done: bool = False          # that call returned or failed
    result: object = None
    succeeded: bool = False
    ended: bool = False         # the worker is gone (died, raised, lost with its node)
    stopping: bool = False      # the driver stopped it (not a failure)

    @property
    def running(self):
        return not self.ended and not self.stopping


def worker_env(*, worker_id, store_address, store_port, secret, elastic_timeout, timeout_s,
               nics, extra_env):
    """The variables of one elastic worker (they hold the secret: that worker's environment
    only, never a log or a command line)."""
    env = {
        "RUNRUN_CONTROLLER": "gloo",  # rank and size come per generation (rank_shim.cc)
        "RUNRUN_ELASTIC_WORKER": str(worker_id),
        "RUNRUN_ELASTIC_TIMEOUT": f"{elastic_timeout:g}",
        "RUNRUN_RENDEZVOUS_ADDR": store_address,
        "RUNRUN_RENDEZVOUS_PORT": str(store_port),
        "RUNRUN_RENDEZVOUS_SECRET": secret,
    }
    if timeout_s is not None:
        env["RUNRUN_RENDEZVOUS_TIMEOUT"] = str(timeout_s)
    if nics:
        env["RUNRUN_NETWORK_INTERFACE"] = nics if isinstance(nics, str) else ",".join(nics)
    env.update(extra_env or {})
    return env


def start_actor(node_id, *, cpus_per_worker, gpus_per_worker, executable):
    """A RunrunWorker actor on that node (it fails with RayActorError if the node is gone)."""
    actor_class = ray.remote(RunrunWorker)
    cls, args, kwargs = executable
    return actor_class.options(
        num_cpus=cpus_per_worker, num_gpus=gpus_per_worker,
        scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node_id, soft=False)
    ).remote(cls, args, kwargs)


def kill(worker):
    try:
        ray.kill(worker.actor, no_restart=True)
    except Exception:  # gone already
        pass
