"""Broadcast of parameters, optimizer state and objects; the training-loop callbacks."""

import torch

from runrun.torch import callbacks


def ranked_model(hvd):
    torch.manual_seed(100 + hvd.rank())  # different on every rank on purpose
    return torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3))


def root_model():
    torch.manual_seed(100)  # what rank 0 built
    return torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3))


def assert_state_equal(a, b):
    for (k, v), (k2, v2) in zip(sorted(a.items()), sorted(b.items())):
        assert k == k2 and torch.equal(v, v2), k


def test_broadcast_parameters_state_dict_and_named(hvd):
    model = ranked_model(hvd)
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    assert_state_equal(model.state_dict(), root_model().state_dict())
    model = ranked_model(hvd)
    hvd.broadcast_parameters(model.named_parameters(), root_rank=0)
    for p, q in zip(model.parameters(), root_model().parameters()):
        assert torch.equal(p, q)


def adam_after_steps(model, steps, lr):
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    for i in range(steps):
        opt.zero_grad()
        model(torch.ones(2, 4) * (i + 1)).sum().backward()
        opt.step()
    return opt


def test_broadcast_optimizer_state_after_steps(hvd):
    model = root_model()
    # Rank 0 took 3 steps with lr 0.1; the others 1 step with lr 0.5.
    opt = adam_after_steps(model, 3 if hvd.rank() == 0 else 1, 0.1 if hvd.rank() == 0 else 0.5)
    hvd.broadcast_optimizer_state(opt, root_rank=0)
    expected = adam_after_steps(root_model(), 3, 0.1).state_dict()
    got = opt.state_dict()
    assert got["param_groups"] == expected["param_groups"]
    for pid, entries in expected["state"].items():
        for key, value in entries.items():
            assert torch.equal(got["state"][pid][key], value), (pid, key)


def test_broadcast_optimizer_state_before_first_step(hvd):
    model = root_model()
    before = [p.detach().clone() for p in model.parameters()]
    lr = 0.1 if hvd.rank() == 0 else 0.7
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    hvd.broadcast_optimizer_state(opt, root_rank=0)
    assert opt.param_groups[0]["lr"] == 0.1
    # As Horovod's: the empty state was built by a step with zero gradients (zero momentum
    # buffers; no weight decay here, so no parameter moved).
    state = opt.state_dict()["state"]
    assert sorted(state) == list(range(len(before)))
    assert all(torch.equal(s["momentum_buffer"], torch.zeros_like(b))
               for s, b in zip(state.values(), before))
    assert all(torch.equal(p, b) for p, b in zip(model.parameters(), before))
    # It also works through a DistributedOptimizer.
    dist = hvd.DistributedOptimizer(opt, named_parameters=model.named_parameters())
    hvd.broadcast_optimizer_state(dist, root_rank=0)


def test_broadcast_and_allgather_object(hvd):
    obj = {"rank": hvd.rank(), "payload": list(range(hvd.rank() + 3))}
    assert hvd.broadcast_object(obj, root_rank=0) == {"rank": 0, "payload": [0, 1, 2]}
    gathered = hvd.allgather_object(obj)
    assert gathered == [{"rank": r, "payload": list(range(r + 3))} for r in range(hvd.size())]


def test_lambdas_and_local_classes_travel_as_objects(hvd):
    """Horovod pickles objects with cloudpickle: a lambda and a class defined in a function
    (which pickle refuses) travel too, in broadcast_object, allgather_object and the elastic
    states' object broadcast."""
    from runrun.elastic.objects import broadcast_object as elastic_broadcast_object

    class Local:
        def __init__(self, value):
            self.value = value

    scale = 1 + hvd.rank()
    got = hvd.broadcast_object(lambda x: x * scale, root_rank=0)
    assert got(3) == 3
    gathered = hvd.allgather_object(Local(hvd.rank()))
    assert [g.value for g in gathered] == list(range(hvd.size()))
    assert elastic_broadcast_object(lambda: scale, root_rank=0)() == 1


