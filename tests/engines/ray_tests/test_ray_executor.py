"""runrun.ray.RayExecutor on a Ray cluster this module starts (ray.init(num_cpus=...)): the
training of one process on the global batch, Horovod's API (both placement strategies, execute,
execute_single, run_remote, an executable class), GPUs as Horovod hands them out, and failures:
a rank that raises or whose process is killed makes run() raise naming the rank and its node,
and no actor, process or placement group of the job is left."""

import os
import signal
import time

import pytest
import ray
import training

from runrun.ray import RayExecutor, WorkerFailedError


@pytest.fixture(scope="module", autouse=True)
def cluster():
    # Fake GPUs: Ray hands them out as on a GPU node (CUDA_VISIBLE_DEVICES per actor).
    ray.init(num_cpus=4, num_gpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def start(**kwargs):
    executor = RayExecutor(RayExecutor.create_settings(timeout_s=60), **kwargs)
    executor.start()
    return executor


def actor_ids(executor):
    return [w._actor_id.hex() for w in executor.workers]


def assert_nothing_left(pids, ids):
    """Every worker process has ended, Ray counts its actor dead, no placement group holds
    resources (polled: Ray reaps asynchronously)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        alive = [pid for pid in pids if _alive(pid)]
        states = {a: ray._private.state.actors(a)["State"] for a in ids}
        groups = [g for g in ray.util.placement_group_table().values()
                  if g["state"] not in ("REMOVED",)]
        if not alive and all(s == "DEAD" for s in states.values()) and not groups:
            return
        time.sleep(0.2)
    raise AssertionError(f"left behind: processes {alive}, actors {states}, groups {groups}")


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().split(")")[-1].split()[0] != "Z"


def test_training_matches_one_process_on_the_global_batch():
    executor = start(num_workers=2)
    pids = [n["pid"] for n in executor.nodes]
    ids = actor_ids(executor)
    results = executor.run(training.train_rank)
    reference = training.one_process_weights()
    assert [r[:5] for r in results] == [(0, 2, 0, 2, 1), (1, 2, 1, 2, 1)]
    for result in results:
        training.assert_matches_one_process(result[5], reference)
    # A second run on the same actors: the runtime of the first is still up.
    assert executor.run(lambda: __import__("runrun.torch").torch.size()) == [2, 2]
    executor.shutdown()
    assert_nothing_left(pids, ids)


def test_hosts_and_workers_per_host_execute_and_run_remote():
    class Executable:
        def __init__(self, base):
            self.base = base

    executor = RayExecutor(RayExecutor.create_settings(timeout_s=60), num_hosts=1,
                           num_workers_per_host=2)
    executor.start(executable_cls=Executable, executable_args=[10],
                   extra_env_vars={"MY_SETTING": "on"})
    try:
        assert executor.execute(lambda e: e.base + int(os.environ["RANK"])) == [10, 11]
        assert executor.execute_single(lambda e: (e.base, os.environ["MY_SETTING"])) == (10, "on")
        refs = executor.run_remote(lambda a, b=0: a + b + int(os.environ["RANK"]), [1], {"b": 2})
        assert ray.get(refs) == [3, 4]
        assert len({n["node_id"] for n in executor.nodes}) == 1
    finally:
        executor.shutdown()


def test_gpus_each_worker_sees_its_nodes_gpus():
    executor = start(num_workers=2, use_gpu=True)
    try:
        seen = executor.run(lambda: (os.environ["CUDA_VISIBLE_DEVICES"],
                                     int(os.environ["LOCAL_RANK"])))
        assert seen == [("0,1", 0), ("0,1", 1)]
    finally:
        executor.shutdown()


def raise_on_rank_1():
    import runrun.torch as hvd

    hvd.init()
    if hvd.rank() == 1:
        raise ValueError("boom on rank 1")
    return hvd.rank()


def die_on_rank_1():
    import torch

    import runrun.torch as hvd

    hvd.init()
    hvd.allreduce(torch.ones(1))
    if hvd.rank() == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    for _ in range(1000):  # rank 0 waits for its peer in collectives until it is stopped
        hvd.allreduce(torch.ones(1))
        time.sleep(0.05)
    return hvd.rank()


@pytest.mark.parametrize("fn, how", [(raise_on_rank_1, "its function raised"),
                                     (die_on_rank_1, "its worker died")])
def test_a_failed_rank_fails_run_naming_it_and_leaves_nothing(fn, how):
    executor = start(num_workers=2)
    pids = [n["pid"] for n in executor.nodes]
    ids = actor_ids(executor)
    node = executor.nodes[1]["address"]
    with pytest.raises(WorkerFailedError) as failure:
        executor.run(fn)
    assert failure.value.rank == 1
    message = str(failure.value)
    assert f"rank 1 on node {node}" in message and how in message
    if fn is raise_on_rank_1:
        assert "ValueError: boom on rank 1" in message
    assert executor.workers == []
    assert_nothing_left(pids, ids)
    with pytest.raises(RuntimeError, match="not started"):
        executor.run(fn)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(min_workers=0), ValueError, r"min_workers=0 must be an integer >= 1"),
    (dict(min_workers=3, max_workers=2), ValueError, r"max_workers=2 must be an integer >= "
                                                     r"min_workers \(3\)"),
    (dict(min_workers=1, max_workers=2, num_workers=3), ValueError,
     r"num_workers=3 \(the first generation's size\) must be between"),
    (dict(min_workers=1, reset_limit=-1), ValueError, r"reset_limit=-1 must be an integer >= 0"),
    (dict(max_workers=2, elastic_timeout=0), ValueError, r"elastic_timeout=0 must be a positive"),
    (dict(max_workers=2, cooldown_range=(5, 1)), ValueError, r"cooldown_range=\(5, 1\) must be"),
    (dict(max_workers=2, override_discovery=False), ValueError,
     r"always discovers hosts from ray.nodes\(\); override_discovery=False"),
    (dict(max_workers=2, num_hosts=2), ValueError, r"num_hosts/num_workers_per_host cannot be "
                                                   r"elastic"),
    (dict(num_workers=2, reset_limit=1), ValueError, r"reset_limit only apply to an elastic job"),
    (dict(max_workers=2, discovery_script="x"), TypeError,
     r"unexpected keyword arguments \['discovery_script'\]"),
])
def test_elastic_options_are_checked_under_horovods_names(kwargs, error, match):
    """Refused when made, before any Ray call, naming the option and why."""
    with pytest.raises(error, match=match):
        RayExecutor(RayExecutor.create_settings(), **kwargs)


def test_what_an_elastic_executor_does_not_offer_is_refused_with_the_reason():
    executor = RayExecutor(RayExecutor.create_settings(), min_workers=1, max_workers=2)
    assert (executor.elastic.min_workers, executor.elastic.max_workers,
            executor.elastic.reset_limit, executor.elastic.elastic_timeout) == (1, 2, -1, 600.0)
    for call in (lambda: executor.run_remote(len), lambda: executor.execute_single(len)):
        with pytest.raises(NotImplementedError, match="not available in an elastic job"):
            call()
    with pytest.raises(NotImplementedError, match="callbacks"):
        executor.run(len, callbacks=[print])
    with pytest.raises(RuntimeError, match="not started"):
        executor.run(len)


def raise_on_rank_1_then_train():
    """Elastic: rank 1 raises at once; rank 0 trains (commits every step) until it is stopped."""
    import torch

    import runrun.torch as hvd

    hvd.init()
    if hvd.rank() == 1:
        raise ValueError("boom on rank 1")
    state = hvd.elastic.TorchState(step=0)

    @hvd.elastic.run
    def train(state):
        while True:
            hvd.allreduce(torch.tensor([1.0]), name="step")
            state.step += 1
            state.commit()
            time.sleep(0.05)

    train(state)


def test_elastic_job_below_min_workers_for_elastic_timeout_fails_naming_what_was_lost():
    """One node, two workers, min_workers=2: a worker whose function raises is killed, its node
    cools down (no replacement), the survivor waits for a generation that cannot come, and after
    elastic_timeout (10 s: the workers import torch within it) run() raises ElasticJobFailedError
    naming the lost worker and its error;
    every actor is dead and its process gone."""
    from runrun.ray import ElasticJobFailedError

    executor = RayExecutor(RayExecutor.create_settings(timeout_s=60), min_workers=2,
                           max_workers=2, elastic_timeout=10, cooldown_range=(60, 60))
    executor.start()
    workers = list(executor._elastic_driver.workers.values())
    ids = [w.actor._actor_id.hex() for w in workers]
    pids = ray.get([w.actor.node.remote() for w in workers])
    started = time.monotonic()
    with pytest.raises(ElasticJobFailedError) as failure:
        executor.run(raise_on_rank_1_then_train)
    message = str(failure.value)
    # The survivor's own wait for a generation (elastic_timeout too) may end first: 0 or 1.
    assert "can run, fewer than min_workers 2 for elastic_timeout 10 s; lost: " in message
    assert "(rank 1 of generation 1)" in message and "its function raised" in message
    assert "ValueError: boom on rank 1" in message
    assert time.monotonic() - started < 60
    assert executor._elastic_driver is None
    assert_nothing_left([p["pid"] for p in pids], ids)
