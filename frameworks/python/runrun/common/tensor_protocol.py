"""The tensor protocol: what a framework adapter supplies so that runrun.common.collectives can
run every op on its tensors (contract in docs/frameworks.md).

Why: handles, op naming, argument checks, DLPack in and out, output allocation and waiting are
the same for every framework; only how a framework's tensor is checked, exported, allocated and
re-imported differs. An adapter is one TensorAdapter subclass instance, created once per
framework; everything else (runrun.torch.collectives, a future runrun.jax...) is thin wrappers
that pass it to runrun.common.collectives. No module here imports a framework.
Thread-safety: an adapter holds no mutable state; its methods may be called from any thread.
"""

from runrun.common.exceptions import InvalidArgumentError


class TensorAdapter:
    """Base of the adapters. Subclasses override what their framework needs; the defaults fit a
    framework whose tensors implement the DLPack protocol (__dlpack__) and are writable."""

    # The framework's name, used in messages ("torch", "numpy", "jax").
    framework = "tensor"

    # A C-callable f(tensor) -> legacy "dltensor" capsule the fast path (runrun._core's
    # fast_allreduce/fast_broadcast) calls directly; None: it calls tensor.__dlpack__();
    # `memoryview` (the type itself): it reads the tensor's buffer (buffer protocol, the
    # cheapest export of TF and JAX CPU tensors), falling back to __dlpack__ (bfloat16).
    fast_export = None

    # capsule_finish(handle) -> the framework's tensor, for an out-of-place allreduce or
    # broadcast taken by the fast path, whose output the extension then allocates itself (a
    # 64-byte aligned host buffer like the input, no Python call at enqueue): handle.result is
    # that buffer as a "dltensor" capsule, turned into a tensor only when the handle is waited.
    # None: the fast path's outputs come from empty_like (and output_finish) as elsewhere.
    capsule_finish = None

    # finish(handle) -> the framework's tensor, for the output buffer of an out-of-place op
    # (handle.result, made by empty_like) once the op completed; None when the buffer already
    # is the framework's tensor (torch, numpy). A JAX adapter would wrap a numpy buffer here.
    output_finish = None

    def __init__(self):
        # What the fast path is given for an out-of-place op: its output allocation (True:
        # the extension allocates) and finish; computed once, not per call.
        self.fast_allocate = True if self.capsule_finish is not None else self.empty_like
        self.fast_finish = self.capsule_finish or self.output_finish
        finish = self.fast_finish
        self.fast_grouped_finish = None if finish is None else \
            (lambda handle: [finish(_Buffer(out)) for out in handle.result])

    def __setattr__(self, name, value):
        # _fast_members: (fast_allocate, fast_export, fast_finish) in one attribute, which the
        # extension's whole-call entry (csrc/fast_call.h) reads once per op instead of three
        # lookups; kept equal to the three whenever one is set on the instance.
        object.__setattr__(self, name, value)
        if name in _FAST_MEMBERS:
            object.__setattr__(self, "_fast_members",
                               tuple(getattr(self, n, None) for n in _FAST_MEMBERS))

    def check(self, tensor, op, name, in_place=False):
        """Validates `tensor` for `op` (named `name` in messages) and returns what to enqueue:
        the tensor itself, or a contiguous copy when not `in_place`. Raises
        InvalidArgumentError naming the op, the tensor and the fix for anything the runtime
        cannot take: a non-tensor, an unsupported dtype, a device this build cannot reach, a
        non-dense or (in place) non-contiguous layout."""
        raise NotImplementedError

    def to_dlpack(self, tensor):
        """A legacy "dltensor" capsule sharing `tensor`'s memory (or an object with
        __dlpack__()); the runtime reads and (for outputs) writes through it."""
        return tensor.__dlpack__()

    def from_dlpack(self, capsule):
        """Takes over a tensor the runtime allocated (a "dltensor" capsule) as the
        framework's tensor."""
        raise NotImplementedError

    def empty_like(self, tensor):
        """A new contiguous output buffer with `tensor`'s shape, dtype and device that the
        runtime writes into (an object the adapter can export with to_dlpack and fast_export;
        output_finish turns it into the framework's tensor when it is not one). None: the
        runtime allocates the output like `tensor`, on its device, and from_dlpack takes it
        over (what an immutable framework's CUDA tensors need: TF, JAX; docs/gpu.md)."""
        raise NotImplementedError

    def ndim(self, tensor):
        return len(tensor.shape)

    def splits_to_list(self, splits):
        """alltoall's `splits` (a list or a 1-D integer tensor) as a list of ints; raises
        TypeError or ValueError for anything else."""
        if hasattr(splits, "tolist"):
            splits = splits.tolist()
        return [int(s) for s in splits]

    def int32_tensor(self, values):
        """The framework's 1-D int32 tensor of a list of ints (alltoall's received splits)."""
        raise NotImplementedError


_FAST_MEMBERS = ("fast_allocate", "fast_export", "fast_finish")


class _Buffer:
    """What an output_finish / capsule_finish sees for one output of a grouped op: that
    output's buffer as .result."""

    __slots__ = ("result",)

    def __init__(self, result):
        self.result = result


def require_adapter(adapter):
    """Fails early with a clear message when something that is no adapter is passed."""
    if not isinstance(adapter, TensorAdapter):
        raise InvalidArgumentError(
            f"expected a runrun.common.tensor_protocol.TensorAdapter, got "
            f"{type(adapter).__name__}")
    return adapter
