"""runrun._core.Handle as a plain CPython type (issue 12 point 6): what it keeps alive and for how
long, what it hands back, and the runtime's negotiation counters (Runtime.counters) that the
per-tensor benchmark reports."""

import gc
import sys
import weakref

import torch

from runrun.common import basics, loader


def test_handle_holds_its_tensor_until_dropped(hvd):
    t = torch.ones(256)
    base = sys.getrefcount(t)
    h = hvd.allreduce_async_(t, name="handle_type.0", op=hvd.Sum)
    assert type(h) is loader.core().Handle
    assert not gc.is_tracked(h)  # no object the cyclic GC tracks per op
    assert sys.getrefcount(t) > base  # the handle keeps the tensor (its result) alive
    assert h.op == "allreduce" and h.name == "handle_type.0"
    assert "pending" in repr(h) or "done" in repr(h)
    ref = weakref.ref(h)
    out = hvd.synchronize(h)
    assert out is t and torch.equal(t, torch.full((256,), float(hvd.size())))
    assert h.result is t and h.wait() is t  # later waits return the result again
    assert repr(h) == "<runrun handle done>"
    del h, out
    assert ref() is None
    assert sys.getrefcount(t) == base


def test_many_handles_leak_nothing(hvd):
    ts = [torch.ones(16) for _ in range(100)]
    bases = [sys.getrefcount(t) for t in ts]
    runtime = basics.runtime()
    runtime_base = sys.getrefcount(runtime)
    for step in range(3):
        hs = [hvd.allreduce_async_(t, name=f"handle_type.many.{i}", op=hvd.Sum)
              for i, t in enumerate(ts)]
        assert sys.getrefcount(runtime) == runtime_base + len(hs)  # each pending op keeps it
        for h in hs:
            hvd.synchronize(h)
        del hs, h
    assert [sys.getrefcount(t) for t in ts] == bases
    assert sys.getrefcount(runtime) == runtime_base
    assert all(torch.equal(t, torch.full((16,), float(hvd.size() ** 3))) for t in ts)


def test_out_of_place_handle_returns_a_new_tensor(hvd):
    t = torch.full((8,), float(hvd.rank()))
    h = hvd.allreduce_async(t, name="handle_type.out_of_place", op=hvd.Sum)
    assert h.wait_for(timeout=60.0) is True  # waits without building the result
    assert h.poll()
    out = hvd.synchronize(h)
    assert out is not t
    assert torch.equal(out, torch.full((8,), float(sum(range(hvd.size())))))
    assert h.poll()


def test_counters_count_rounds_and_cache_hits(hvd):
    runtime = basics.runtime()
    before = runtime.counters()
    assert set(before) == {"negotiation_rounds", "coordinator_rounds", "cache_hits",
                           "fused_collectives"}
    for _ in range(3):  # the first goes to the coordinator, the next two hit the cache
        hvd.allreduce(torch.ones(4), name="handle_type.counted", op=hvd.Sum)
    after = runtime.counters(0)
    assert after["negotiation_rounds"] >= before["negotiation_rounds"] + 3
    assert after["coordinator_rounds"] >= before["coordinator_rounds"] + 1
    assert after["cache_hits"] >= before["cache_hits"] + 2
