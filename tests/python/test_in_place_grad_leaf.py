"""In-place collectives on a leaf tensor that requires grad (issue 36, point 8): refused as
torch refuses its own in-place ops on such a leaf (a RuntimeError, only while grad mode is
enabled), naming the op and the tensor and saying what to do; accepted under torch.no_grad()
with the exact result. broadcast_parameters, broadcast_optimizer_state and DistributedOptimizer
(which write parameters, optimizer state and gradients in place) are unaffected."""

import pytest
import torch

REFUSAL = (r"^{op} '{name}': a leaf tensor that requires grad is being used in an in-place "
           r"operation .*torch\.no_grad\(\).*out-of-place {out}$")


def leaf(hvd, values=(1.0, 2.0, 3.0)):
    return torch.tensor([v * (hvd.rank() + 1) for v in values], requires_grad=True)


def in_place_calls(hvd):
    """(op as named in the refusal, name, call(tensor) -> the reduced tensor) of every in-place
    entry point, sync and async."""
    return [
        ("allreduce_", "leaf.ar_", lambda t: hvd.allreduce_(t, name="leaf.ar_", op=hvd.Sum)),
        ("allreduce_", "leaf.ar_async_", lambda t: hvd.synchronize(
            hvd.allreduce_async_(t, name="leaf.ar_async_", op=hvd.Sum))),
        ("grouped_allreduce_", "leaf.gar_.0", lambda t: hvd.grouped_allreduce_(
            [t], name="leaf.gar_", op=hvd.Sum)[0]),
        ("grouped_allreduce_", "leaf.gar_async_.0", lambda t: hvd.synchronize(
            hvd.grouped_allreduce_async_([t], name="leaf.gar_async_", op=hvd.Sum))[0]),
        ("broadcast_", "leaf.bc_", lambda t: hvd.broadcast_(t, 0, name="leaf.bc_")),
        ("broadcast_", "leaf.bc_async_", lambda t: hvd.synchronize(
            hvd.broadcast_async_(t, 0, name="leaf.bc_async_"))),
    ]


def expected(hvd, op, values=(1.0, 2.0, 3.0)):
    n = hvd.size()
    factor = 1 if op == "broadcast_" else sum(range(1, n + 1))
    return [v * factor for v in values]


def test_refused_with_grad_enabled_as_torch_refuses(hvd):
    # torch's own rule, for reference: the same class.
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        leaf(hvd).add_(1.0)
    for op, name, call in in_place_calls(hvd):
        tensor = leaf(hvd)
        before = tensor.detach().clone()
        with pytest.raises(RuntimeError,
                           match=REFUSAL.format(op=op, name=name, out=op.rstrip("_"))) as e:
            call(tensor)
        assert isinstance(e.value, hvd.InvalidArgumentError)  # runrun's class too
        assert torch.equal(tensor.detach(), before)  # nothing written, nothing enqueued
    # A group with one such leaf among plain tensors is refused whole.
    with pytest.raises(RuntimeError, match=r"^grouped_allreduce_ 'leaf.mixed.1'"):
        hvd.grouped_allreduce_([torch.ones(2), leaf(hvd)], name="leaf.mixed", op=hvd.Sum)
    # The ranks are still in step.
    assert hvd.allreduce(torch.ones(1), op=hvd.Sum, name="leaf.after").item() == hvd.size()


def test_accepted_under_no_grad_with_the_exact_result(hvd):
    for op, name, call in in_place_calls(hvd):
        tensor = leaf(hvd)
        with torch.no_grad():
            out = call(tensor)
        assert out is tensor, op
        assert tensor.requires_grad and tensor.is_leaf and tensor.grad_fn is None
        assert tensor.detach().tolist() == expected(hvd, op), (op, name)


def test_accepted_where_torch_accepts_with_grad_enabled(hvd):
    """Torch refuses a leaf that requires grad only: a tensor that does not require grad,
    `.data` of a leaf, and a non-leaf (the output of an op) are written in place."""
    n = hvd.size()
    total = sum(range(1, n + 1))
    plain = torch.tensor([1.0, 2.0]) * (hvd.rank() + 1)
    assert hvd.allreduce_(plain, name="leaf.plain", op=hvd.Sum).tolist() == [total, 2 * total]
    param = leaf(hvd, (1.0, 2.0))
    hvd.allreduce_(param.data, name="leaf.data", op=hvd.Sum)
    assert param.detach().tolist() == [total, 2 * total] and param.requires_grad
    non_leaf = leaf(hvd, (1.0, 2.0)) * 1.0
    assert not non_leaf.is_leaf
    hvd.synchronize(hvd.allreduce_async_(non_leaf, name="leaf.non_leaf", op=hvd.Sum))
    assert non_leaf.detach().tolist() == [total, 2 * total]


def test_parameters_state_and_optimizer_unaffected(hvd):
    """broadcast_parameters and broadcast_optimizer_state write parameters and state that
    require grad, with grad mode enabled; DistributedOptimizer reduces gradients in place: all
    as before, with exact results."""
    r, n = hvd.rank(), hvd.size()
    assert torch.is_grad_enabled()
    model = torch.nn.Linear(2, 1, bias=False)
    with torch.no_grad():
        model.weight.fill_(float(r + 1))
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    assert model.weight.detach().tolist() == [[1.0, 1.0]]
    hvd.broadcast_parameters(dict(model.named_parameters()), root_rank=n - 1)
    assert model.weight.detach().tolist() == [[1.0, 1.0]] and model.weight.requires_grad

    opt = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9),
                                   named_parameters=model.named_parameters(), op=hvd.Sum)
    x = torch.tensor([[float(r + 1), 0.0]])
    opt.zero_grad()
    model(x).sum().backward()
    opt.step()
    total = float(sum(range(1, n + 1)))
    # Summed gradient [total, 0]; SGD: w - 0.5 * g.
    assert model.weight.detach().tolist() == [[1.0 - 0.5 * total, 1.0]]
    hvd.broadcast_optimizer_state(opt, root_rank=0)
    momentum = opt.state_dict()["state"][0]["momentum_buffer"]
    assert momentum.tolist() == [[total, 0.0]]
