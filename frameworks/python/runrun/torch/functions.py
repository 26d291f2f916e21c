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


def broadcast_optimizer_state(optimizer, root_rank=0, process_set=global_process_set):
    """Makes every rank's optimizer state and hyper-parameters equal to root_rank's. Works
    before the first step (an empty state stays empty everywhere), without changing any
    parameter; tensors (Adam's moments, SGD's momentum...) travel as tensor broadcasts."""
    if isinstance(optimizer, torch.optim.LBFGS):
        raise InvalidArgumentError("broadcast_optimizer_state does not support LBFGS")
    is_root = basics.rank() == root_rank  # a global rank, as in every broadcast
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
