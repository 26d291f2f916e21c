"""broadcast_object / allgather_object (horovod.tensorflow.functions'): over a process set
that leaves rank 0 out, root_rank is a global rank (as in broadcast and Horovod); objects
travel through runrun.common.object_codec."""

import pytest


def check_object_collectives_over(hvd, ranks, root):
    r = hvd.rank()
    subset = hvd.add_process_set(ranks)
    try:
        if r in ranks:
            got = hvd.broadcast_object({"from": r, "items": [r] * 3}, root_rank=root,
                                       process_set=subset)
            assert got == {"from": root, "items": [root] * 3}
            assert hvd.allgather_object(("rank", r), process_set=subset) == \
                [("rank", k) for k in ranks]
            bcast = hvd.broadcast_object_fn(root_rank=root, process_set=subset)
            assert bcast(r * 7) == root * 7
    finally:
        hvd.remove_process_set(subset)


def test_object_collectives_over_a_set_without_rank_0_use_global_root_ranks(hvd):
    """The set is ranks 1..size-1 (rank 1 is its rank 0, and the set's root is global rank 1,
    then the last rank); with 4 ranks also ProcessSet([1, 2]) with root_rank=1. Before, the
    root was found by its rank in the set: nobody serialized and every rank unpickled empty
    bytes."""
    n = hvd.size()
    if n < 2:
        pytest.skip("a set without rank 0 needs 2 ranks")
    rest = list(range(1, n))
    check_object_collectives_over(hvd, rest, root=1)
    check_object_collectives_over(hvd, rest, root=n - 1)
    if n >= 3:
        check_object_collectives_over(hvd, [1, 2], root=1)
