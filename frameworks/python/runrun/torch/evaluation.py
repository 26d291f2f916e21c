"""Multi-node evaluation for torch loops: each rank evaluates its share, the result is the
metric over all ranks' samples (ChainerMN's multi-node evaluator, weighted by sample counts).

Why: averaging the ranks' means is wrong when ranks hold different numbers of samples (e.g. a
DistributedSampler without padding, or the last uneven batch). average_metrics combines
already-computed local metrics; distributed_evaluation wraps a user's evaluation function;
evaluate() runs a model over a loader. The weighting itself is framework-neutral
(runrun.common.metric_weights). Thread-safety: collective over `process_set`; call from one
thread on every member.
"""

import functools

import torch

from runrun.common import metric_weights
from runrun.common.exceptions import InvalidArgumentError
from runrun.common.process_sets import global_process_set
from runrun.torch.functions import allgather_object


def average_metrics(metrics, num_samples, sums=(), process_set=global_process_set,
                    name="average_metrics"):
    """Collective. `metrics`: this rank's {name: number}, each the mean over its
    `num_samples` samples, except the names in `sums` (counts, totals), which are summed over
    the ranks. Returns the same dict on every rank: each mean weighted by sample count."""
    report = metric_weights.local_report(metrics, num_samples, sums)
    reports = allgather_object(report, name, process_set)
    return metric_weights.combine_metrics(reports, set(sums), process_set.ranks)


def distributed_evaluation(fn=None, *, sums=(), process_set=global_process_set):
    """Decorator: `fn(...)` returns (metrics dict, num_samples) for this rank's data; the
    wrapped function is collective and returns the metrics over all ranks' samples."""
    def wrap(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            result = func(*args, **kwargs)
            if not (isinstance(result, tuple) and len(result) == 2):
                raise InvalidArgumentError(
                    f"{func.__name__} must return (metrics dict, num_samples) for "
                    f"distributed_evaluation, got {type(result).__name__}")
            return average_metrics(result[0], result[1], sums, process_set,
                                   name=f"distributed_evaluation.{func.__name__}")
        return wrapper
    return wrap if fn is None else wrap(fn)


def _batch_size(inputs):
    tensor = inputs[0] if isinstance(inputs, (tuple, list)) else inputs
    if not isinstance(tensor, torch.Tensor) or tensor.dim() == 0:
        raise InvalidArgumentError(
            "evaluate: each batch must be (inputs, target) with a batched tensor first")
    return tensor.shape[0]


def evaluate(model, loader, metrics, sums=(), process_set=global_process_set):
    """Collective. Runs `model` (in eval mode, without gradients) over this rank's `loader` of
    (inputs, target) batches; `metrics` maps a name to fn(output, target) -> the batch's mean
    (e.g. a loss), or for names in `sums` the batch's count (e.g. correct predictions).
    Returns {name: value} over every rank's samples, plus "num_samples" (their total)."""
    if not isinstance(metrics, dict) or not metrics:
        raise InvalidArgumentError("evaluate: metrics must be a non-empty dict of name -> "
                                   "fn(output, target)")
    if "num_samples" in metrics:
        raise InvalidArgumentError("evaluate: 'num_samples' is reserved for the sample count")
    totals = {name: 0.0 for name in metrics}
    count = 0
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            for inputs, target in loader:
                n = _batch_size(inputs)
                output = model(inputs)
                for name, fn in metrics.items():
                    value = float(fn(output, target))
                    totals[name] += value if name in sums else value * n
                count += n
    finally:
        model.train(was_training)
    local = {name: (v if name in sums or count == 0 else v / count) for name, v in totals.items()}
    local["num_samples"] = count
    result = average_metrics(local, count, tuple(sums) + ("num_samples",), process_set,
                             name="evaluate")
    result["num_samples"] = int(result["num_samples"])
    return result
