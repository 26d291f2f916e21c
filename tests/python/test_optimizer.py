"""DistributedOptimizer against a single process training on the concatenated batch."""

import copy
import time
import warnings

import pytest
import torch

BATCH = 4  # rows per rank per backward pass
STEPS = 5


def make_model(seed=7):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))


def global_batch(step, pass_index, world):
    gen = torch.Generator().manual_seed(10_000 + 100 * step + pass_index)
    x = torch.randn(world * BATCH, 8, generator=gen)
    y = torch.randn(world * BATCH, 3, generator=gen)
    return x, y


def loss_of(model, x, y):
    return torch.nn.functional.mse_loss(model(x), y)


def train_reference(make_opt, world, passes=1, steps=STEPS):
    model = make_model()
    opt = make_opt(model)
    for step in range(steps):
        opt.zero_grad()
        for k in range(passes):
            x, y = global_batch(step, k, world)
            loss_of(model, x, y).backward()
        opt.step()
    return model


def train_distributed(hvd, make_opt, passes=1, steps=STEPS, **kwargs):
    model = make_model()
    opt = hvd.DistributedOptimizer(make_opt(model), named_parameters=model.named_parameters(),
                                   backward_passes_per_step=passes, **kwargs)
    rows = slice(hvd.rank() * BATCH, (hvd.rank() + 1) * BATCH)
    for step in range(steps):
        opt.zero_grad()
        for k in range(passes):
            x, y = global_batch(step, k, hvd.size())
            loss_of(model, x[rows], y[rows]).backward()
        opt.step()
    return model, opt


def assert_same_params(model, reference, **tol):
    for (name, p), q in zip(model.named_parameters(), reference.parameters()):
        assert torch.allclose(p, q, **tol), f"{name}: max diff {(p - q).abs().max().item()}"


OPTIMIZERS = {
    "sgd_momentum": lambda m: torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9),
    "adam": lambda m: torch.optim.Adam(m.parameters(), lr=0.01),
}


@pytest.mark.parametrize("which", sorted(OPTIMIZERS))
def test_matches_single_process_on_concatenated_batch(hvd, which):
    model, _ = train_distributed(hvd, OPTIMIZERS[which])
    assert_same_params(model, train_reference(OPTIMIZERS[which], hvd.size()),
                       rtol=1e-5, atol=1e-6)
    # ... and every rank holds the same parameters.
    for name, p in model.named_parameters():
        gathered = hvd.allgather(p.detach().unsqueeze(0), name=f"check.{which}.{name}")
        assert all(torch.equal(g, gathered[0]) for g in gathered), name


def test_backward_passes_per_step(hvd):
    make = OPTIMIZERS["sgd_momentum"]
    model, _ = train_distributed(hvd, make, passes=2)
    assert_same_params(model, train_reference(make, hvd.size(), passes=2), rtol=1e-5, atol=1e-6)


