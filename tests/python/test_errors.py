"""Error cases: call-time checks, and runtime failures raised on every rank."""

import pytest
import torch


def test_unsupported_dtype_is_refused_at_call_time(hvd):
    with pytest.raises(hvd.InvalidArgumentError, match="dtype torch.uint16"):
        hvd.allreduce(torch.ones(3, dtype=torch.uint16))
    with pytest.raises(hvd.InvalidArgumentError, match="complex"):
        hvd.allgather(torch.ones(3, dtype=torch.complex64))


def test_non_contiguous_in_place_is_refused(hvd):
    t = torch.ones(4, 4).t()
    with pytest.raises(hvd.InvalidArgumentError, match="contiguous"):
        hvd.allreduce_(t)
    # Out of place is fine: the input is copied to a contiguous tensor.
    assert torch.equal(hvd.allreduce(t, op=hvd.Sum), torch.full((4, 4), float(hvd.size())))


def test_wrong_device_and_type(hvd):
    with pytest.raises(hvd.InvalidArgumentError, match="meta"):
        hvd.allreduce(torch.ones(2, device="meta"))
    with pytest.raises(hvd.InvalidArgumentError, match="torch.Tensor"):
        hvd.allreduce([1, 2, 3])
    with pytest.raises(hvd.InvalidArgumentError, match="Average or op=Sum"):
        hvd.reducescatter(torch.ones(4), op=hvd.Max)


def test_shape_mismatch_raises_on_every_rank(hvd):
    t = torch.ones(hvd.rank() + 2)
    with pytest.raises(hvd.HorovodInternalError) as info:
        hvd.allreduce(t, name="mismatched")
    assert isinstance(info.value, RuntimeError) and not isinstance(info.value, ValueError)
    assert "mismatched" in str(info.value)
    # The runtime keeps working afterwards.
    assert torch.equal(hvd.allreduce(torch.ones(2), op=hvd.Sum, name="after_mismatch"),
                       torch.full((2,), float(hvd.size())))


def test_dtype_mismatch_raises_on_every_rank(hvd):
    t = torch.ones(3, dtype=torch.float32 if hvd.rank() == 0 else torch.float64)
    with pytest.raises(hvd.HorovodInternalError, match="dtype_mismatch"):
        hvd.allreduce(t, name="dtype_mismatch")


def test_unregistered_process_set(hvd):
    with pytest.raises(hvd.InvalidArgumentError, match="not registered"):
        hvd.allreduce(torch.ones(1), process_set=hvd.ProcessSet([0]))


def test_argument_errors_are_value_errors_not_internal_errors(hvd):
    # As Horovod classifies them: scripts catch HorovodInternalError to recover from a failed
    # collective (elastic training), so a bad argument must not be one.
    with pytest.raises(ValueError, match="complex") as info:
        hvd.allreduce(torch.ones(3, dtype=torch.complex64))
    assert not isinstance(info.value, hvd.HorovodInternalError)
    # A name already in flight: this rank's op stays pending until the others join it below.
    r, n = hvd.rank(), hvd.size()
    pending = [hvd.allreduce_async(torch.ones(1), name=f"in_flight.{r}")]
    with pytest.raises(ValueError, match="already in flight") as info:
        hvd.allreduce_async(torch.ones(1), name=f"in_flight.{r}")
    assert not isinstance(info.value, hvd.HorovodInternalError)
    # Every rank has made its duplicate call before any rank joins another's op (without this,
    # a fast rank could complete a slow rank's first op before the slow rank's duplicate call).
    hvd.allreduce(torch.ones(1), name="in_flight.all_checked")
    pending += [hvd.allreduce_async(torch.ones(1), name=f"in_flight.{q}")
                for q in range(n) if q != r]
    for handle in pending:
        assert hvd.synchronize(handle).item() == 1.0
    with pytest.raises(NotImplementedError, match="Adasum") as info:
        hvd.allreduce(torch.ones(1, dtype=torch.int64), op=hvd.Adasum)
    assert not isinstance(info.value, hvd.HorovodInternalError)


def test_shut_down_by_another_rank_is_a_runtime_failure(hvd):
    # Rank 0 shuts down; the others' next collective fails with ShutDownError (a
    # HorovodInternalError), not an argument error, whichever op it is. Then every rank
    # starts a new runtime, so the tests after this one run as before.
    if hvd.rank() == 0:
        hvd.shutdown()
    else:
        shut_down_by_0 = r"runrun was shut down: rank \[0\] of process set 0 called"
        with pytest.raises(hvd.ShutDownError, match=shut_down_by_0) as info:
            hvd.add_process_set([0, 1])
        assert not isinstance(info.value, ValueError)
        with pytest.raises(hvd.ShutDownError):
            hvd.allreduce(torch.ones(1), name="after_peer_shutdown")
        hvd.shutdown()
    hvd.init()
    assert hvd.allreduce(torch.ones(1), op=hvd.Sum, name="after_restart").item() == hvd.size()


def test_names_with_nul_or_lone_surrogates_are_refused(hvd):
    # Names are C strings in the runtime: 'c\0X' on one rank and 'c\0Y' on another were cut at
    # the NUL and summed as one tensor (issue 36, point 6).
    t = torch.ones(3)
    name = f"c\0{'XY'[hvd.rank() % 2]}"
    for call in (lambda: hvd.allreduce(t, name=name),
                 lambda: hvd.allreduce_(torch.ones(3), name=name),
                 lambda: hvd.broadcast(t, 0, name=name),
                 lambda: hvd.allgather(t, name=name),
                 lambda: hvd.grouped_allreduce([t, t], name=name),
                 lambda: hvd.alltoall(t, name=name),
                 lambda: hvd.reducescatter(torch.ones(hvd.size() * 2), name=name)):
        with pytest.raises(hvd.InvalidArgumentError, match="contains a NUL character"):
            call()
    with pytest.raises(hvd.InvalidArgumentError, match="not valid Unicode text"):
        hvd.allreduce(t, name="grad\udc80")
    # Other non-ASCII names are fine, and the runtime keeps working.
    assert torch.equal(hvd.allreduce(t, op=hvd.Sum, name="gradient.héllo.β"),
                       torch.full((3,), float(hvd.size())))
