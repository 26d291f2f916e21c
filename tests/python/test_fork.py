"""A child forked after init() (os.fork, a data-loader worker, multiprocessing's "fork") has a
copy of the runtime but not its background thread or its connections: its ops fail at once
naming both processes, and its exit (runrun's shutdown, MPI's exit-time finalize) leaves the
parent's runtime and its peers untouched (common/fork_generation.h)."""

import ctypes
import os
import time

import pytest
import torch

CHILD_LIMIT_S = 30


def _in_child(hvd, pending):
    """The child's checks; returns its exit code (0: every check passed)."""
    try:
        hvd.allreduce(torch.ones(1), name="fork.in_child")
        return 10  # an op in the child ran (or would have waited for ever before)
    except hvd.UnsupportedError as e:
        if f"forked from pid {os.getppid()}" not in str(e):
            return 11
    if pending is not None:
        try:
            pending.wait()
            return 12  # a handle of the parent's op completed in the child
        except hvd.UnsupportedError as e:
            if "enqueued before the fork" not in str(e):
                return 13
    if hvd.rank() != int(os.environ["RUNRUN_RANK"]):  # what needs no peer still answers
        return 14
    hvd.shutdown()  # what atexit runs at a normal exit: must not speak for the parent
    return 0


@pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")  # JAX's, when another test loaded it
def test_forked_child_refuses_ops_and_exits_without_touching_the_parent(hvd):
    hvd.barrier()
    # Rank 0's op that rank 1 enqueues only after the child has gone: pending in the child.
    pending = hvd.allreduce_async(torch.ones(1), name="fork.pending", op=hvd.Sum) \
        if hvd.rank() == 0 else None
    if hvd.rank() == 0:
        pid = os.fork()
        if pid == 0:
            code = 20
            try:
                code = _in_child(hvd, pending)
            finally:
                # C's exit: runs the C atexit handlers (MPI's finalize), not Python's or pytest's.
                ctypes.CDLL(None).exit(code)
        deadline = time.monotonic() + CHILD_LIMIT_S
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done == pid:
                break
            if time.monotonic() > deadline:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                raise AssertionError(f"the forked child did not exit within {CHILD_LIMIT_S} s")
            time.sleep(0.05)
        assert os.waitstatus_to_exitcode(status) == 0, "the child's check that failed: see code"
    hvd.barrier()
    if hvd.rank() != 0:
        hvd.allreduce_async(torch.ones(1), name="fork.pending", op=hvd.Sum).wait()
    else:
        assert pending.wait().item() == hvd.size()  # the parent's op completes in the parent
    total = hvd.allreduce(torch.ones(1), name="fork.after", op=hvd.Sum)
    assert total.item() == hvd.size()


@pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")
def test_forked_child_leaves_the_profile_to_the_parent():
    """runrun --profile: a forked child's copy of the profiler neither reads the runtime (which
    raises there) nor prints rank 0's final table a second time at its exit."""
    from runrun.common import profile

    profiler = profile.StepProfiler()
    profiler._steps = [{}]  # one finished step, as rank 0 would have at exit
    pid = os.fork()
    if pid == 0:
        code = 20
        try:
            profiler._report = lambda final: os._exit(21)  # would print the table again
            profiler.drain = lambda: os._exit(22)          # would read the runtime
            profiler._sources = [object()]
            profiler.close()
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the child's profiler acted (see the code)"
