"""runrun.spark.run and run_elastic: Horovod's horovod.spark API on a barrier-mode stage.

Why: horovod.spark.run(fn, num_proc=N) ran a Horovod job inside a Spark application; with
Horovod unmaintained, the same call runs a runrun job. One barrier stage of num_proc tasks (all
scheduled at once or none), each task one rank over Gloo (task.py: the tasks meet through
BarrierTaskContext.allGather; rank 0's task serves runrun's rendezvous, authenticated by a
secret this driver made). Results come back in rank order; a failing rank fails the call with
its traceback; too few free slots fail within start_timeout saying how many were free.
Thread-safety: driver only; one call at a time per SparkContext.
"""

import os
import sys

from runrun.common import direct_env, object_codec
from runrun.spark import slots
from runrun.spark.task import run_rank

_DEFAULT_START_TIMEOUT = 600  # Horovod's default (HOROVOD_SPARK_START_TIMEOUT)


class RankFailedError(RuntimeError):
    """One or more ranks failed; `failures` maps each failed rank to (status, reason: its
    traceback or how its process died, its host's address). The first rank to fail comes first
    in the message (a rank whose process died before any that raised): the others usually failed
    because it did (their peer was gone)."""

    def __init__(self, failures, ended):
        self.failures = failures
        order = sorted(failures, key=lambda r: (failures[r][0] != "died", ended[r], r))
        parts = [f"rank {r} on {failures[r][2]}" + (" (the first to fail)" if i == 0 else "") +
                 f": {failures[r][1]}" for i, r in enumerate(order)]
        super().__init__("runrun.spark.run: the job failed; " + "\n".join(parts))


def _spark_context():
    from pyspark import SparkContext

    sc = SparkContext._active_spark_context
    if sc is None:
        raise RuntimeError("runrun.spark.run: no active SparkContext (create a SparkSession "
                           "or SparkContext first)")
    return sc


def run(fn, args=(), kwargs=None, num_proc=None, start_timeout=None, env=None, stdout=None,
        stderr=None, verbose=1, nics=None, prefix_output_with_timestamp=False, executable=None,
        use_mpi=None, use_gloo=None, extra_mpi_args=None):
    """Horovod's horovod.spark.run: fn(*args, **kwargs) on num_proc ranks (default: the
    context's default parallelism), one per barrier task; the list of results, index = rank.
    env: variables for the ranks; stdout/stderr: where each rank's output is written when the
    stage ends (default this process's); nics: RUNRUN_NETWORK_INTERFACE. MPI is not used
    (use_mpi=True is refused): every rank joins over Gloo."""
    del prefix_output_with_timestamp, executable, extra_mpi_args
    if use_mpi:
        raise ValueError("runrun.spark.run: use_mpi=True is not supported: Spark's tasks form "
                         "the job over Gloo (no mpirun, no ssh)")
    sc = _spark_context()
    num_proc = num_proc or sc.defaultParallelism
    if start_timeout is None:
        start_timeout = int(os.environ.get("HOROVOD_SPARK_START_TIMEOUT",
                                           _DEFAULT_START_TIMEOUT))
    slots.wait_for_slots(sc, num_proc, start_timeout)
    extra = dict(env or {})
    if nics:
        extra["RUNRUN_NETWORK_INTERFACE"] = nics if isinstance(nics, str) else ",".join(nics)
    payload = object_codec.dumps((fn, tuple(args), dict(kwargs or {})))
    body = run_rank(payload, direct_env.new_secret(), direct_env.new_run_id(), extra,
                    start_timeout)
    if verbose >= 2:
        print(f"runrun.spark.run: a barrier stage of {num_proc} tasks", file=sys.stderr)
    outcomes = sorted(sc.parallelize(range(num_proc), num_proc).barrier()
                      .mapPartitions(body).collect())
    results, failures, ended = [], {}, {}
    for rank, status, data, out, err, end, address in outcomes:
        ended[rank] = end
        _write(stdout or sys.stdout, out, rank, "stdout")
        _write(stderr or sys.stderr, err, rank, "stderr")
        if status == "ok":
            results.append(object_codec.loads(data)[1])
        else:
            failures[rank] = (status, data, address)
    if failures:
        raise RankFailedError(failures, ended)
    return results


def _write(stream, text, rank, name):
    if text:
        stream.write("".join(f"[{rank}]<{name}>:{line}\n" for line in text.splitlines()))
        stream.flush()


def run_elastic(fn, args=(), kwargs=None, num_proc=None, min_num_proc=None, max_num_proc=None,
                start_timeout=None, elastic_timeout=None, reset_limit=None, env=None,
                stdout=None, stderr=None, verbose=1, nics=None, **_):
    """Refused: see the message (docs/spark.md, "Elastic")."""
    raise NotImplementedError(
        "runrun.spark.run_elastic is not supported: a barrier-mode stage is gang-scheduled, "
        "all of its tasks start together and the failure of one restarts the whole stage, so "
        "its membership cannot shrink or grow while it runs (Horovod's elastic Spark ran its "
        "own task services and launcher beside Spark's scheduler instead). Use runrun.spark.run "
        "(a failed stage fails the call; call it again from a checkpoint), runrun.ray's "
        "elastic RayExecutor, or the runrun launcher's --min-np/--max-np")
