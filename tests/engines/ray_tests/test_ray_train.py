"""runrun.ray.RunrunConfig / RunrunTrainer in Ray Train V2 on a Ray cluster this module starts:
the loop calls hvd.init() as under Horovod and reports with ray.train.report; a worker killed
mid-training is restarted by FailureConfig(max_failures=1), and the new job's training matches
one process on the global batch on every rank; no worker is left."""

import json
import os
import signal

import pytest
import ray
import training
from ray.train import FailureConfig, RunConfig, ScalingConfig
from ray.train.v2.api.data_parallel_trainer import DataParallelTrainer
from test_ray_executor import assert_nothing_left

from runrun.ray import RunrunConfig, RunrunTrainer


@pytest.fixture(scope="module", autouse=True)
def cluster():
    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def train_loop(config):
    import runrun.torch as hvd

    out = config["out"]
    hvd.init()  # RunrunConfig's on_start formed the job: a no-op here
    # Rank 1's own earlier markers say whether this is its first group: rank 0's may be missing
    # (Train tears a group down as soon as rank 1 dies, maybe before rank 0 wrote its marker).
    killed_before = any(n.startswith("started-1-") for n in os.listdir(out))
    marker = os.path.join(out, f"started-{hvd.rank()}-{os.getpid()}")
    open(marker, "w").close()
    if config.get("kill_rank_1_once") and hvd.rank() == 1 and not killed_before:
        os.kill(os.getpid(), signal.SIGKILL)

    def report(step, loss):
        ray.train.report({"step": step, "loss": loss})

    result = training.train_rank(report)
    with open(os.path.join(out, f"rank-{hvd.rank()}.json"), "w") as f:
        json.dump({"result": result, "pid": os.getpid()}, f)


def read_results(out, size):
    results = []
    for rank in range(size):
        with open(os.path.join(out, f"rank-{rank}.json")) as f:
            results.append(json.load(f))
    return results


def check_training(out):
    reference = training.one_process_weights()
    results = read_results(out, 2)
    assert [r["result"][:5] for r in results] == [[0, 2, 0, 2, 1], [1, 2, 1, 2, 1]]
    for r in results:
        training.assert_matches_one_process(r["result"][5], reference)
    return [r["pid"] for r in results]


def test_data_parallel_trainer_restarts_a_killed_worker(tmp_path):
    """One fit (each costs tens of seconds here): the first group's rank 1 is killed, Train
    restarts the group in new workers, the new job trains as one process would."""
    out = tmp_path / "out"
    out.mkdir()
    trainer = DataParallelTrainer(
        train_loop, train_loop_config={"out": str(out), "kill_rank_1_once": True},
        backend_config=RunrunConfig(), scaling_config=ScalingConfig(num_workers=2),
        run_config=RunConfig(name="runrun-restart", storage_path=str(tmp_path / "store"),
                             failure_config=FailureConfig(max_failures=1)))
    result = trainer.fit()
    assert result.error is None  # Train V2 keeps metrics with checkpoints only
    started = [n.split("-") for n in os.listdir(out) if n.startswith("started")]
    pids = check_training(str(out))
    # Rank 1 started twice, in two processes: the killed one, then the one that trained. The
    # first group's rank 0 may have been torn down before it wrote its marker.
    rank_1 = sorted(int(pid) for _, rank, pid in started if rank == "1")
    rank_0 = sorted(int(pid) for _, rank, pid in started if rank == "0")
    assert len(rank_1) == 2 and pids[1] in rank_1
    assert len(rank_0) in (1, 2) and pids[0] in rank_0
    first_pids = set(rank_0 + rank_1) - set(pids)
    assert len(first_pids) == len(rank_0) + len(rank_1) - 2  # the second attempt: new workers
    assert_nothing_left(pids + sorted(first_pids), [])


def test_runrun_trainer_is_a_data_parallel_trainer_with_runrun_config():
    trainer = RunrunTrainer(train_loop, train_loop_config={"out": "/nonexistent"},
                            runrun_config=RunrunConfig(timeout_s=7),
                            scaling_config=ScalingConfig(num_workers=2))
    assert isinstance(trainer, DataParallelTrainer)
    assert trainer.backend_config == RunrunConfig(timeout_s=7)
    assert isinstance(RunrunTrainer(train_loop).backend_config, RunrunConfig)
