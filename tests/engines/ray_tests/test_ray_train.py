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
    attempt = len([n for n in os.listdir(out) if n.startswith("started")])
    hvd.init()  # RunrunConfig's on_start formed the job: a no-op here
    marker = os.path.join(out, f"started-{hvd.rank()}-{os.getpid()}")
    open(marker, "w").close()
    if config.get("kill_rank_1_once") and hvd.rank() == 1 and attempt < 2:
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
    started = [n for n in os.listdir(out) if n.startswith("started")]
    assert len(started) == 4  # two workers, twice
    pids = check_training(str(out))
    first_pids = {int(n.split("-")[2]) for n in started} - set(pids)
    assert len(first_pids) == 2  # the second attempt ran in new workers
    assert_nothing_left(pids + sorted(first_pids), [])


def test_runrun_trainer_is_a_data_parallel_trainer_with_runrun_config():
    trainer = RunrunTrainer(train_loop, train_loop_config={"out": "/nonexistent"},
                            runrun_config=RunrunConfig(timeout_s=7),
                            scaling_config=ScalingConfig(num_workers=2))
    assert isinstance(trainer, DataParallelTrainer)
    assert trainer.backend_config == RunrunConfig(timeout_s=7)
    assert isinstance(RunrunTrainer(train_loop).backend_config, RunrunConfig)
