"""DistributedOptimizer(double_buffering=True) against one-step-stale SGD computed in a single
process on the concatenated batch (issue 15, point 1)."""

import pytest
import torch

BATCH = 4  # rows per rank per backward pass
STEPS = 5


def make_model(seed=11):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(6, 12), torch.nn.Tanh(), torch.nn.Linear(12, 2))


def global_batch(step, pass_index, world):
    gen = torch.Generator().manual_seed(20_000 + 100 * step + pass_index)
    x = torch.randn(world * BATCH, 6, generator=gen)
    return x, torch.randn(world * BATCH, 2, generator=gen)


def loss_of(model, x, y):
    return torch.nn.functional.mse_loss(model(x), y)


def make_sgd(model):
    return torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)


def snapshot(model):
    return [p.detach().clone() for p in model.parameters()]


def stale_reference(world, passes=1, steps=STEPS):
    """Parameters after each step and after the final flush: step t applies step t-1's
    gradient of the loss over the whole (concatenated) batch; the first step applies none."""
    model = make_model()
    opt = make_sgd(model)
    params = list(model.parameters())
    trajectory, pending = [], None
    for step in range(steps):
        opt.zero_grad()
        for k in range(passes):
            loss_of(model, *global_batch(step, k, world)).backward()
        current = [p.grad.clone() for p in params]
        if pending is not None:
            for p, g in zip(params, pending):
                p.grad = g
            opt.step()
        pending = current
        trajectory.append(snapshot(model))
    for p, g in zip(params, pending):
        p.grad = g
    opt.step()
    trajectory.append(snapshot(model))
    return trajectory


def distributed(hvd, passes=1, steps=STEPS, **kwargs):
    model = make_model()
    opt = hvd.DistributedOptimizer(make_sgd(model), named_parameters=model.named_parameters(),
                                   backward_passes_per_step=passes, double_buffering=True,
                                   **kwargs)
    rows = slice(hvd.rank() * BATCH, (hvd.rank() + 1) * BATCH)
    trajectory = []
    for step in range(steps):
        opt.zero_grad()
        for k in range(passes):
            x, y = global_batch(step, k, hvd.size())
            loss_of(model, x[rows], y[rows]).backward()
        opt.step()
        trajectory.append(snapshot(model))
    assert opt.has_pending_gradients
    assert opt.flush() is True
    assert not opt.has_pending_gradients
    assert opt.flush() is False  # nothing left
    trajectory.append(snapshot(model))
    return trajectory, opt


def assert_same_trajectory(got, want, **tol):
    assert len(got) == len(want)
    for step, (a, b) in enumerate(zip(got, want)):
        for i, (p, q) in enumerate(zip(a, b)):
            assert torch.allclose(p, q, **tol), (
                f"step {step}, parameter {i}: max diff {(p - q).abs().max().item()}")


@pytest.mark.parametrize("passes", [1, 2])
def test_trajectory_is_one_step_stale_sgd(hvd, passes):
    got, _ = distributed(hvd, passes=passes)
    assert_same_trajectory(got, stale_reference(hvd.size(), passes), rtol=1e-5, atol=1e-6)
    # The first step applied nothing.
    assert_same_trajectory(got[:1], [snapshot(make_model())], rtol=0, atol=0)


@pytest.mark.parametrize("compression,tol", [("fp16", 2e-3), ("bf16", 2e-2)])
def test_trajectory_with_compression(hvd, compression, tol):
    got, _ = distributed(hvd, passes=2, steps=3,
                         compression=getattr(hvd.Compression, compression))
    assert_same_trajectory(got, stale_reference(hvd.size(), 2, steps=3), rtol=0, atol=tol)


def test_every_rank_ends_equal(hvd):
    got, _ = distributed(hvd, steps=3)
    for i, p in enumerate(got[-1]):
        gathered = hvd.allgather(p.unsqueeze(0), name=f"db.equal.{i}")
        assert all(torch.equal(g, gathered[0]) for g in gathered), i


def test_gradient_of_this_step_is_not_the_reduced_buffer(hvd):
    """zero_grad(set_to_none=False) after step() must not touch the tensor being reduced."""
    model = make_model()
    opt = hvd.DistributedOptimizer(make_sgd(model), named_parameters=model.named_parameters(),
                                   double_buffering=True)
    rows = slice(hvd.rank() * BATCH, (hvd.rank() + 1) * BATCH)
    for step in range(3):
        x, y = global_batch(step, 0, hvd.size())
        loss_of(model, x[rows], y[rows]).backward()
        opt.step()
        opt.zero_grad(set_to_none=False)
    opt.flush()
    ref = stale_reference(hvd.size(), steps=3)
    assert_same_trajectory([snapshot(model)], ref[-1:], rtol=1e-5, atol=1e-6)


def test_misuse_is_refused(hvd):
    model = make_model()
    opt = hvd.DistributedOptimizer(make_sgd(model), named_parameters=model.named_parameters(),
                                   double_buffering=True)
    with pytest.raises(hvd.InvalidArgumentError, match="flush"):
        opt.synchronize()
    with pytest.raises(hvd.InvalidArgumentError, match="closure"):
        opt.step(lambda: 0.0)
    with pytest.raises(hvd.InvalidArgumentError, match="groups"):
        hvd.DistributedOptimizer(make_sgd(make_model()), double_buffering=True, groups=2)
    loss_of(model, *global_batch(0, 0, 1)).backward()
    with pytest.raises(AssertionError, match="backward_passes_per_step"):
        loss_of(model, *global_batch(0, 0, 1)).backward()
    opt.zero_grad()
