"""Framework-neutral combination of per-rank evaluation metrics.

Why: a multi-node evaluation must give the metric of the whole evaluation set, not the mean of
the ranks' means: when ranks evaluated different numbers of samples, each rank's mean weighs by
its sample count, and counts (correct predictions, samples) add up. Every adapter gathers each
rank's (metrics, sample count) and calls combine_metrics. Thread-safety: pure functions.
"""

from runrun.common.exceptions import InvalidArgumentError


def local_report(metrics, num_samples, sums):
    """What one rank contributes: (names, {name: float}, sample count), checked."""
    if not isinstance(metrics, dict):
        raise InvalidArgumentError(
            f"metrics must be a dict of name -> number, got {type(metrics).__name__}")
    count = int(num_samples)
    if count < 0:
        raise InvalidArgumentError(f"num_samples must be >= 0, got {num_samples}")
    unknown = sorted(set(sums) - set(metrics))
    if unknown:
        raise InvalidArgumentError(f"sums names metrics {unknown} that are not in the metrics "
                                   f"{sorted(metrics)}")
    values = {}
    for name, value in metrics.items():
        try:
            values[name] = float(value)
        except (TypeError, ValueError):
            raise InvalidArgumentError(
                f"metric '{name}' is a {type(value).__name__}, not a number") from None
    return sorted(values), values, count


def combine_metrics(reports, sums, ranks):
    """The metrics over every rank's samples. `reports`: local_report of each rank, in the
    order of `ranks` (global ranks, for error messages). Means weigh by sample count; the
    names in `sums` add up. Raises when names differ or no rank had a sample."""
    names = reports[0][0]
    for rank, (other, _, _) in zip(ranks, reports):
        if other != names:
            raise InvalidArgumentError(
                f"ranks report different metrics: rank {ranks[0]} {names}, rank {rank} {other}; "
                "every rank must return the same metric names")
    total = sum(count for _, _, count in reports)
    if total == 0 and any(n not in sums for n in names):
        raise InvalidArgumentError(
            "no rank evaluated any sample (every num_samples is 0): the averaged metrics are "
            "undefined")
    out = {}
    for name in names:
        if name in sums:
            out[name] = sum(values[name] for _, values, _ in reports)
        else:
            out[name] = sum(values[name] * count for _, values, count in reports if count) / total
    return out
