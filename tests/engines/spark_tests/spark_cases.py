"""The checks both Spark modules run, on the context their fixture made (local[2] or
local-cluster[2,1,1024]): training as one process on the global batch, a rank that raises or
is killed fails the call naming it, and no rank process is left."""

import os
import signal
import time

import pytest
import training

import runrun.spark


def new_context(master):
    from pyspark import SparkConf, SparkContext

    conf = (SparkConf().setMaster(master).setAppName("runrun-tests")
            .set("spark.ui.enabled", "false")
            .set("spark.scheduler.barrier.maxConcurrentTasksCheck.interval", "1s")
            .set("spark.executorEnv.PYTHONPATH", os.environ["PYTHONPATH"]))
    sc = SparkContext(conf=conf)
    sc.setLogLevel("ERROR")
    return sc


def check_training():
    results = runrun.spark.run(training.train_rank, num_proc=2, start_timeout=120)
    reference = training.one_process_weights()
    assert [tuple(r[:2]) for r in results] == [(0, 2), (1, 2)]
    for result in results:
        training.assert_matches_one_process(result[5], reference)
    return results


def fail_rank_1(out, how):
    import torch

    import runrun.torch as hvd

    hvd.init()
    with open(os.path.join(out, f"pid-{hvd.rank()}"), "w") as f:
        f.write(str(os.getpid()))
    hvd.allreduce(torch.ones(1))
    if hvd.rank() == 1:
        if how == "raise":
            raise ValueError("boom on rank 1")
        os.kill(os.getpid(), signal.SIGKILL)
    hvd.allreduce(torch.ones(1))  # fails: its peer is gone
    return hvd.rank()


def check_failed_rank(tmp_path, how):
    with pytest.raises(runrun.spark.RankFailedError) as failure:
        runrun.spark.run(fail_rank_1, args=(str(tmp_path), how), num_proc=2, start_timeout=120)
    assert 1 in failure.value.failures
    message = str(failure.value)
    first = message.split("\n")[0]
    if how == "raise":
        assert "rank 1 on" in first and "ValueError: boom on rank 1" in message
    else:
        assert "rank 1 on" in first and "killed by signal 9" in first
    pids = [int(open(tmp_path / f"pid-{r}").read()) for r in range(2)]
    assert_gone(pids)


def assert_gone(pids):
    deadline = time.monotonic() + 30
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [p for p in pids if _alive(p)], "rank processes left running"


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def executor_pids(app_id):
    """The executor JVMs of the application `app_id` (local-cluster's real executors)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        if b"org.apache.spark.executor.CoarseGrainedExecutorBackend" in args and \
                app_id.encode() in args:
            found.append(int(entry))
    return found
