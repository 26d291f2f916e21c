"""op=Adasum (Horovod's adaptive summation) from runrun.torch: the allreduce on inputs whose
Adasum is exact in every floating dtype, one set of coefficients per tensor of a group, the
errors Horovod raises, and DistributedOptimizer(op=Adasum) as Horovod's delta optimizer against
a numpy reference of the pairwise tree. The suite runs on 2 and 4 ranks (powers of two)."""

import numpy as np
import pytest
import torch

FLOAT_DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]


def adasum_pair(a, b):
    """Horovod's combination of two vectors (a coefficient is 1 below a squared norm of 1e-8)."""
    dot, aa, bb = float(np.sum(a * b)), float(np.sum(a * a)), float(np.sum(b * b))
    ca = 1.0 - dot / aa * 0.5 if aa >= 1e-8 else 1.0
    cb = 1.0 - dot / bb * 0.5 if bb >= 1e-8 else 1.0
    return ca * a + cb * b


def adasum_reference(vectors):
    """Rank 0 with 1, 2 with 3, ... then those results pairwise: Horovod's tree."""
    level = [np.asarray(v, dtype=np.float64) for v in vectors]
    while len(level) > 1:
        level = [adasum_pair(level[i], level[i + 1]) for i in range(0, len(level), 2)]
    return level[0]


def base(n):
    return torch.tensor([((5 * i + 1) % 9) - 4 for i in range(n)], dtype=torch.float64)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_allreduce_adasum_of_parallel_and_orthogonal_tensors_is_exact(hvd, dtype):
    """Parallel inputs 2^r * v combine to c * v with c the tree of the scalars (exact: every
    coefficient is a power of two or a small dyadic); inputs on disjoint elements to their sum.
    Grouped, each tensor has its own coefficients."""
    n, r = hvd.size(), hvd.rank()
    v = base(13)
    scale = float(adasum_reference([[2.0 ** k] for k in range(n)])[0])
    parallel = (v * 2.0 ** r).to(dtype)
    assert torch.equal(hvd.allreduce(parallel, op=hvd.Adasum), (v * scale).to(dtype))
    orthogonal = torch.where(torch.arange(13) % n == r, v, torch.zeros(13)).to(dtype)
    assert torch.equal(hvd.allreduce(orthogonal, op=hvd.Adasum), v.to(dtype))
    grouped = hvd.grouped_allreduce([orthogonal, parallel.reshape(13, 1)], op=hvd.Adasum)
    assert torch.equal(grouped[0], v.to(dtype))
    assert torch.equal(grouped[1], (v * scale).to(dtype).reshape(13, 1))
    in_place = parallel.clone()
    hvd.synchronize(hvd.allreduce_async_(in_place, op=hvd.Adasum))
    assert torch.equal(in_place, (v * scale).to(dtype))


def test_allreduce_adasum_matches_the_reference_on_random_values(hvd):
    """General inputs: float64 against the pairwise tree computed here from every rank's input,
    with postscale applied after the combination."""
    n, r = hvd.size(), hvd.rank()
    inputs = [torch.randn(1001, dtype=torch.float64, generator=torch.Generator().manual_seed(k))
              for k in range(n)]
    got = hvd.allreduce(inputs[r], op=hvd.Adasum, postscale_factor=0.5)
    np.testing.assert_allclose(got.numpy(), 0.5 * adasum_reference([t.numpy() for t in inputs]),
                               rtol=1e-12, atol=1e-12)


def test_adasum_errors_name_what_to_change(hvd):
    with pytest.raises(NotImplementedError, match="op=Adasum combines floating-point tensors.*"
                                                  "not int32; use sum or average"):
        hvd.allreduce(torch.ones(3, dtype=torch.int32), name="counts", op=hvd.Adasum)
    with pytest.raises(ValueError, match="reducescatter supports op=Average or op=Sum, got "
                                         "ADASUM"):
        hvd.reducescatter(torch.ones(4 * hvd.size()), op=hvd.Adasum)


def make_model():
    torch.manual_seed(7)
    layers = [torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2)]
    return torch.nn.Sequential(*layers).double()


