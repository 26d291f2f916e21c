"""Handles that are dropped early, and barriers while other ops are pending (issue 9, points 3
and 4): dropping a handle never waits for peers, the runtime keeps what the op borrowed alive
until it completed, and barrier() is a synchronization point, not a drain."""

import gc
import threading

import pytest
import torch

from runrun.common import loader


def _drop_in_thread(drop):
    """Runs `drop` (which releases the last reference to a pending handle) in a thread and
    returns whether it finished; a destructor that waits for peers would not."""
    dropper = threading.Thread(target=drop, daemon=True)
    dropper.start()
    dropper.join(timeout=20)
    return not dropper.is_alive()


def test_dropping_a_pending_handle_does_not_wait(hvd):
    last = hvd.size() - 1
    rows = 1000
    if hvd.rank() == last:
        box = {"t": torch.full((rows,), 7.0), "h": None}
        box["h"] = hvd.allgather_async(box["t"], name="dropped_early")

        def drop():
            box.clear()  # the handle and the tensor: the op still runs on borrowed memory
            gc.collect()

        assert _drop_in_thread(drop), "dropping a pending handle waited for the other ranks"
        assert loader.core().orphaned_op_count() >= 1
        # Memory freed under the op would likely be reused right away by a tensor like this.
        decoy = torch.full((rows,), -1.0)
    hvd.barrier()  # completes although 'dropped_early' is pending on the last rank only
    if hvd.rank() != last:
        gathered = hvd.allgather(torch.full((rows,), float(hvd.rank())), name="dropped_early")
        assert torch.equal(gathered[last * rows:], torch.full((rows,), 7.0))
    hvd.barrier()
    if hvd.rank() == last:
        del decoy
        # Parked ops are released as soon as they completed (checked at the next enqueue).
        hvd.allreduce(torch.ones(1), name="reap_trigger_a")
        assert loader.core().orphaned_op_count() == 0
    else:
        hvd.allreduce(torch.ones(1), name="reap_trigger_a")


def _enqueue(hvd, op, t, name):
    if op == "allreduce":
        return hvd.allreduce_async(t, op=hvd.Sum, name=name)
    if op == "allgather":
        return hvd.allgather_async(t, name=name)
    if op == "broadcast":
        return hvd.broadcast_async(t, root_rank=0, name=name)
    return hvd.reducescatter_async(t, op=hvd.Sum, name=name)


@pytest.mark.parametrize("op", ["allreduce", "allgather", "broadcast", "reducescatter"])
@pytest.mark.parametrize("cached", [False, True], ids=["first_sight", "cached"])
def test_barrier_completes_while_an_op_is_pending(hvd, op, cached):
    t = torch.full((hvd.size() * 2,), float(hvd.rank() + 1))
    name = ("pending_cached_" if cached else "pending_") + op
    if cached:  # the same op once before: now it takes the response cache's path
        hvd.synchronize(_enqueue(hvd, op, t.clone(), name))
    if hvd.rank() == 0:
        handle = _enqueue(hvd, op, t, name)
        hvd.barrier()
    else:
        hvd.barrier()
        handle = _enqueue(hvd, op, t, name)
    result = hvd.synchronize(handle)
    n = hvd.size()
    if op == "allreduce":
        expected = torch.full((2 * n,), float(n * (n + 1) // 2))
    elif op == "allgather":
        expected = torch.cat([torch.full((2 * n,), float(r + 1)) for r in range(n)])
    elif op == "broadcast":
        expected = torch.full((2 * n,), 1.0)
    else:
        expected = torch.full((2,), float(n * (n + 1) // 2))
    assert torch.equal(result, expected)
