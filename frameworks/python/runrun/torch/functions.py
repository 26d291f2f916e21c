"""State synchronisation helpers of horovod.torch: broadcast_parameters,
broadcast_optimizer_state, broadcast_object, allgather_object.

Why: every rank must start from the same weights and optimizer state (or resume from rank 0's
checkpoint). Thread-safety: collective; call from one thread on every rank in the same order.
"""

import torch

from runrun.common import basics, object_codec
from runrun.common.exceptions import InvalidArgumentError
from runrun.common.process_sets import global_process_set
from runrun.torch import collectives as c
from runrun.torch.allreduce_optimizer import _DistributedOptimizer


def broadcast_parameters(params, root_rank=0, process_set=global_process_set):
    """Overwrites `params` in place with root_rank's values. `params`: model.state_dict(),
    model.named_parameters(), or a list of tensors / (name, tensor) pairs."""
    if isinstance(params, dict):
        items = sorted(params.items())
    else:
        try:
            items = [p if isinstance(p, tuple) else (None, p) for p in params]
        except TypeError:
            raise InvalidArgumentError(
                f"broadcast_parameters: invalid params of type {type(params).__name__}; pass "
                "model.state_dict() or model.named_parameters()") from None
    handles = []
    for i, (name, tensor) in enumerate(items):
        if not isinstance(tensor, torch.Tensor):
            continue
        key = f"broadcast_parameters.{name if name is not None else i}"
        handles.append(c.broadcast_async_(tensor.data, root_rank, key, process_set))
    for handle in handles:
        handle.wait()


def _describe_state(state_dict):
    """root's optimizer state with every tensor replaced by its (shape, dtype)."""
    described = {}
    for pid, entries in state_dict["state"].items():
        described[pid] = {
            key: ("tensor", tuple(v.shape), v.dtype) if isinstance(v, torch.Tensor)
            else ("value", v)
            for key, v in entries.items()
        }
    return {"param_groups": state_dict["param_groups"], "state": described}


def _initialize_state(optimizer):
    """Horovod's initialization of a state that is still empty (a new optimizer): every
    parameter that requires a gradient gets a zero .grad (sparse for SparseAdam, which refuses
    dense ones) and the wrapped optimizer takes one step with them, without any allreduce (a
    DistributedOptimizer's own step() would start them, and not every rank may be here). So
    Adam's moments, SGD's momentum buffers... exist before the first real step, and parameters
    without a gradient (frozen) keep .grad None. Unlike Horovod, the parameters are put back as
    they were: that step moves them where there is weight decay, and only on ranks whose state
    was empty (not on a root resumed from a checkpoint, not on the old workers of an elastic
    job), which would leave the ranks with different weights."""
    params = [p for group in optimizer.param_groups for p in group["params"]]
    saved = [p.detach().clone() for p in params]
    for p in params:
        if p.requires_grad:
            p.grad = torch.zeros_like(p, memory_format=torch.contiguous_format)
            if isinstance(optimizer, torch.optim.SparseAdam):
                p.grad = p.grad.to_sparse()
    if isinstance(optimizer, _DistributedOptimizer):
        super(_DistributedOptimizer, optimizer).step()  # the wrapped optimizer's step
    else:
        optimizer.step()
    with torch.no_grad():
        for p, value in zip(params, saved):
            p.copy_(value)


def broadcast_optimizer_state(optimizer, root_rank=0, process_set=global_process_set):
    """Makes every rank's optimizer state and hyper-parameters equal to root_rank's, without
    changing any parameter. A rank whose state is still empty first builds it as Horovod does
    (_initialize_state: zero gradients, one step), so afterwards every parameter that requires
    a gradient has a .grad and a state. Tensors (Adam's moments, SGD's momentum...) travel as
    tensor broadcasts."""
    if isinstance(optimizer, torch.optim.LBFGS):
        raise InvalidArgumentError("broadcast_optimizer_state does not support LBFGS")
    is_root = basics.rank() == root_rank  # a global rank, as in every broadcast
    if not optimizer.state_dict()["state"]:
        _initialize_state(optimizer)
    state_dict = optimizer.state_dict()
    layout = broadcast_object(_describe_state(state_dict) if is_root else None, root_rank,
                              "broadcast_optimizer_state.layout", process_set)
    handles = []
    new_state = {}
    for pid in sorted(layout["state"], key=str):
        entries = {}
        for key in sorted(layout["state"][pid]):
            kind, *info = layout["state"][pid][key]
            if kind == "value":
                entries[key] = info[0]
                continue
            shape, dtype = info
            if is_root:
                tensor = state_dict["state"][pid][key].detach().cpu().contiguous().clone()
            else:
                tensor = torch.empty(shape, dtype=dtype)
            handles.append(c.broadcast_async_(
                tensor, root_rank, f"broadcast_optimizer_state.{pid}.{key}", process_set))
            entries[key] = tensor
        new_state[pid] = entries
    for handle in handles:
        handle.wait()
    if not is_root:
        optimizer.load_state_dict({"state": new_state, "param_groups": layout["param_groups"]})


def _to_bytes_tensor(obj):
    return torch.frombuffer(bytearray(object_codec.dumps(obj)), dtype=torch.uint8)


def broadcast_object(obj, root_rank=0, name=None, process_set=global_process_set):
    """root_rank's `obj`, on every rank of `process_set` (root_rank is a global rank that
    belongs to the set). Pickled with cloudpickle, as Horovod (runrun.common.object_codec)."""
    name = name or "broadcast_object"
    is_root = basics.rank() == root_rank  # a global rank, as in every broadcast
    if is_root:
        payload = _to_bytes_tensor(obj)
        length = torch.tensor([payload.numel()], dtype=torch.int64)
    else:
        length = torch.zeros(1, dtype=torch.int64)
    c.broadcast_(length, root_rank, f"{name}.size", process_set)
    if not is_root:
        payload = torch.empty(int(length.item()), dtype=torch.uint8)
    c.broadcast_(payload, root_rank, f"{name}.data", process_set)
    if is_root:
        return obj
    return object_codec.loads(payload.numpy().tobytes())


def allgather_object(obj, name=None, process_set=global_process_set):
    """A list of the picklable `obj` of every rank of `process_set`, in rank order."""
    name = name or "allgather_object"
    payload = _to_bytes_tensor(obj)
    sizes = c.allgather_async(torch.tensor([payload.numel()], dtype=torch.int64),
                              f"{name}.sizes", process_set).wait()
    gathered = c.allgather_async(payload, f"{name}.data", process_set).wait()
    out, offset = [], 0
    for n in sizes.tolist():
        out.append(object_codec.loads(gathered[offset:offset + n].numpy().tobytes()))
        offset += n
    return out
