"""The training both engine suites check: a linear model trained with runrun.torch's
DistributedOptimizer, each rank on its share of a global batch, against one process trained on
the whole batch (equal shares: the average of the ranks' gradients is the global batch's).

Why: "training matches one process on the global batch" is the same check on Ray actors, Ray
Train workers, Spark tasks and driver processes. Every function imports what it uses, so it
runs wherever cloudpickle sends it. Thread-safety: none needed.
"""

STEPS = 4
GLOBAL_BATCH = 8
FEATURES = 3


def global_batch():
    import torch

    gen = torch.Generator().manual_seed(7)
    x = torch.randint(-4, 5, (GLOBAL_BATCH, FEATURES), generator=gen).double()
    y = x @ torch.tensor([[1.5], [-2.0], [0.5]], dtype=torch.double) + 0.25
    return x, y


def new_model():
    import torch

    torch.manual_seed(0)
    return torch.nn.Linear(FEATURES, 1).double()


def one_process_weights():
    """The reference: one process, the whole batch."""
    import torch

    x, y = global_batch()
    model = new_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(STEPS):
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    return [p.detach().flatten().tolist() for p in model.parameters()]


def train_rank(report=None):
    """One rank's training (hvd.init() as under Horovod); returns (rank, size, local_rank,
    local_size, cross_size, weights). `report(step, loss)` is called each step when given."""
    import torch

    import runrun.torch as hvd

    hvd.init()
    x, y = global_batch()
    share = GLOBAL_BATCH // hvd.size()
    mine = slice(hvd.rank() * share, (hvd.rank() + 1) * share)
    x, y = x[mine], y[mine]
    model = new_model()
    opt = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.01),
                                   named_parameters=model.named_parameters())
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    for step in range(STEPS):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        if report is not None:
            report(step, loss.item())
    weights = [p.detach().flatten().tolist() for p in model.parameters()]
    return (hvd.rank(), hvd.size(), hvd.local_rank(), hvd.local_size(), hvd.cross_size(),
            weights)


def assert_matches_one_process(weights, reference):
    for got, want in zip(weights, reference):
        assert len(got) == len(want)
        for a, b in zip(got, want):
            assert abs(a - b) < 1e-9, (weights, reference)
