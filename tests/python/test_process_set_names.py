"""Unnamed ops in a process set whose id was used before by another set: every member must name
its n-th unnamed op alike. Set ids start again at init(), so a rank that ran unnamed ops in an
earlier set with the same id must not carry that count into the new one (it did: in the pytest
suite at 4 ranks, runrun.jax's process-set test waited for differently numbered ops on its two
members until the collective timeout, after torch tests had used set id 1 on other ranks)."""

import time

import pytest
import torch

from runrun.common import names


def wait_bounded(hvd, handle, what, seconds=30.0):
    deadline = time.monotonic() + seconds
    while not hvd.poll(handle):
        assert time.monotonic() < deadline, f"{what} did not complete in {seconds} s"
        time.sleep(0.01)
    return hvd.synchronize(handle)


def test_unnamed_ops_match_in_a_set_that_reuses_an_id(hvd):
    n, r = hvd.size(), hvd.rank()
    if n < 3:
        pytest.skip("a set of two ranks other than the global set needs 3 ranks or more")
    hvd.shutdown()
    hvd.init()
    first = hvd.add_process_set([0])  # rank 0 alone: its counters move, the others' do not
    first_id = first.process_set_id
    if r == 0:
        for _ in range(3):
            hvd.allreduce(torch.ones(2), op=hvd.Sum, process_set=first)
    hvd.shutdown()
    hvd.init()
    pair = hvd.add_process_set([0, n - 1])
    try:
        assert pair.process_set_id == first_id, "the id was not reused: nothing tested"
        if pair.included():
            # The name each member would give its next unnamed op in the set is the same.
            name = names.op_name("allreduce", None, pair.process_set_id)
            assert hvd.allgather_object(name, process_set=pair) == [name] * 2
            handle = hvd.allreduce_async(torch.full((2,), float(r)), op=hvd.Sum,
                                         process_set=pair)
            out = wait_bounded(hvd, handle, "an unnamed allreduce in the new set")
            assert torch.equal(out, torch.full((2,), float(n - 1)))
    finally:
        hvd.remove_process_set(pair)
