"""runrun.ray.RayExecutor: Horovod's horovod.ray.RayExecutor on runrun.

Why: teams that trained with `horovod.ray.RayExecutor` keep their driver script and change the
import. Workers are Ray actors (worker.RunrunWorker) in one placement group (placement.py);
once they run, the driver orders them by node and hands each the environment of a direct
launch (job_env.py): rank 0's actor serves runrun's rendezvous store, authenticated by a secret
the driver made, and the user's function calls hvd.init() as under Horovod. No ssh, no launcher.
A rank that dies or raises makes run()/execute() raise WorkerFailedError on the driver naming
the rank and its node, and every actor of the job is stopped (start() again to go on).
With min_workers/max_workers the job is elastic instead: elastic_driver.ElasticDriver serves
the job's store from the driver and follows the workers through runrun's generations.
Thread-safety: driver only; one call at a time per executor.
"""

import dataclasses

import ray

from runrun.ray import job_env
from runrun.ray.elastic_driver import ElasticDriver
from runrun.ray.elastic_options import elastic_options
from runrun.ray.placement import Placement
from runrun.ray.worker import RunrunWorker


@dataclasses.dataclass
class RaySettings:
    """Horovod's settings object: timeout_s bounds the rendezvous (each rank's wait for the
    others at hvd.init()), placement_group_timeout_s the wait for the workers' resources; nics
    picks the network (RUNRUN_NETWORK_INTERFACE). The ssh fields are accepted and unused."""
    timeout_s: int = 30
    placement_group_timeout_s: int = 100
    placement_group_strategy: str = "PACK"
    nics: object = None
    ssh_identity_file: object = None
    ssh_str: object = None


