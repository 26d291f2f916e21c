"""Allreduce of sparse COO tensors, as horovod.torch.sparse_allreduce_async.

Why: embedding layers with sparse=True produce sparse gradients; reducing them densely wastes
bandwidth. Every rank's indices and values are gathered (two allgathers named `<name>.indices`
and `<name>.values`), and the result is the sparse tensor of all of them: duplicates are not
summed (call .coalesce() for that), so its dense value is the sum of every rank's tensor, or
the average for op=Average (values divided by the set size). Thread-safety: as collectives.py.
"""

import torch

from runrun.common.exceptions import InvalidArgumentRuntimeError
from runrun.common.names import op_name
from runrun.common.ops import Average, Sum, resolve_op
from runrun.common.process_sets import global_process_set, process_set_id
from runrun.torch import collectives as c
from runrun.torch.handles import CombinedHandle


def sparse_allreduce_async(tensor, name=None, op=Average, process_set=global_process_set):
    """Starts a sparse allreduce of `tensor` (a sparse COO tensor); synchronize(handle), or
    handle(), returns the reduced sparse tensor. Every rank's tensor has the same size."""
    op = resolve_op(op)
    name = op_name("sparse_allreduce", name,
                   0 if name is not None else process_set_id(process_set))
    # Both refusals are RuntimeErrors too, as Horovod's (torch's, on a dense tensor's indices).
    if not isinstance(tensor, torch.Tensor) or tensor.layout != torch.sparse_coo:
        raise InvalidArgumentRuntimeError(
            f"sparse_allreduce '{name}': expected a sparse COO tensor, got "
            f"{getattr(tensor, 'layout', type(tensor).__name__)}; use allreduce for dense "
            "tensors")
    if op not in (Average, Sum):
        raise InvalidArgumentRuntimeError(
            f"sparse_allreduce '{name}': op must be Average or Sum, got {op.name}")
    # Gathered along the first dimension: one row of indices per non-zero, hence transposed.
    indices = c.allgather_async(tensor._indices().t().contiguous(), f"{name}.indices",
                                process_set)
    values = c.allgather_async(tensor._values(), f"{name}.values", process_set)
    size = tensor.size()

    def combine(outputs):
        gathered_indices, gathered_values = outputs
        if op == Average:
            gathered_values = gathered_values / process_set.size()
        # Checked: a rank whose tensor had another size would otherwise leave indices out of
        # bounds, which torch does not catch later.
        return torch.sparse_coo_tensor(gathered_indices.t(), gathered_values, size,
                                       check_invariants=True)

    return CombinedHandle([indices, values], combine)
