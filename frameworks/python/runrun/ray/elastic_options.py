"""The elastic options of RayExecutor, under Horovod's names, checked once.

Why: `RayExecutor(min_workers=..., max_workers=...)` makes the job elastic (docs/ray.md,
"Elastic"); the options mean what Horovod's RayExecutor and the launcher's flags mean
(--min-np, --max-np, --reset-limit, --elastic-timeout, --blacklist-cooldown-range), and an
option runrun cannot honour is refused with the reason instead of being ignored.
Thread-safety: plain values.
"""

import dataclasses

# Horovod's RayExecutor keyword arguments of elastic mode that runrun does not take.
_REFUSED = {
    "override_discovery": "runrun's elastic RayExecutor always discovers hosts from ray.nodes(); "
                          "override_discovery=False (a discovery of your own) is not supported",
}


@dataclasses.dataclass(frozen=True)
class ElasticOptions:
    min_workers: int
    max_workers: int           # never more workers than this (None given: the cluster's slots)
    num_workers: int           # the first generation's size at most (num_workers, else max)
    reset_limit: int           # -1: no limit
    elastic_timeout: float     # seconds
    cooldown_range: tuple      # (min, max) seconds a node where a worker failed gets no new one


def elastic_options(*, min_workers, max_workers, num_workers, num_hosts, reset_limit,
                    cooldown_range, elastic_timeout, override_discovery, **unknown):
    """The checked options, or None when the job is not elastic (min_workers and max_workers
    both None). Raises ValueError naming the option that is wrong and why."""
    if min_workers is None and max_workers is None:
        _check_not_elastic(reset_limit, cooldown_range, unknown)
        return None
    _check_elastic_mode(num_hosts, override_discovery, unknown)
    if min_workers is None:
        min_workers = 1
    _check_worker_counts(min_workers, max_workers, num_workers)
    if reset_limit is not None and (not isinstance(reset_limit, int) or reset_limit < 0):
        raise ValueError(f"RayExecutor: reset_limit={reset_limit!r} must be an integer >= 0 "
                         "(None: no limit)")
    if not isinstance(elastic_timeout, (int, float)) or not 0 < elastic_timeout < 1e7:
        raise ValueError(f"RayExecutor: elastic_timeout={elastic_timeout!r} must be a positive "
                         "number of seconds")
    if cooldown_range is None:
        cooldown_range = (10, 600)  # the launcher's --blacklist-cooldown-range default
    if (len(tuple(cooldown_range)) != 2 or
            not all(isinstance(v, (int, float)) and v >= 0 for v in cooldown_range) or
            cooldown_range[0] > cooldown_range[1]):
        raise ValueError(f"RayExecutor: cooldown_range={cooldown_range!r} must be (min, max) "
                         "seconds with 0 <= min <= max")
    cap = max_workers if max_workers is not None else None
    return ElasticOptions(
        min_workers=min_workers, max_workers=cap,
        num_workers=num_workers if num_workers is not None else cap,
        reset_limit=-1 if reset_limit is None else reset_limit,
        elastic_timeout=float(elastic_timeout), cooldown_range=tuple(cooldown_range))


def _check_not_elastic(reset_limit, cooldown_range, unknown):
    """A job that is not elastic takes no elastic option."""
    extra = sorted(k for k, v in {"reset_limit": reset_limit,
                                  "cooldown_range": cooldown_range}.items() if v is not None)
    if extra:
        raise ValueError(f"RayExecutor: {', '.join(extra)} only apply to an elastic job: "
                         "pass min_workers and/or max_workers too")
    if unknown:
        raise TypeError(f"RayExecutor: unexpected keyword arguments {sorted(unknown)}")


def _check_elastic_mode(num_hosts, override_discovery, unknown):
    """What an elastic job cannot take: unknown keywords, a discovery of its own, host bundles."""
    if unknown:
        raise TypeError(f"RayExecutor: unexpected keyword arguments {sorted(unknown)} (elastic "
                        "options: min_workers, max_workers, reset_limit, cooldown_range, "
                        "elastic_timeout)")
    if not override_discovery:
        raise ValueError(f"RayExecutor: {_REFUSED['override_discovery']}")
    if num_hosts is not None:
        raise ValueError("RayExecutor: num_hosts/num_workers_per_host cannot be elastic (a node's "
                         "workers come and go one by one, not as a fixed bundle per host): pass "
                         "min_workers/max_workers with cpus_per_worker/gpus_per_worker")


def _check_worker_counts(min_workers, max_workers, num_workers):
    if not _positive_int(min_workers):
        raise ValueError(f"RayExecutor: min_workers={min_workers!r} must be an integer >= 1")
    if max_workers is not None and (not _positive_int(max_workers) or max_workers < min_workers):
        raise ValueError(f"RayExecutor: max_workers={max_workers!r} must be an integer >= "
                         f"min_workers ({min_workers})")
    if num_workers is not None and (
            not _positive_int(num_workers) or num_workers < min_workers or
            (max_workers is not None and num_workers > max_workers)):
        raise ValueError(f"RayExecutor: num_workers={num_workers!r} (the first generation's "
                         f"size) must be between min_workers ({min_workers}) and max_workers "
                         f"({max_workers})")


def _positive_int(value):
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1