class NoneStateSGD(torch.optim.SGD):
    """Keeps None entries in its state, as optimizers may (and torch's own did)."""

    def step(self, closure=None):
        loss = super().step(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    self.state[p]["unset"] = None
        return loss


def test_broadcast_optimizer_state_with_none_entries_and_unused_params(hvd):
    # Rank 0 (the root) trained only the first layer: the second has no gradient and no state
    # there; the other ranks trained both. Every rank ends with the root's state.
    model = root_model()
    opt = NoneStateSGD(model.parameters(), lr=0.1, momentum=0.9)
    opt.zero_grad()
    hidden = model[0](torch.ones(2, 4))
    (hidden if hvd.rank() == 0 else model[1](hidden)).sum().backward()
    opt.step()
    root_state = hvd.broadcast_object(opt.state_dict()["state"], root_rank=0)
    hvd.broadcast_optimizer_state(opt, root_rank=0)
    got = opt.state_dict()["state"]
    assert sorted(got) == sorted(root_state) == [0, 1]
    for pid, entries in root_state.items():
        assert got[pid]["unset"] is None
        assert torch.equal(got[pid]["momentum_buffer"], entries["momentum_buffer"])


class FrozenIndexModel(torch.nn.Module):
    """Horovod's no-gradient case: an integer parameter that cannot require a gradient, one
    that does, and a layer the forward pass never uses."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(7)  # the same on every rank
        self.index = torch.nn.Parameter(torch.tensor([1, 3]), requires_grad=False)
        self.weight = torch.nn.Parameter(torch.rand(4))
        self.unused = torch.nn.Linear(2, 2)

    def forward(self, x):
        return torch.index_select(self.weight, 0, self.index) * x


def test_broadcast_optimizer_state_of_a_new_optimizer_with_frozen_and_unused_params(hvd):
    model = FrozenIndexModel()
    opt = torch.optim.SGD(model.parameters(), lr=0.001, weight_decay=1e-6, momentum=0.9,
                          nesterov=True)
    opt = hvd.DistributedOptimizer(opt, named_parameters=model.named_parameters())
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    hvd.broadcast_optimizer_state(opt, root_rank=0)
    # Horovod built the state with zero gradients: every trainable parameter has a .grad
    # (scripts broadcast or allreduce it) and a momentum buffer; the frozen one has neither.
    params = opt.param_groups[0]["params"]
    assert params[0].grad is None and 0 not in opt.state_dict()["state"]
    grad = params[1].grad
    assert torch.equal(hvd.broadcast(grad, root_rank=0), grad)
    assert sorted(opt.state_dict()["state"]) == [1, 2, 3]
    # Training goes on as usual, the unused layer included (it gets zero gradients).
    opt.zero_grad()
    model(torch.ones(2) * (hvd.rank() + 1)).sum().backward()
    opt.step()
    gathered = hvd.allgather(model.weight.detach().unsqueeze(0))
    assert all(torch.equal(row, gathered[0]) for row in gathered)


def test_building_an_empty_state_changes_no_parameter(hvd):
    # Rank 0 resumed (it has a state); the others start with an empty one, which they build
    # with a zero-gradient step before receiving rank 0's. AdamW's weight decay would shrink
    # their weights in that step (Horovod's does): they must stay equal to rank 0's.
    model = root_model()
    opt = torch.optim.AdamW(model.parameters(), lr=0.1, weight_decay=0.5)
    if hvd.rank() == 0:
        model(torch.ones(2, 4)).sum().backward()
        opt.step()
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    before = [p.detach().clone() for p in model.parameters()]
    hvd.broadcast_optimizer_state(opt, root_rank=0)
    assert all(torch.equal(p, b) for p, b in zip(model.parameters(), before))
    assert sorted(opt.state_dict()["state"]) == list(range(len(before)))


def test_state_broadcasts_in_a_process_set(hvd):
    # root_rank is a global rank; the set leaves rank 0 out so set and global ranks differ.
    others = hvd.add_process_set(list(range(1, hvd.size())))
    try:
        if others.included():
            root = hvd.size() - 1
            obj = {"rank": hvd.rank()}
            assert hvd.broadcast_object(obj, root, process_set=others) == {"rank": root}
            assert hvd.allgather_object(hvd.rank(), process_set=others) == \
                list(range(1, hvd.size()))
            model = root_model()
            opt = torch.optim.SGD(model.parameters(), lr=0.1 * hvd.rank(), momentum=0.9)
            hvd.broadcast_optimizer_state(opt, root, process_set=others)
            assert opt.param_groups[0]["lr"] == 0.1 * root
    finally:
        hvd.remove_process_set(others)


def test_callbacks_in_a_plain_loop(hvd):
    model = ranked_model(hvd)
    opt = torch.optim.SGD(model.parameters(), lr=0.4, momentum=0.5)
    steps_per_epoch = 4
    cbs = callbacks.CallbackList([
        callbacks.BroadcastGlobalVariablesCallback(root_rank=0),
        callbacks.MetricAverageCallback(),
        callbacks.LearningRateWarmupCallback(warmup_epochs=2, steps_per_epoch=steps_per_epoch),
    ])
    cbs.on_train_begin(model, opt)
    assert_state_equal(model.state_dict(), root_model().state_dict())
    lrs = []
    for epoch in range(3):
        cbs.on_epoch_begin(epoch)
        for batch in range(steps_per_epoch):
            cbs.on_batch_begin(batch)
            lrs.append(opt.param_groups[0]["lr"])
            cbs.on_batch_end(batch)
        logs = cbs.on_epoch_end(epoch, {"loss": float(hvd.rank()), "name": "x"})
        assert logs["loss"] == sum(range(hvd.size())) / hvd.size() and logs["name"] == "x"
    n = hvd.size()
    assert abs(lrs[0] - 0.4 / n) < 1e-12
    assert abs(lrs[-1] - 0.4) < 1e-12
    assert all(a <= b + 1e-12 for a, b in zip(lrs, lrs[1:]))
    assert opt.param_groups[0]["momentum"] == 0.5


def test_sync_batch_norm_matches_global_batch(hvd):
    n, r = hvd.size(), hvd.rank()
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(n * 3, 2, 4, generator=gen, dtype=torch.float64)
    bn = hvd.SyncBatchNorm(2).double()
    ref = torch.nn.BatchNorm1d(2).double()
    local = x[r * 3:(r + 1) * 3].clone().requires_grad_()
    out = bn(local)
    full = x.clone().requires_grad_()
    ref_out = ref(full)
    assert torch.allclose(out, ref_out[r * 3:(r + 1) * 3], atol=1e-10)
    assert torch.allclose(bn.running_mean, ref.running_mean, atol=1e-12)
    assert torch.allclose(bn.running_var, ref.running_var, atol=1e-12)
    weight = torch.arange(x.numel(), dtype=torch.float64).view_as(x)
    (out * weight[r * 3:(r + 1) * 3]).sum().backward()
    (ref_out * weight).sum().backward()
    assert torch.allclose(local.grad, full.grad[r * 3:(r + 1) * 3], atol=1e-9)


def test_sync_batch_norm_half_input_keeps_float32_statistics(hvd):
    """float16 input with 80000 values per channel per rank: a float16 count or sum of squares
    would be inf. The statistics are float32 (as torch's BatchNorm's), the output float16."""
    n, r = hvd.size(), hvd.rank()
    gen = torch.Generator().manual_seed(6)
    x = torch.randn(n * 2, 3, 200, 200, generator=gen).half()
    bn = hvd.SyncBatchNorm(3)
    ref = torch.nn.BatchNorm2d(3)
    out = bn(x[r * 2:(r + 1) * 2])
    expected = ref(x.float())[r * 2:(r + 1) * 2]
    assert out.dtype == torch.float16
    assert torch.isfinite(out).all()
    assert torch.allclose(out.float(), expected, atol=1e-2)
    assert torch.allclose(bn.running_var, ref.running_var, atol=1e-4)


def test_torch_state_handles_every_module_and_optimizer(hvd):
    """Horovod's TorchState handles every Module and Optimizer keyword argument (a GAN's
    second pair), not only model= and optimizer=: kept by reference, synced from rank 0,
    committed and restored; assigning a new module makes the state follow it."""
    gen, disc = ranked_model(hvd), ranked_model(hvd)
    gen_opt = adam_after_steps(gen, 1 + hvd.rank(), 0.1)
    disc_opt = adam_after_steps(disc, 2, 0.1 * (1 + hvd.rank()))
    state = hvd.elastic.TorchState(model=gen, optimizer=gen_opt, disc=disc, disc_opt=disc_opt,
                                   epoch=hvd.rank())
    assert state.disc is disc and state.disc_opt is disc_opt
    state.sync()
    root_disc = root_model()
    root_disc_opt = adam_after_steps(root_disc, 2, 0.1)
    assert_state_equal(disc.state_dict(), root_disc.state_dict())
    assert disc_opt.state_dict()["param_groups"] == root_disc_opt.state_dict()["param_groups"]
    assert state.epoch == 0
    state.commit()
    committed = {k: v.clone() for k, v in disc.state_dict().items()}
    committed_lr = disc_opt.param_groups[0]["lr"]
    with torch.no_grad():
        for p in disc.parameters():
            p.add_(1.0)
    disc_opt.param_groups[0]["lr"] = 9.0
    state.restore()
    assert_state_equal(disc.state_dict(), committed)
    assert disc_opt.param_groups[0]["lr"] == committed_lr
    other = root_model()
    state.disc = other
    state.commit()
    with torch.no_grad():
        for p in other.parameters():
            p.mul_(0.0)
    state.restore()
    assert_state_equal(other.state_dict(), root_model().state_dict())
