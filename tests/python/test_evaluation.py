"""Multi-node evaluation (issue 15, point 3): ranks with different numbers of samples give the
metric of a single process over all samples."""

import pytest
import torch


def all_samples(size):
    """Rank r holds 2*r + 3 samples (all different counts)."""
    counts = [2 * r + 3 for r in range(size)]
    gen = torch.Generator().manual_seed(9)
    x = torch.randn(sum(counts), 5, generator=gen)
    y = torch.randint(0, 3, (sum(counts),), generator=gen)
    return x, y, counts


def my_slice(rank, counts):
    begin = sum(counts[:rank])
    return slice(begin, begin + counts[rank])


def make_model():
    torch.manual_seed(4)
    return torch.nn.Linear(5, 3)


METRICS = {
    "loss": lambda out, y: torch.nn.functional.cross_entropy(out, y),
    "correct": lambda out, y: (out.argmax(1) == y).sum(),
}


def test_evaluate_equals_single_process_over_all_samples(hvd):
    x, y, counts = all_samples(hvd.size())
    rows = my_slice(hvd.rank(), counts)
    loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(x[rows], y[rows]), batch_size=2)
    model = make_model()
    got = hvd.evaluate(model, loader, METRICS, sums=("correct",))
    with torch.no_grad():
        out = model(x)
    assert got["num_samples"] == len(x)
    assert got["correct"] == float((out.argmax(1) == y).sum())
    expected_loss = float(torch.nn.functional.cross_entropy(out, y))
    assert got["loss"] == pytest.approx(expected_loss, rel=1e-6)
    assert model.training  # evaluate restores the mode


def test_average_metrics_weighs_by_sample_count(hvd):
    rank = hvd.rank()
    n = 0 if rank == 0 else rank * 10  # rank 0 evaluated nothing: its mean must not count
    mean = float("nan") if n == 0 else float(rank)
    got = hvd.average_metrics({"mean": mean, "count": n}, n, sums=("count",))
    weights = [r * 10 for r in range(1, hvd.size())]
    assert got["count"] == sum(weights)
    assert got["mean"] == pytest.approx(
        sum(r * w for r, w in zip(range(1, hvd.size()), weights)) / sum(weights))


def test_distributed_evaluation_wrapper(hvd):
    x, y, counts = all_samples(hvd.size())
    rows = my_slice(hvd.rank(), counts)
    model = make_model()

    @hvd.distributed_evaluation(sums=("correct",))
    def validate(xs, ys):
        with torch.no_grad():
            out = model(xs)
        return {name: fn(out, ys) for name, fn in METRICS.items()}, len(xs)

    got = validate(x[rows], y[rows])
    with torch.no_grad():
        out = model(x)
    assert got["correct"] == float((out.argmax(1) == y).sum())
    assert got["loss"] == pytest.approx(float(torch.nn.functional.cross_entropy(out, y)),
                                        rel=1e-6)


def test_mismatched_metric_names_raise_on_every_rank(hvd):
    metrics = {"loss": 1.0, "extra": 2.0} if hvd.rank() == 0 else {"loss": 1.0}
    with pytest.raises(hvd.InvalidArgumentError, match="different metrics"):
        hvd.average_metrics(metrics, 1)
    with pytest.raises(hvd.InvalidArgumentError, match="no rank evaluated"):
        hvd.average_metrics({"loss": 0.0}, 0)