def batch(rank, step):
    g = torch.Generator().manual_seed(100 * step + rank)
    return torch.randn(5, 3, dtype=torch.float64, generator=g)


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_distributed_optimizer_adasum_reduces_each_parameters_update(hvd, optimizer):
    """Horovod's delta optimizer: each rank runs the wrapped optimizer's update on its own
    gradients; the parameters become their value before the step plus the Adasum of every
    rank's update (the reference replays each rank's local update here)."""
    n, r = hvd.size(), hvd.rank()
    make_opt = {"sgd": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9),
                "adam": lambda ps: torch.optim.Adam(ps, lr=0.01)}[optimizer]
    model = make_model()
    opt = hvd.DistributedOptimizer(make_opt(model.parameters()),
                                   named_parameters=model.named_parameters(), op=hvd.Adasum)
    replicas = [make_model() for _ in range(n)]  # each rank's local optimizer, replayed here
    replica_opts = [make_opt(m.parameters()) for m in replicas]
    for step in range(3):
        start = [p.detach().clone() for p in model.parameters()]
        opt.zero_grad()
        model(batch(r, step)).pow(2).sum().backward()
        opt.step()
        updates = []
        for k, (m, o) in enumerate(zip(replicas, replica_opts)):
            for p, s in zip(m.parameters(), start):
                p.data.copy_(s)
            o.zero_grad()
            m(batch(k, step)).pow(2).sum().backward()
            o.step()
            updates.append([(p.detach() - s).numpy() for p, s in zip(m.parameters(), start)])
        for i, (p, s) in enumerate(zip(model.parameters(), start)):
            expected = s.numpy() + adasum_reference([u[i] for u in updates])
            np.testing.assert_allclose(p.detach().numpy(), expected, rtol=1e-10, atol=1e-12)
    assert [len(g["params"]) for g in opt.param_groups] == [4]  # the groups are restored


def test_distributed_optimizer_adasum_accumulates_and_updates_parameters_without_gradients(hvd):
    """backward_passes_per_step=2: the update runs on the gradients of both passes; a parameter
    no rank computed a gradient for is updated with a zero gradient (Horovod's zero-filled
    .grad), so weight decay still moves it, by the same delta on every rank."""
    n, r = hvd.size(), hvd.rank()
    model, unused = make_model(), torch.nn.Linear(2, 2).double()
    params = list(model.parameters()) + list(unused.parameters())
    opt = hvd.DistributedOptimizer(torch.optim.SGD(params, lr=0.1, weight_decay=0.5),
                                   op=hvd.Adasum, backward_passes_per_step=2)
    start = [p.detach().clone() for p in params]
    for step in range(2):
        model(batch(r, step)).pow(2).sum().backward()
    with pytest.raises(AssertionError, match="zero_grad"):
        opt.zero_grad()
    opt.step()
    updates = []
    for k in range(n):
        replica = make_model()
        for step in range(2):
            replica(batch(k, step)).pow(2).sum().backward()
        torch.optim.SGD(replica.parameters(), lr=0.1, weight_decay=0.5).step()
        updates.append([(p.detach() - s).numpy() for p, s in zip(replica.parameters(), start)])
    for i, (p, s) in enumerate(zip(model.parameters(), start)):
        np.testing.assert_allclose(p.detach().numpy(),
                                   s.numpy() + adasum_reference([u[i] for u in updates]),
                                   rtol=1e-10, atol=1e-12)
    for p, s in zip(unused.parameters(), start[len(updates[0]):]):
        np.testing.assert_allclose(p.detach().numpy(), s.numpy() * (1 - 0.1 * 0.5), rtol=1e-12)


def test_distributed_optimizer_adasum_arguments_as_horovods(hvd):
    """groups are ignored (Horovod ignores them; runrun warns), a predivide factor is Horovod's
    ValueError, synchronize() does nothing and entering skip_synchronize() raises."""
    model = make_model()
    with pytest.warns(UserWarning, match="groups are ignored"):
        hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1), op=hvd.Adasum,
                                 groups=2)
    with pytest.raises(ValueError, match="gradient_predivide_factor"):
        hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1), op=hvd.Adasum,
                                 gradient_predivide_factor=2.0)
    if hvd.size() == 4:  # a set of 3 ranks: refused when the optimizer is made, not after the
        three = hvd.add_process_set([0, 1, 2])  # first update ran
        try:
            with pytest.raises(NotImplementedError, match="power-of-two number of ranks"):
                hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1),
                                         op=hvd.Adasum, process_set=three)
        finally:
            hvd.remove_process_set(three)
    opt = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1), op=hvd.Adasum)
    skip = opt.skip_synchronize()  # as Horovod's: raises on entering, not on the call
    with pytest.raises(AssertionError, match="Skipping synchronization is not supported"):
        with skip:
            pass
    opt.synchronize()  # nothing to do: step() applies the deltas


def test_allreduce_adasum_is_differentiable_as_horovods(hvd):
    """The gradient of an Adasum allreduce is the Adasum of the incoming gradients."""
    n, r = hvd.size(), hvd.rank()
    x = (base(6) * 2.0 ** r).requires_grad_()
    y = hvd.allreduce(x, op=hvd.Adasum, name="adasum.grad")
    (y * (base(6) * 2.0 ** r)).sum().backward()
    scale = float(adasum_reference([[2.0 ** k] for k in range(n)])[0])
    assert torch.equal(x.grad, base(6) * scale)
