"""Horovod's numerics that scripts depend on: int16 and bool through every op that takes them,
integer prescale/postscale truncated through float64, integer average as a scaling by
postscale / size, and join's average over the whole set."""

import pytest
import torch
from conftest import rank_values

INT_DTYPES = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]
# (prescale, postscale): halves, where truncation and rounding differ, and a non-dyadic factor.
FACTORS = [(0.5, 1.0), (1.0, 1.5), (0.5, 1.5), (1.0, 0.3), (1.5, 0.5)]


def horovod_reduced(hvd, shape, dtype, op, prescale, postscale, seed=0):
    """What Horovod returns: each rank's tensor times prescale in float64, truncated, summed;
    the sum times postscale (divided by the set size for Average), truncated."""
    total = torch.zeros(shape, dtype=torch.float64)
    for r in range(hvd.size()):
        total += torch.trunc(rank_values(r, shape, dtype, seed).to(torch.float64) * prescale)
    factor = postscale / hvd.size() if op == hvd.Average else postscale
    return torch.trunc(total * factor).to(dtype)


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("op_name", ["Sum", "Average"])
def test_integer_scaling_truncates_like_horovod(hvd, dtype, op_name):
    op = getattr(hvd, op_name)
    for prescale, postscale in FACTORS:
        kw = dict(op=op, prescale_factor=prescale, postscale_factor=postscale)
        mine = rank_values(hvd.rank(), (13,), dtype)
        want = horovod_reduced(hvd, (13,), dtype, op, prescale, postscale)
        assert torch.equal(hvd.allreduce(mine, **kw), want), (prescale, postscale)
        other = rank_values(hvd.rank(), (3, 2), dtype, seed=1)
        want_other = horovod_reduced(hvd, (3, 2), dtype, op, prescale, postscale, seed=1)
        outs = hvd.grouped_allreduce([mine, other], **kw)
        assert torch.equal(outs[0], want) and torch.equal(outs[1], want_other)

        n, r = hvd.size(), hvd.rank()
        rows = 2 * n + 1
        full = horovod_reduced(hvd, (rows, 2), dtype, op, prescale, postscale, seed=2)
        counts = [rows // n + (1 if q < rows % n else 0) for q in range(n)]
        mine_rs = full[sum(counts[:r]):sum(counts[:r + 1])]
        part = rank_values(r, (rows, 2), dtype, seed=2)
        assert torch.equal(hvd.reducescatter(part, **kw), mine_rs)
        outs = hvd.grouped_reducescatter([part, part.clone()], **kw)
        assert torch.equal(outs[0], mine_rs) and torch.equal(outs[1], mine_rs)


def test_integer_average_scales_the_sum_once(hvd):
    # The sum 7 n^2 + 3 times 3 / n, truncated (2 ranks: 31 * 1.5 -> 46; 4 ranks: 115 * 0.75
    # -> 86), where dividing first and scaling afterwards would give 45 and 84.
    n = hvd.size()
    x = torch.full((4,), 7 * n + (3 if hvd.rank() == 0 else 0), dtype=torch.int32)
    out = hvd.allreduce(x, op=hvd.Average, postscale_factor=3.0)
    assert out.tolist() == [int((7 * n * n + 3) * (3.0 / n))] * 4


@pytest.mark.parametrize("op_name", ["Sum", "Min", "Max", "Product"])
def test_int16_allreduce_wraps_like_torch(hvd, op_name):
    op = getattr(hvd, op_name)
    # Near the int16 range: sums and products overflow and wrap as torch's int16 arithmetic.
    mine = torch.tensor([30000, -30000, 12345, 1], dtype=torch.int16) - hvd.rank()
    parts = [torch.tensor([30000, -30000, 12345, 1], dtype=torch.int16) - r
             for r in range(hvd.size())]
    want = parts[0].clone()
    for p in parts[1:]:
        if op_name == "Sum":
            want = want + p
        elif op_name == "Min":
            want = torch.minimum(want, p)
        elif op_name == "Max":
            want = torch.maximum(want, p)
        else:
            want = want * p
    out = hvd.allreduce(mine, op=op)
    assert out.dtype == torch.int16 and torch.equal(out, want)


@pytest.mark.parametrize("dtype", [torch.int16, torch.bool])
def test_alltoall_int16_and_bool(hvd, dtype):
    n, r = hvd.size(), hvd.rank()
    parts = [rank_values(p, (2 * n, 3), dtype, seed=5) for p in range(n)]
    out = hvd.alltoall(parts[r])
    want = torch.cat([parts[p][2 * r:2 * r + 2] for p in range(n)])
    assert out.dtype == dtype and torch.equal(out, want)
    splits = [q + 1 for q in range(n)]
    rows = sum(splits)
    parts = [rank_values(p, (rows, 2), dtype, seed=6) for p in range(n)]
    out, received = hvd.alltoall(parts[r], splits=splits)
    start = sum(splits[:r])
    assert torch.equal(out, torch.cat([parts[p][start:start + r + 1] for p in range(n)]))
    assert received.tolist() == [r + 1] * n


def test_int16_allgather_broadcast_grouped(hvd):
    n, r = hvd.size(), hvd.rank()
    parts = [rank_values(p, (p + 1, 2), torch.int16, seed=7) for p in range(n)]
    assert torch.equal(hvd.allgather(parts[r]), torch.cat(parts))
    outs = hvd.grouped_allgather([parts[r], parts[r] * 2])
    assert torch.equal(outs[0], torch.cat(parts)) and torch.equal(outs[1], torch.cat(parts) * 2)
    for root in range(n):
        t = rank_values(r, (5,), torch.int16, seed=root)
        assert torch.equal(hvd.broadcast(t, root_rank=root), rank_values(root, (5,), torch.int16,
                                                                         seed=root))
    mine = [rank_values(r, (3,), torch.int16, seed=8), rank_values(r, (2, 2), torch.int16, seed=9)]
    want = [sum(rank_values(p, (3,), torch.int16, seed=8) for p in range(n)),
            sum(rank_values(p, (2, 2), torch.int16, seed=9) for p in range(n))]
    outs = hvd.grouped_allreduce(mine, op=hvd.Sum)
    assert all(o.dtype == torch.int16 and torch.equal(o, w) for o, w in zip(outs, want))


def test_join_average_divides_by_the_set_size(hvd):
    # Rank r averages r times, then joins: joined ranks add zeros and still count (Horovod).
    assert 0 <= hvd.join() < hvd.size()
    n = hvd.size()
    for step in range(n - 1):
        if step < hvd.rank():
            contributors = n - 1 - step
            out = hvd.allreduce(torch.full((3,), 6.0), name=f"join.avg.{step}")
            assert torch.equal(out, torch.full((3,), 6.0 * contributors / n)), step
            out = hvd.allreduce(torch.full((2,), 9, dtype=torch.int32), name=f"join.iavg.{step}")
            assert out.tolist() == [int(9 * contributors * (1.0 / n))] * 2, step
    assert hvd.join() == n - 1
