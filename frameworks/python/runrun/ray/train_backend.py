"""runrun as a Ray Train backend: RunrunConfig for Train V2's DataParallelTrainer, and
RunrunTrainer, the one-line form (what Ray's removed HorovodTrainer was).

Why: Ray 2.60's Train V2 raises on HorovodTrainer; its DataParallelTrainer takes any
BackendConfig. Train starts the worker actors (ScalingConfig), orders them by node and runs the
loop in each; this backend's on_start forms the runrun job over them (job_env.plan_job: rank 0's
worker serves the rendezvous, authenticated by a secret the trainer's controller made) and
initializes runrun on every worker, so the loop's hvd.init() finds it running; on_shutdown shuts
runrun down. Train restarts a failed group (FailureConfig(max_failures)) with new workers, and
on_start forms a new job for them. Thread-safety: Train's controller calls the hooks one at a
time.
"""

import dataclasses
from typing import Optional

import ray
from ray.train.backend import Backend, BackendConfig

from runrun.common import direct_env
from runrun.ray import job_env
from runrun.ray.worker import describe_node, free_ports


@dataclasses.dataclass
class RunrunConfig(BackendConfig):
    """timeout_s: how long each rank's hvd.init() waits for the others (the rendezvous);
    nics: the network the ranks use (RUNRUN_NETWORK_INTERFACE: interface names or CIDR)."""
    timeout_s: int = 300
    nics: Optional[object] = None

    @property
    def backend_cls(self):
        return RunrunBackend

    @property
    def framework(self):
        return "runrun"

    def to_dict(self):
        return {"timeout_s": self.timeout_s, "nics": self.nics}


def _init_runrun():
    from runrun.common import basics

    basics.init()
    return basics.rank()


def _shutdown_runrun():
    from runrun.common import basics

    basics.shutdown()


class RunrunBackend(Backend):
    # As Horovod: each worker sees the GPUs of every worker of its node; hvd.local_rank()
    # picks one (torch.cuda.set_device(hvd.local_rank())).
    share_cuda_visible_devices = True

    def on_start(self, worker_group, backend_config):
        nodes = worker_group.execute(describe_node)
        order, variables = job_env.plan_job(
            nodes, lambda worker, count: worker_group.execute_single(worker, free_ports, count),
            timeout_s=backend_config.timeout_s, nics=backend_config.nics)
        ray.get([worker_group.execute_single_async(worker, direct_env.apply, env)
                 for worker, env in zip(order, variables)])
        # Every rank joins at once (each init() waits for the others at the rendezvous).
        ranks = ray.get(worker_group.execute_async(_init_runrun))
        if ranks != [order.index(w) for w in range(len(order))]:
            raise RuntimeError(f"runrun.ray: the workers formed ranks {ranks}, not the "
                               f"expected {order}")

    def on_shutdown(self, worker_group, backend_config):
        worker_group.execute(_shutdown_runrun)


def RunrunTrainer(train_loop_per_worker, *, train_loop_config=None, runrun_config=None,
                  scaling_config=None, run_config=None, datasets=None, dataset_config=None,
                  metadata=None, resume_from_checkpoint=None):
    """HorovodTrainer's arguments (horovod_config is runrun_config): a Train V2
    DataParallelTrainer with RunrunConfig as its backend."""
    from ray.train.v2.api.data_parallel_trainer import DataParallelTrainer

    return DataParallelTrainer(
        train_loop_per_worker, train_loop_config=train_loop_config,
        backend_config=runrun_config or RunrunConfig(), scaling_config=scaling_config,
        run_config=run_config, datasets=datasets, dataset_config=dataset_config,
        metadata=metadata, resume_from_checkpoint=resume_from_checkpoint)
