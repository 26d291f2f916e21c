"""runrun.torch's tensor adapter (runrun.common.tensor_protocol): torch tensors <-> DLPack
capsules for runrun._core, with the call-time checks.

Why: the extension and runrun.common know no framework; this is the only place that turns
torch tensors into what the runtime borrows (legacy "dltensor" capsules) and its outputs back
into tensors. Checks here give errors that name the op, the tensor and the fix before anything
is enqueued. Thread-safety: stateless; any thread.
"""

import torch
import torch.utils.dlpack

from runrun.common import loader
from runrun.common.exceptions import InvalidArgumentError, InvalidArgumentRuntimeError
from runrun.common.tensor_protocol import TensorAdapter

# The runtime's accepted dtypes (runrun/dlpack_rules.h, through runrun._core.ACCEPTED_DTYPES).
SUPPORTED_DTYPES = tuple(getattr(torch, name) for name in loader.core().ACCEPTED_DTYPES)


def check_tensor(tensor, op, name, in_place=False):
    """Validates `tensor` for `op`; returns it (made contiguous when the op is out of place)."""
    if not isinstance(tensor, torch.Tensor):
        raise InvalidArgumentError(
            f"{op} '{name}': expected a torch.Tensor, got {type(tensor).__name__}")
    if in_place and tensor.requires_grad:
        refuse_grad_leaf(tensor, op, name)
    if tensor.dtype not in SUPPORTED_DTYPES:
        supported = ", ".join(str(d) for d in SUPPORTED_DTYPES)
        raise InvalidArgumentError(
            f"{op} '{name}': dtype {tensor.dtype} is not supported; convert the tensor to one "
            f"of {supported}")
    if tensor.layout != torch.strided:
        raise InvalidArgumentError(
            f"{op} '{name}': {tensor.layout} tensors are not supported; pass a dense tensor "
            "(tensor.to_dense())")
    if tensor.device.type != "cpu":
        if tensor.device.type != "cuda":
            raise InvalidArgumentError(
                f"{op} '{name}': tensor is on {tensor.device} but runrun handles CPU and CUDA "
                "tensors only; move it with .cpu()")
        hand_over_stream(tensor)
    if not tensor.is_contiguous():
        if in_place:
            raise InvalidArgumentError(
                f"{op} '{name}': in-place ops need a contiguous tensor, got shape "
                f"{tuple(tensor.shape)} with strides {tensor.stride()}; call .contiguous() and "
                "use the out-of-place op or copy the result back")
        tensor = tensor.contiguous()
    return tensor


def refuse_grad_leaf(tensor, op, name):
    """torch's rule for in-place ops: a leaf that requires grad may not be written while grad
    mode is enabled (its RuntimeError "a leaf Variable that requires grad is being used in an
    in-place operation."); under torch.no_grad() it may. Raised as InvalidArgumentRuntimeError,
    a RuntimeError as torch's, before anything is enqueued."""
    if tensor.is_leaf and torch.is_grad_enabled():
        raise InvalidArgumentRuntimeError(
            f"{op} '{name}': a leaf tensor that requires grad is being used in an in-place "
            "operation (torch refuses in-place ops on such leaves while grad mode is enabled); "
            "wrap the call in `with torch.no_grad():` (as optimizers update parameters), pass "
            f"tensor.data, or use the out-of-place {op.rstrip('_')}")


def _export_unless_requires_grad(tensor, _to_dlpack=torch.utils.dlpack.to_dlpack):
    """The in-place fast path's export: None (the general path, whose check applies
    refuse_grad_leaf) for a tensor that requires grad."""
    return None if tensor.requires_grad else _to_dlpack(tensor)


def hand_over_stream(tensor):
    """The stream contract for a CUDA tensor (docs/gpu.md "Streams"): the op enqueued next on
    this thread waits for torch's current stream of the tensor's device, and that stream waits
    for the op's outputs once its handle completed."""
    stream = torch.cuda.current_stream(tensor.device).cuda_stream
    loader.core().set_cuda_stream(stream)


def to_capsule(tensor):
    """A legacy DLPack capsule sharing `tensor`'s memory (autograd is bypassed: detach)."""
    return torch.utils.dlpack.to_dlpack(tensor.detach())


def from_capsule(capsule):
    """Takes over a tensor the runtime allocated."""
    return torch.utils.dlpack.from_dlpack(capsule)


def empty_like(tensor):
    """A new contiguous tensor like `tensor`, for out-of-place outputs."""
    return torch.empty_like(tensor, memory_format=torch.contiguous_format)


class TorchTensors(TensorAdapter):
    """The torch adapter. The fast path exports with torch's own C function (no detach needed:
    the capsule shares memory and carries no autograd state)."""

    framework = "torch"
    fast_export = staticmethod(torch.utils.dlpack.to_dlpack)

    def check(self, tensor, op, name, in_place=False):
        return check_tensor(tensor, op, name, in_place)

    def to_dlpack(self, tensor):
        return to_capsule(tensor)

    def from_dlpack(self, capsule):
        return from_capsule(capsule)

    def empty_like(self, tensor):
        return empty_like(tensor)

    def ndim(self, tensor):
        return tensor.dim()

    def splits_to_list(self, splits):
        if isinstance(splits, torch.Tensor):
            splits = splits.tolist()
        return [int(s) for s in splits]

    def int32_tensor(self, values):
        return torch.tensor(values, dtype=torch.int32)


class InPlaceTorchTensors(TorchTensors):
    """The torch adapter of the in-place ops a script calls (allreduce_async_, allreduce_,
    broadcast_async_, grouped_allreduce_async_ with a tensor that requires grad): the fast path
    (C) cannot ask torch's grad mode, so it leaves a tensor that requires grad to the general
    path. DistributedOptimizer's gradients take ADAPTER (no Python call per gradient)."""

    fast_export = staticmethod(_export_unless_requires_grad)


ADAPTER = TorchTensors()
IN_PLACE_ADAPTER = InPlaceTorchTensors()
