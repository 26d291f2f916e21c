"""Gradients through the collectives, with Horovod's conventions (see runrun/torch/autograd.py)."""

import torch
from conftest import rank_values


def test_allreduce_grad(hvd):
    n = hvd.size()
    for op, factor in ((hvd.Sum, n), (hvd.Average, 1)):
        x = rank_values(hvd.rank(), (5,), torch.float64).requires_grad_()
        y = hvd.allreduce(x, op=op)
        # Every rank weighs the output with its own rank + 1.
        (y * (hvd.rank() + 1)).sum().backward()
        weights = sum(r + 1 for r in range(n))
        expected = torch.full((5,), float(weights) * factor / n, dtype=torch.float64)
        assert torch.allclose(x.grad, expected)


def test_grouped_allreduce_grad(hvd):
    xs = [torch.ones(3, dtype=torch.float64, requires_grad=True) for _ in range(2)]
    ys = hvd.grouped_allreduce(xs, op=hvd.Sum)
    (ys[0].sum() + 2 * ys[1].sum()).backward()
    assert torch.equal(xs[0].grad, torch.full((3,), float(hvd.size())))
    assert torch.equal(xs[1].grad, torch.full((3,), 2.0 * hvd.size()))


def test_allgather_grad(hvd):
    n, r = hvd.size(), hvd.rank()
    x = torch.ones(r + 1, 2, dtype=torch.float64, requires_grad=True)
    y = hvd.allgather(x)
    rows = [q + 1 for q in range(n)]
    grad_y = torch.cat([torch.full((rows[q], 2), float(q)) for q in range(n)]).double()
    y.backward(grad_y)
    assert torch.equal(x.grad, torch.full((r + 1, 2), float(r)))


def test_broadcast_grad(hvd):
    root = hvd.size() - 1
    x = torch.full((3,), float(hvd.rank()), dtype=torch.float64, requires_grad=True)
    y = hvd.broadcast(x, root_rank=root)
    assert torch.equal(y.detach(), torch.full((3,), float(root), dtype=torch.float64))
    (y * 2).sum().backward()
    expected = 2.0 if hvd.rank() == root else 0.0
    assert torch.equal(x.grad, torch.full((3,), expected, dtype=torch.float64))


def test_alltoall_grad(hvd):
    n = hvd.size()
    x = torch.arange(2 * n, dtype=torch.float64).requires_grad_()
    y = hvd.alltoall(x)
    (y * torch.arange(2 * n, dtype=torch.float64)).sum().backward()
    # y[2p + i] came from rank p's x[2 * rank + i]; so x[2q + i] here went to rank q, where
    # it was weighted by 2 * rank + i.
    r = hvd.rank()
    expected = torch.tensor([2 * r + i for _q in range(n) for i in range(2)],
                            dtype=torch.float64)
    assert torch.equal(x.grad, expected)


def test_reducescatter_grad(hvd):
    # Horovod's convention: Sum's gradient is the gathered gradient times the set size,
    # Average's the gathered gradient; both times the prescale and postscale factors.
    n = hvd.size()
    cases = ((hvd.Sum, 1.0, 1.0, n), (hvd.Average, 1.0, 1.0, 1),
             (hvd.Sum, 2.0, 3.0, 6 * n), (hvd.Average, 2.0, 3.0, 6))
    for op, pre, post, factor in cases:
        x = torch.ones(2 * n, dtype=torch.float64, requires_grad=True)
        y = hvd.reducescatter(x, op=op, prescale_factor=pre, postscale_factor=post)
        # Rank q weighs its rows (2 of them) with q + 1; the gradient gathers every rank's.
        (y * (hvd.rank() + 1)).sum().backward()
        expected = torch.tensor([q + 1.0 for q in range(n) for _ in range(2)],
                                dtype=torch.float64) * factor
        assert torch.equal(x.grad, expected), (op, pre, post)


def test_grouped_reducescatter_grad(hvd):
    n = hvd.size()
    xs = [torch.ones(n, 2, dtype=torch.float64, requires_grad=True),
          torch.ones(2 * n, dtype=torch.float64, requires_grad=True)]
    ys = hvd.grouped_reducescatter(xs, op=hvd.Sum, postscale_factor=0.5)
    assert torch.equal(ys[1].detach(), torch.full((2,), 0.5 * n, dtype=torch.float64))
    (ys[0].sum() + 3 * ys[1].sum()).backward()
    assert torch.equal(xs[0].grad, torch.full((n, 2), 0.5 * n, dtype=torch.float64))
    assert torch.equal(xs[1].grad, torch.full((2 * n,), 1.5 * n, dtype=torch.float64))
    xs = [torch.ones(n, dtype=torch.float64, requires_grad=True)]
    hvd.grouped_reducescatter(xs, op=hvd.Average)[0].sum().backward()
    assert torch.equal(xs[0].grad, torch.ones(n, dtype=torch.float64))


def test_broadcast_grad_in_process_set(hvd):
    # root_rank is a global rank; the set leaves rank 0 out so set and global ranks differ.
    others = hvd.add_process_set([r for r in range(1, hvd.size())])
    try:
        if others.included():
            root = hvd.size() - 1
            x = torch.full((3,), float(hvd.rank()), dtype=torch.float64, requires_grad=True)
            y = hvd.broadcast(x, root_rank=root, process_set=others)
            assert torch.equal(y.detach(), torch.full((3,), float(root), dtype=torch.float64))
            # Rank r weighs the output with r; the root gets the average over the set.
            (y * hvd.rank()).sum().backward()
            average = sum(range(1, hvd.size())) / others.size()
            expected = average if hvd.rank() == root else 0.0
            assert torch.equal(x.grad, torch.full((3,), expected, dtype=torch.float64))
    finally:
        hvd.remove_process_set(others)
