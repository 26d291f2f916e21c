"""runrun.common is framework-neutral (issue 12, point 4): every op driven through
runrun.common.collectives with numpy arrays (runrun.common.numpy_tensors, DLPack in and out),
no torch tensor involved, against a locally computed reference; the adapter's errors; and the
per-tensor fast path (point 6) taking numpy arrays as it takes torch tensors."""

import os
import sys

import numpy as np
import pytest

import runrun
from runrun.common import collectives as c
from runrun.common.handles import Handle, poll, synchronize
from runrun.common.numpy_tensors import ADAPTER as NP

DTYPES = [np.uint8, np.int8, np.int16, np.int32, np.int64, np.float16, np.float32, np.float64]


def values(r, shape, dtype, seed=0, low=-8, high=8):
    """Rank r's contribution: small integers, so every reduction is exact in every dtype."""
    rng = np.random.default_rng(1000 * r + seed)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if dtype == np.uint8:
        low = max(low, 0)
    return rng.integers(low, high, shape).astype(dtype)


def everyone(hvd, shape, dtype, **kw):
    return [values(r, shape, dtype, **kw) for r in range(hvd.size())]


REFERENCE = {
    runrun.Sum: lambda s: s.sum(0),
    runrun.Min: lambda s: s.min(0),
    runrun.Max: lambda s: s.max(0),
    runrun.Product: lambda s: s.prod(0),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", [runrun.Sum, runrun.Min, runrun.Max, runrun.Product])
def test_allreduce_every_op_and_dtype(hvd, dtype, op):
    low, high = (1, 3) if op == runrun.Product else (-8, 8)
    for shape in [(17,), (3, 5), ()]:
        parts = everyone(hvd, shape, dtype, low=low, high=high)
        expected = REFERENCE[op](np.stack(parts).astype(np.float64)).astype(dtype)
        mine = parts[hvd.rank()].copy()
        out = c.allreduce(NP, mine, op=op).wait()
        assert isinstance(out, np.ndarray) and out.dtype == dtype and out.shape == mine.shape
        assert np.array_equal(out, expected) and np.array_equal(mine, parts[hvd.rank()])
        handle = c.allreduce(NP, mine, op=op, name=f"np.inplace.{op.name}", in_place=True)
        assert synchronize(handle) is mine and np.array_equal(mine, expected)


def test_allreduce_average_scale_and_bool(hvd):
    n = hvd.size()
    parts = [p * n for p in everyone(hvd, (4, 4), np.float64)]
    out = c.allreduce(NP, parts[hvd.rank()]).wait()
    assert np.array_equal(out, np.stack(parts).sum(0) / n)
    scaled = c.allreduce(NP, parts[hvd.rank()], op=runrun.Sum, prescale_factor=0.5,
                         postscale_factor=4.0).wait()
    assert np.allclose(scaled, np.stack(parts).sum(0) * 2.0, rtol=0, atol=1e-12)
    flags = everyone(hvd, (33,), np.bool_)
    assert np.array_equal(c.allreduce(NP, flags[hvd.rank()], op=runrun.Max).wait(),
                          np.stack(flags).any(0))


def test_grouped_allreduce(hvd):
    shapes = [(3,), (2, 2), (7,)]
    parts = [everyone(hvd, s, np.float32, seed=i) for i, s in enumerate(shapes)]
    expected = [np.stack(p).sum(0) for p in parts]
    mine = [p[hvd.rank()].copy() for p in parts]
    outs = c.grouped_allreduce(NP, mine, op=runrun.Sum).wait()
    assert all(np.array_equal(o, e) for o, e in zip(outs, expected))
    c.grouped_allreduce(NP, mine, op=runrun.Sum, in_place=True).wait()
    assert all(np.array_equal(m, e) for m, e in zip(mine, expected))


@pytest.mark.parametrize("dtype", DTYPES + [np.bool_])
def test_allgather_uneven_and_grouped(hvd, dtype):
    parts = [values(r, (r + 1, 3), dtype) for r in range(hvd.size())]
    out = c.allgather(NP, parts[hvd.rank()]).wait()
    assert out.dtype == dtype and np.array_equal(out, np.concatenate(parts))
    outs = c.grouped_allgather(NP, [parts[hvd.rank()], parts[hvd.rank()][:1]]).wait()
    assert np.array_equal(outs[0], np.concatenate(parts))
    assert np.array_equal(outs[1], np.concatenate([p[:1] for p in parts]))


def test_broadcast(hvd):
    root = hvd.size() - 1
    parts = everyone(hvd, (5, 2), np.int32)
    out = c.broadcast(NP, parts[hvd.rank()], root).wait()
    assert np.array_equal(out, parts[root])
    mine = parts[hvd.rank()].copy()
    assert c.broadcast(NP, mine, root, in_place=True).wait() is mine
    assert np.array_equal(mine, parts[root])


def test_alltoall(hvd):
    n, r = hvd.size(), hvd.rank()
    splits = [q + 1 for q in range(n)]
    rows = sum(splits)
    mine = np.arange(rows * 2, dtype=np.int64).reshape(rows, 2) + 1000 * r
    out, received = c.alltoall(NP, mine, splits=np.asarray(splits)).wait()
    start = sum(splits[:r])
    expected = np.concatenate([np.arange(rows * 2).reshape(rows, 2)[start:start + r + 1]
                               + 1000 * p for p in range(n)])
    assert np.array_equal(out, expected)
    assert received.dtype == np.int32 and received.tolist() == [r + 1] * n


@pytest.mark.parametrize("op", [runrun.Sum, runrun.Average])
def test_reducescatter(hvd, op):
    n, r = hvd.size(), hvd.rank()
    rows = 2 * n + 1
    parts = everyone(hvd, (rows, 3), np.float64)
    total = np.stack(parts).sum(0) / (n if op == runrun.Average else 1)
    counts = [rows // n + (1 if q < rows % n else 0) for q in range(n)]
    start = sum(counts[:r])
    out = c.reducescatter(NP, parts[r], op=op).wait()
    assert np.array_equal(out, total[start:start + counts[r]])
    outs = c.grouped_reducescatter(NP, [parts[r], parts[r] * 2], op=op).wait()
    assert np.array_equal(outs[1], 2 * total[start:start + counts[r]])


def test_barrier_join_poll(hvd):
    c.barrier()
    handle = c.allreduce(NP, np.ones(1000), op=runrun.Sum, name="np.poll")
    assert isinstance(handle, Handle)
    synchronize(handle)
    assert poll(handle)
    assert 0 <= c.join() < hvd.size()


def test_adapter_errors_name_the_op_and_the_fix(hvd):
    with pytest.raises(runrun.common.exceptions.InvalidArgumentError, match="complex128"):
        c.allreduce(NP, np.ones(3, dtype=np.complex128), name="np.complex")
    with pytest.raises(ValueError, match="C-contiguous"):
        c.allreduce(NP, np.ones((4, 4))[:, ::2], name="np.strided", in_place=True)
    with pytest.raises(ValueError, match="expected a numpy.ndarray, got list"):
        c.broadcast(NP, [1.0, 2.0], 0, name="np.list")
    readonly = np.ones(3)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        c.allreduce(NP, readonly, name="np.readonly", in_place=True)
    # Out of place, a strided or read-only input is copied first, as torch's are.
    out = c.allreduce(NP, np.arange(8.0)[::2], op=runrun.Sum, name="np.copied").wait()
    assert np.array_equal(out, np.arange(8.0)[::2] * hvd.size())
    out = c.allreduce(NP, readonly, op=runrun.Sum, name="np.copied_ro").wait()
    assert np.array_equal(out, np.full(3, float(hvd.size())))


def _python_calls(fn):
    """The Python functions of the runrun package that run during fn() (C functions and
    framework code not counted)."""
    calls = []
    package = os.path.dirname(runrun.__file__) + os.sep

    def profile(frame, event, _arg):
        if event == "call" and frame.f_code.co_filename.startswith(package):
            calls.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        result = fn()
    finally:
        sys.setprofile(None)
    return result, calls


def test_per_tensor_enqueue_is_one_extension_call(hvd):
    # Point 6: an in-place allreduce or broadcast of an acceptable tensor runs a handful of
    # Python functions (wrapper, op and name resolution) and hands the tensor to the extension
    # once; the result is the extension's handle itself, no wrapper object.
    import torch

    for tensor, enqueue in [
        (np.ones(256, dtype=np.float32), lambda t: c.allreduce(NP, t, name="np.fast",
                                                                op=runrun.Sum, in_place=True)),
        (torch.ones(256), lambda t: hvd.allreduce_async_(t, name="torch.fast", op=hvd.Sum)),
        (torch.ones(256), lambda t: hvd.broadcast_async_(t, 0, name="torch.fast_bcast")),
    ]:
        handle, calls = _python_calls(lambda: enqueue(tensor))
        assert type(handle) is Handle, calls
        assert len(calls) <= 4, calls
        assert handle.wait() is tensor


def test_grouped_enqueue_is_one_extension_call(hvd):
    # Point 6, grouped calls: the Python work does not grow with the number of tensors (one
    # batched enqueue); the handle's result is the list of the tensors, reduced in place.
    import torch

    tensors = [torch.full((64,), float(i)) for i in range(8)]
    handle, calls = _python_calls(
        lambda: hvd.grouped_allreduce_async_(tensors, name="torch.fast_group", op=hvd.Sum))
    assert type(handle) is Handle, calls
    assert len(calls) <= 6, calls
    outs = hvd.synchronize(handle)
    assert all(o is t for o, t in zip(outs, tensors)) and len(outs) == 8
    assert all(torch.equal(t, torch.full((64,), float(i * hvd.size())))
               for i, t in enumerate(tensors))
    arrays = [np.full(16, i, dtype=np.int64) for i in range(8)]
    outs = c.grouped_allreduce(NP, arrays, op=runrun.Sum, name="np.fast_group").wait()
    assert all(np.array_equal(o, np.full(16, i * hvd.size())) for i, o in enumerate(outs))
    assert all(a[0] == i for i, a in enumerate(arrays))  # out of place: inputs unchanged


def test_fast_path_results_match_the_general_path(hvd):
    # The fast path exports torch tensors without detach(): a leaf that requires grad is reduced
    # in place and keeps its autograd state; out-of-place ops return new contiguous tensors.
    import torch

    n = hvd.size()
    leaf = torch.full((5,), 2.0, requires_grad=True)
    with torch.no_grad():
        assert hvd.synchronize(hvd.allreduce_async_(leaf, name="fast.leaf", op=hvd.Sum)) is leaf
    assert leaf.requires_grad and leaf.grad_fn is None
    assert torch.equal(leaf.detach(), torch.full((5,), 2.0 * n))
    source = torch.arange(6, dtype=torch.int32).view(2, 3) + hvd.rank()
    out = hvd.synchronize(hvd.allreduce_async(source, name="fast.oop", op=hvd.Max))
    assert out is not source and out.is_contiguous()
    assert torch.equal(out, torch.arange(6, dtype=torch.int32).view(2, 3) + n - 1)
    root = n - 1
    got = hvd.synchronize(hvd.broadcast_async(source, root, name="fast.bcast"))
    assert torch.equal(got, torch.arange(6, dtype=torch.int32).view(2, 3) + root)
    assert torch.equal(source, torch.arange(6, dtype=torch.int32).view(2, 3) + hvd.rank())
    flags = torch.tensor([hvd.rank() == 0, True])
    assert torch.equal(hvd.allreduce(flags, op=hvd.Min, name="fast.bool"),
                       torch.tensor([n == 1, True]))


class _RuntimeAllocated(type(NP)):
    """The numpy adapter as an immutable framework's adapter on a device sees it: empty_like
    answers None, so the runtime allocates every out-of-place output (C API NULL output) and
    from_dlpack takes it over, the path of TF/JAX CUDA tensors (docs/gpu.md)."""

    def empty_like(self, tensor):
        return None


def test_outputs_the_runtime_allocates_for_allreduce_broadcast_and_grouped(hvd):
    adapter = _RuntimeAllocated()
    n, rank = hvd.size(), hvd.rank()
    x = np.arange(4, dtype=np.float32) + rank
    out = c.allreduce(adapter, x, None, "alloc.sum", runrun.Sum).wait()
    np.testing.assert_array_equal(out, np.arange(4) * n + n * (n - 1) / 2)
    assert not np.shares_memory(out, x)
    np.testing.assert_array_equal(x, np.arange(4, dtype=np.float32) + rank)  # input untouched
    b = c.broadcast(adapter, np.full(3, rank, np.int32), n - 1, "alloc.bcast").wait()
    np.testing.assert_array_equal(b, np.full(3, n - 1, np.int32))
    grouped = c.grouped_allreduce(adapter, [np.full(2, rank, np.int64), np.ones(3, np.int8)],
                                  None, "alloc.group", runrun.Max).wait()
    np.testing.assert_array_equal(grouped[0], np.full(2, n - 1))
    np.testing.assert_array_equal(grouped[1], np.ones(3, np.int8))


class _BufferArrays(type(NP)):
    """numpy arrays read by the fast path through the buffer protocol (as TF's and JAX's are),
    outputs allocated by the extension (capsule_finish, as TF's and JAX's are)."""

    fast_export = memoryview
    capsule_finish = staticmethod(lambda handle: NP.from_dlpack(handle.result))


BUFFER_ARRAYS = _BufferArrays()


def test_whole_call_is_resolved_in_the_extension(hvd):
    # Point 6: allreduce/broadcast hand their own arguments to one C entry; it answers a
    # handle, None (the general path takes the tensor, no second try) or NotImplemented (the
    # Python layer resolves the arguments first: an unnamed op, `average`, Adasum, ...).
    from runrun.common import loader, state
    from runrun.common.ops import Adasum
    from runrun.common.process_sets import global_process_set as gps

    c.allreduce(NP, np.ones(1), name="whole.setup", op=runrun.Sum).wait()  # loads the setup
    call = loader.core().fast_allreduce_call
    rt = state.runtime()
    a = np.ones(8, dtype=np.float32)
    for args in [(None, None, runrun.Sum), (True, "whole.avg", None),
                 (None, "whole.adasum", Adasum), (None, "whole.op", 7)]:
        average, name, op = args
        assert call(rt, NP, a, average, name, op, 1.0, 1.0, gps, True) is NotImplemented
    assert call(rt, NP, a, None, "whole.ip", None, 1.0, 1.0, gps, 1) is NotImplemented
    assert call(rt, object(), a, None, "whole.ad", None, 1.0, 1.0, gps, True) is NotImplemented
    assert call(rt, NP, a[::2], None, "whole.strided", None, 1.0, 1.0, gps, True) is None
    handle = call(rt, NP, a, None, "whole.ok", runrun.Sum, 2.0, 1.0, gps, True)
    assert type(handle) is Handle and handle.name == "whole.ok"
    assert handle.wait() is a and np.array_equal(a, np.full(8, 2.0 * hvd.size()))
    b = np.full(3, float(hvd.rank()), dtype=np.float64)
    bcast = loader.core().fast_broadcast_call(rt, NP, b, 0, "whole.bcast", gps, True)
    assert type(bcast) is Handle and bcast.wait() is b and np.array_equal(b, np.zeros(3))
    # _fast_members follows the adapter's members when one is set on the instance.
    adapter = _BufferArrays()
    adapter.fast_export = None
    assert adapter._fast_members == (True, None, adapter.fast_finish)


def test_buffer_protocol_inputs_allocate_no_tracked_objects(hvd):
    # Point 6: an input read through the buffer protocol (TF, JAX) is held by a capsule until
    # its op completed, not by a memoryview and its managed buffer (two GC-tracked objects per
    # pending op before); results as the general path's.
    import gc

    arrays = [np.full(256, float(i), dtype=np.float32) for i in range(100)]
    names = [f"buffer.{i}" for i in range(100)]
    enabled = gc.isenabled()
    gc.disable()
    try:
        before = gc.get_count()[0]
        handles = [c.allreduce(BUFFER_ARRAYS, x, name=n, op=runrun.Sum, in_place=True)
                   for x, n in zip(arrays, names)]
        grown = gc.get_count()[0] - before
    finally:
        if enabled:
            gc.enable()
    assert all(type(h) is Handle for h in handles)
    assert grown < 20, grown
    for i, (h, x) in enumerate(zip(handles, arrays)):
        assert h.wait() is x and np.array_equal(x, np.full(256, float(i * hvd.size())))


def test_extension_outputs_are_reused_and_correct(hvd):
    # Point 6: out-of-place outputs the extension allocates are reused by size once freed
    # (csrc/output_blocks.h); each result is right and its own array while alive.
    src = np.arange(256, dtype=np.float32)
    first = c.allreduce(BUFFER_ARRAYS, src, name="reuse.0", op=runrun.Sum).wait()
    address = first.__array_interface__["data"][0]
    assert np.array_equal(first, src * hvd.size()) and address % 64 == 0
    del first
    second = c.allreduce(BUFFER_ARRAYS, src + 1, name="reuse.1", op=runrun.Max).wait()
    assert second.__array_interface__["data"][0] == address
    third = c.allreduce(BUFFER_ARRAYS, src, name="reuse.2", op=runrun.Min).wait()
    assert third.__array_interface__["data"][0] != address
    assert np.array_equal(second, src + 1) and np.array_equal(third, src)