def test_gradient_predivide_factor(hvd):
    make = OPTIMIZERS["sgd_momentum"]
    model, _ = train_distributed(hvd, make, gradient_predivide_factor=2.0)
    assert_same_params(model, train_reference(make, hvd.size()), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("compression", ["fp16", "bf16"])
def test_compression_stays_close(hvd, compression):
    make = lambda m: torch.optim.SGD(m.parameters(), lr=0.1)  # noqa: E731
    model, _ = train_distributed(hvd, make, steps=2,
                                 compression=getattr(hvd.Compression, compression))
    tol = 2e-3 if compression == "fp16" else 2e-2
    assert_same_params(model, train_reference(make, hvd.size(), steps=2), rtol=0, atol=tol)


def test_grouped_gradients(hvd):
    make = OPTIMIZERS["sgd_momentum"]
    model, _ = train_distributed(hvd, make, groups=2)
    assert_same_params(model, train_reference(make, hvd.size()), rtol=1e-5, atol=1e-6)


def test_num_groups_is_horovods_deprecated_groups(hvd):
    """Horovod's signature, in its order: the 7th argument is num_groups (deprecated, an integer
    groups), then groups, sparse_as_dense, process_set."""
    make = OPTIMIZERS["sgd_momentum"]
    with pytest.warns(DeprecationWarning, match="num_groups"):
        model, opt = train_distributed(hvd, make, num_groups=2)
    assert len(set(opt._groups.values())) == 2
    assert_same_params(model, train_reference(make, hvd.size()), rtol=1e-5, atol=1e-6)
    other = make_model()
    with pytest.warns(DeprecationWarning):
        positional = hvd.DistributedOptimizer(make(other), other.named_parameters(),
                                              hvd.Compression.none, 1, hvd.Average, 1.0, 3)
    assert len(set(positional._groups.values())) == 3
    assert not hvd.DistributedOptimizer(make(other), other.named_parameters(), groups=0)._groups


def test_set_backward_passes_per_step(hvd):
    """Horovod's set_backward_passes_per_step: 2 passes per step from then on."""
    make = OPTIMIZERS["sgd_momentum"]
    model = make_model()
    opt = hvd.DistributedOptimizer(make(model), named_parameters=model.named_parameters())
    opt.set_backward_passes_per_step(2)
    assert opt.backward_passes_per_step == 2
    rows = slice(hvd.rank() * BATCH, (hvd.rank() + 1) * BATCH)
    for step in range(STEPS):
        opt.zero_grad()
        for k in range(2):
            x, y = global_batch(step, k, hvd.size())
            loss_of(model, x[rows], y[rows]).backward()
        opt.step()
    assert_same_params(model, train_reference(make, hvd.size(), passes=2), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="must be >= 1"):
        opt.set_backward_passes_per_step(0)


def test_parameter_without_gradient_does_not_hang(hvd):
    torch.manual_seed(3)
    a, b = torch.nn.Linear(4, 2), torch.nn.Linear(4, 2)
    ref_b = copy.deepcopy(b)
    params = list(a.named_parameters(prefix="a")) + list(b.named_parameters(prefix="b"))
    opt = hvd.DistributedOptimizer(
        torch.optim.SGD([p for _, p in params], lr=1.0), named_parameters=params)
    x = torch.ones(3, 4)
    out = a(x) + (b(x) if hvd.rank() == 0 else 0)
    out.sum().backward()
    opt.step()
    # Only rank 0 computed b's gradient; the others contributed zeros to the average.
    ref_b(x).sum().backward()
    expected = ref_b.weight.detach() - ref_b.weight.grad / hvd.size()
    assert torch.allclose(b.weight.detach(), expected)


def test_unnamed_parameters_do_not_clash_with_unnamed_ops(hvd):
    """Without named_parameters, gradient i was named `allreduce.noname.<i>`, the name the next
    unnamed op can get: an unnamed allreduce (a loss average) enqueued while that gradient was
    in flight failed with 'an op with this name is already in flight'. Rank 1 starts late, so
    rank 0's gradients are still in flight when it enqueues."""
    from runrun.common import names

    next_unnamed = int(names.op_name("allreduce", None).rsplit(".", 1)[1]) + 1
    params = torch.nn.ParameterList(torch.nn.Parameter(torch.ones(2))
                                    for _ in range(next_unnamed + 1))
    opt = hvd.DistributedOptimizer(torch.optim.SGD(params, lr=0.5))
    if hvd.rank() == 1:
        time.sleep(0.5)
    sum(p.sum() * (hvd.rank() + 1) for p in params).backward()
    total = hvd.allreduce(torch.tensor([1.0]), op=hvd.Sum)  # allreduce.noname.<next_unnamed>
    opt.step()
    assert total.item() == hvd.size()
    mean_scale = sum(range(1, hvd.size() + 1)) / hvd.size()
    assert torch.equal(params[next_unnamed].detach(), torch.full((2,), 1.0 - 0.5 * mean_scale))


def test_zero_grad_before_step_is_refused(hvd):
    model = make_model()
    opt = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1),
                                   named_parameters=model.named_parameters())
    x, y = global_batch(0, 0, hvd.size())
    loss_of(model, x, y).backward()
    with pytest.raises(AssertionError, match="zero_grad"):
        opt.zero_grad()
    opt.step()
    opt.zero_grad()


def test_synchronize_then_skip_synchronize(hvd):
    make = OPTIMIZERS["sgd_momentum"]
    model = make_model()
    opt = hvd.DistributedOptimizer(make(model), named_parameters=model.named_parameters())
    rows = slice(hvd.rank() * BATCH, (hvd.rank() + 1) * BATCH)
    for step in range(STEPS):
        opt.zero_grad()
        x, y = global_batch(step, 0, hvd.size())
        loss_of(model, x[rows], y[rows]).backward()
        opt.synchronize()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1e9)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with opt.skip_synchronize():
                opt.step()
    assert_same_params(model, train_reference(make, hvd.size()), rtol=1e-5, atol=1e-6)


def test_sparse_allreduce_async(hvd):
    n, r = hvd.size(), hvd.rank()
    # Rank r holds 2 at row r and 1 at row r + 1 (overlapping rows across ranks).
    indices = torch.tensor([[r, r + 1], [0, 1]])
    sparse = torch.sparse_coo_tensor(indices, torch.tensor([2.0, 1.0]), (n + 1, 2),
                                     check_invariants=True)
    dense_sum = torch.zeros(n + 1, 2)
    for q in range(n):
        dense_sum[q, 0] += 2.0
        dense_sum[q + 1, 1] += 1.0
    handle = hvd.sparse_allreduce_async(sparse, name="sparse.sum", op=hvd.Sum)
    summed = hvd.synchronize(handle)
    assert summed.is_sparse and torch.equal(summed.to_dense(), dense_sum)
    # Horovod's handles of sparse allreduces are callables.
    averaged = hvd.sparse_allreduce_async(sparse, "sparse.avg", hvd.Average)()
    assert torch.allclose(averaged.to_dense(), dense_sum / n)


