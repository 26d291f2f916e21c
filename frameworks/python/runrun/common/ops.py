"""Reduction ops with Horovod's names and numbers (a script passing op=3 means Min in both).
The values are runrun_reduce_op codes of the C API."""

import enum


class ReduceOp(enum.IntEnum):
    AVERAGE = 0
    SUM = 1
    # Horovod's adaptive summation (allreduce of floating-point host tensors over a power-of-two
    # number of ranks; docs/collectives.md, "Adasum").
    ADASUM = 2
    MIN = 3
    MAX = 4
    PRODUCT = 5


Average = ReduceOp.AVERAGE
Sum = ReduceOp.SUM
Min = ReduceOp.MIN
Max = ReduceOp.MAX
Product = ReduceOp.PRODUCT
Adasum = ReduceOp.ADASUM


def resolve_op(op, average=None, default=Average):
    """Horovod's rule: `average` (deprecated) and `op` are exclusive; None means `default`.
    The common calls (a ReduceOp or None, no `average`) return without a lookup: this runs once
    per enqueued tensor."""
    if average is None:
        if op is None:
            return default
        if type(op) is ReduceOp:
            return op
    return _resolve_op_slowly(op, average, default)


def _resolve_op_slowly(op, average, default):
    from runrun.common.exceptions import InvalidArgumentError

    if op is not None and average is not None:
        raise InvalidArgumentError("pass either op= or the deprecated average=, not both")
    if op is None:
        op = default if average is None else (Average if average else Sum)
    try:
        op = ReduceOp(op)
    except ValueError:
        raise InvalidArgumentError(
            f"unknown reduction op {op!r}; use Average, Sum, Adasum, Min, Max or Product"
        ) from None
    return op