class RayExecutor:
    """Horovod's RayExecutor: num_workers (one bundle per worker, packed) or num_hosts with
    num_workers_per_host (one bundle per host, spread); or elastic (min_workers and/or
    max_workers, reset_limit, cooldown_range, elastic_timeout): workers on the Ray nodes as they
    come and go, driven by elastic_driver.ElasticDriver (docs/ray.md, "Elastic")."""

    @classmethod
    def create_settings(cls, timeout_s=30, ssh_identity_file=None, ssh_str=None,
                        placement_group_timeout_s=100, nics=None):
        return RaySettings(timeout_s=timeout_s, placement_group_timeout_s=placement_group_timeout_s,
                           nics=nics, ssh_identity_file=ssh_identity_file, ssh_str=ssh_str)

    def __init__(self, settings=None, num_workers=None, num_hosts=None, num_workers_per_host=1,
                 cpus_per_worker=1, use_gpu=False, gpus_per_worker=None,
                 use_current_placement_group=True, min_workers=None, max_workers=None,
                 reset_limit=None, cooldown_range=None, elastic_timeout=600,
                 override_discovery=True, **unknown):
        del use_current_placement_group  # a placement group of its own, always
        self.elastic = elastic_options(
            min_workers=min_workers, max_workers=max_workers, num_workers=num_workers,
            num_hosts=num_hosts, reset_limit=reset_limit, cooldown_range=cooldown_range,
            elastic_timeout=elastic_timeout, override_discovery=override_discovery, **unknown)
        if self.elastic is None and (num_workers is None) == (num_hosts is None):
            raise ValueError("RayExecutor: pass num_workers, or num_hosts (with "
                             "num_workers_per_host), not both; or min_workers/max_workers for "
                             "an elastic job")
        if gpus_per_worker and not use_gpu:
            raise ValueError("RayExecutor: gpus_per_worker needs use_gpu=True")
        self.settings = settings or RaySettings()
        self.num_hosts = num_hosts
        self.num_workers_per_host = num_workers_per_host
        self.num_workers = num_workers if num_workers is not None or num_hosts is None else \
            num_hosts * num_workers_per_host
        self.cpus_per_worker = cpus_per_worker
        self.use_gpu = use_gpu
        self.gpus_per_worker = (gpus_per_worker or 1) if use_gpu else 0
        self.workers = []   # in rank order once started
        self.nodes = []     # describe_node() of each rank
        self._placement = None
        self._elastic_driver = None

    # -- lifetime ---------------------------------------------------------------------------

    def start(self, executable_cls=None, executable_args=None, executable_kwargs=None,
              extra_env_vars=None):
        """Reserves the placement group, starts the actors and gives each its rank's
        environment. executable_cls is built in every worker (execute() passes it to fn)."""
        if self.workers or self._elastic_driver is not None:
            raise RuntimeError("RayExecutor.start: already started (shutdown() first)")
        if self.elastic is not None:
            self._start_elastic(executable_cls, executable_args, executable_kwargs, extra_env_vars)
            return
        self._placement = Placement(
            num_workers=None if self.num_hosts is not None else self.num_workers,
            num_hosts=self.num_hosts, num_workers_per_host=self.num_workers_per_host,
            cpus_per_worker=self.cpus_per_worker, gpus_per_worker=self.gpus_per_worker,
            strategy=self.settings.placement_group_strategy,
            timeout_s=self.settings.placement_group_timeout_s)
        actor_class = ray.remote(RunrunWorker)
        try:
            workers = [
                actor_class.options(
                    num_cpus=self.cpus_per_worker, num_gpus=self.gpus_per_worker,
                    scheduling_strategy=self._placement.scheduling(i)).remote(
                        executable_cls, executable_args, executable_kwargs)
                for i in range(self.num_workers)]
            self.workers = workers  # shutdown() finds them if what follows fails
            nodes = ray.get([w.node.remote() for w in workers],
                            timeout=self.settings.placement_group_timeout_s)
            order, variables = job_env.plan_job(
                nodes, lambda worker, count: ray.get(workers[worker].free_ports.remote(count)),
                timeout_s=self.settings.timeout_s, nics=self.settings.nics,
                use_gpu=self.use_gpu)
            self.workers = [workers[i] for i in order]
            self.nodes = [nodes[i] for i in order]
            extra = dict(extra_env_vars or {})
            ray.get([w.set_env.remote({**env, **extra})
                     for w, env in zip(self.workers, variables)])
        except BaseException:
            self.shutdown()
            raise

    def _start_elastic(self, executable_cls, executable_args, executable_kwargs, extra_env_vars):
        driver = ElasticDriver(
            self.elastic, cpus_per_worker=self.cpus_per_worker,
            gpus_per_worker=self.gpus_per_worker, timeout_s=self.settings.timeout_s,
            nics=self.settings.nics,
            executable=(executable_cls, executable_args, executable_kwargs),
            extra_env=extra_env_vars)
        self._elastic_driver = driver
        try:
            driver.start()
        except BaseException:
            self.shutdown()
            raise

    def shutdown(self):
        """Stops every actor and releases the placement group (safe to call more than once)."""
        if self._elastic_driver is not None:
            self._elastic_driver.shutdown()
            self._elastic_driver = None
        for worker in self.workers:
            try:
                ray.kill(worker, no_restart=True)
            except Exception:  # an actor that is gone already
                pass
        self.workers = []
        self.nodes = []
        if self._placement is not None:
            self._placement.remove()
            self._placement = None

    # -- work -------------------------------------------------------------------------------

    def run(self, fn, args=None, kwargs=None, callbacks=None):
        """fn(*args, **kwargs) on every rank; the list of results, index = rank. Elastic: on
        every worker of every generation (new workers too); the results of the generation the
        job finished in, index = rank in it."""
        if self.elastic is not None:
            _refuse_callbacks("run", callbacks)
            return self._run_elastic("run", lambda actor: actor.run.remote(
                fn, tuple(args or ()), dict(kwargs or {})))
        del callbacks  # Horovod's elastic callbacks; the non-elastic executor has none
        return self._gather(self.run_remote(fn, args, kwargs))

    def run_remote(self, fn, args=None, kwargs=None):
        """As run, without waiting: one ObjectRef per rank (ray.get them; a failed rank raises
        Ray's error there, and the actors stay until shutdown())."""
        self._refuse_elastic("run_remote")
        self._require_started("run_remote")
        return [w.run.remote(fn, tuple(args or ()), dict(kwargs or {})) for w in self.workers]

    def execute(self, fn, callbacks=None):
        """fn(executable) on every rank (the executable_cls object, or None)."""
        if self.elastic is not None:
            _refuse_callbacks("execute", callbacks)
            return self._run_elastic("execute", lambda actor: actor.execute.remote(fn))
        del callbacks
        self._require_started("execute")
        return self._gather([w.execute.remote(fn) for w in self.workers])

    def execute_single(self, fn):
        """fn(executable) on rank 0 only: its result."""
        self._refuse_elastic("execute_single")
        self._require_started("execute_single")
        return self._gather([self.workers[0].execute.remote(fn)])[0]

    def _run_elastic(self, what, submit):
        if self._elastic_driver is None:
            raise RuntimeError(f"RayExecutor.{what}: not started (call start() first; a failed "
                               "elastic run stops the workers)")
        try:
            return self._elastic_driver.run(submit)
        except BaseException:
            self.shutdown()
            raise

    def _refuse_elastic(self, what):
        if self.elastic is not None:
            raise NotImplementedError(
                f"RayExecutor.{what} is not available in an elastic job: its workers change "
                "with the generations, which only run() and execute() follow (docs/ray.md, "
                "\"Elastic\")")

    def _require_started(self, what):
        if not self.workers:
            raise RuntimeError(f"RayExecutor.{what}: not started (call start() first; a "
                               "failed run stops the workers)")

    def _gather(self, refs):
        nodes = job_env.node_names(self.nodes)
        try:
            return job_env.gather(refs, lambda rank: nodes[rank])
        except BaseException:
            self.shutdown()  # the others may wait for the failed rank in a collective
            raise


def _refuse_callbacks(what, callbacks):
    if callbacks:
        raise NotImplementedError(
            f"RayExecutor.{what}: callbacks (Horovod's driver-side handlers of the elastic "
            "workers' events) are not supported; progress is reported on stderr "
            "(\"runrun.ray: elastic: ...\")")