def embedding_model():
    torch.manual_seed(11)
    return torch.nn.Sequential(torch.nn.Embedding(10, 3, sparse=True), torch.nn.Linear(3, 1))


def train_embedding(hvd, ranks, **kwargs):
    """Two SGD steps on token ids that depend on the rank; `ranks` lists the ranks whose batches
    a reference trains on (the distributed run trains on this rank's batch only)."""
    model = embedding_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    if hvd is not None:
        opt = hvd.DistributedOptimizer(opt, named_parameters=model.named_parameters(),
                                       **kwargs)
    for step in range(2):
        opt.zero_grad()
        losses = [model(torch.tensor([q, q + step, 9])).sum() for q in ranks]
        (sum(losses) / len(losses)).backward()
        opt.step()
    return model


@pytest.mark.parametrize("sparse_as_dense", [False, True])
def test_sparse_gradients(hvd, sparse_as_dense):
    model = train_embedding(hvd, [hvd.rank()], sparse_as_dense=sparse_as_dense)
    reference = train_embedding(None, list(range(hvd.size())))
    assert_same_params(model, reference, rtol=1e-5, atol=1e-6)
    # The optimizer gets a sparse gradient either way, as in Horovod (sparse_as_dense only
    # changes how it travels).
    assert model[0].weight.grad.is_sparse


class TwoEmbeddings(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(5)
        self.words = torch.nn.Embedding(12, 3, sparse=True)
        self.tags = torch.nn.Embedding(6, 2, sparse=True)

    def loss(self, words, tags):
        loss = (self.words(words) ** 2).sum()
        return loss + (self.tags(tags) ** 2).sum() if tags is not None else loss


def sparse_adam_batch(step, r):
    """Rank r's token ids at `step`: overlapping across ranks, with repeats. `tags` is used by
    every rank at step 0, by rank 0 alone at step 1, by nobody at step 2."""
    words = torch.tensor([r, r + 1, 2 * r + step, 7, 7])
    tags = None if step == 2 or (step == 1 and r != 0) else torch.tensor([r % 6, (step + 3) % 6])
    return words, tags


def train_sparse_adam(hvd, size, **kwargs):
    """SparseAdam through a DistributedOptimizer on this rank's batches, or (hvd None) in one
    process on the batches of all `size` ranks, the loss averaged over them."""
    model = TwoEmbeddings()
    opt = torch.optim.SparseAdam(model.parameters(), lr=0.05)
    if hvd is not None:
        opt = hvd.DistributedOptimizer(opt, named_parameters=model.named_parameters(), **kwargs)
    for step in range(3):
        opt.zero_grad()
        ranks = [hvd.rank()] if hvd is not None else range(size)
        losses = [model.loss(*sparse_adam_batch(step, r)) for r in ranks]
        (sum(losses) / len(losses)).backward()
        opt.step()
        if hvd is not None:
            # SparseAdam takes only sparse gradients; where no rank had one it gets none.
            assert model.words.weight.grad.is_sparse
            assert (model.tags.weight.grad is None) == (step == 2)
    return model


@pytest.mark.parametrize("sparse_as_dense", [False, True])
def test_sparse_adam_trains_like_one_process(hvd, sparse_as_dense):
    # nn.Embedding(sparse=True) + SparseAdam, each rank with other indices, a rank or all ranks
    # without a gradient for one embedding in some steps: every rank ends with the weights of
    # one process training on all ranks' batches.
    model = train_sparse_adam(hvd, hvd.size(), sparse_as_dense=sparse_as_dense)
    assert_same_params(model, train_sparse_adam(None, hvd.size()), rtol=1e-5, atol=1e-6)


def test_broadcast_optimizer_state_of_a_new_sparse_adam(hvd):
    # Horovod builds an empty state with zero gradients, sparse ones for SparseAdam.
    model = TwoEmbeddings()
    opt = hvd.DistributedOptimizer(torch.optim.SparseAdam(model.parameters(), lr=0.05),
                                   named_parameters=model.named_parameters())
    hvd.broadcast_optimizer_state(opt, root_rank=0)
    assert sorted(opt.state_dict()["state"]) == [0, 1]
    opt.zero_grad()
    model.loss(*sparse_adam_batch(0, hvd.rank())).backward()
    opt.step()


def test_sparse_gradients_in_groups(hvd):
    model = train_embedding(hvd, [hvd.rank()], groups=1)
    assert_same_params(model, train_embedding(None, list(range(hvd.size()))),
                       rtol=1e-5, atol=1e-6)
