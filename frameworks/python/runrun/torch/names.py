"""Names of unnamed ops. Every rank must enqueue ops in the same order; an op without a name
gets `<op>.noname.<n>` from a per-op counter, so the n-th unnamed op matches across ranks."""

import itertools
import threading

_lock = threading.Lock()
_counters = {}


def op_name(op, name):
    if name is not None:
        return str(name)
    with _lock:
        counter = _counters.setdefault(op, itertools.count())
        return f"{op}.noname.{next(counter)}"


def group_names(op, name, count):
    """Names of the tensors of a grouped op: `<name>.<i>`."""
    base = op_name(op, name)
    return [f"{base}.{i}" for i in range(count)]
