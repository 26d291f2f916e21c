"""The public functions with their call in C (runrun.common.bound_calls, csrc/bound_call.h):
a script must see the Python function's behaviour (results, defaults, errors, name, signature),
and a tensor the fast path does not take must reach the general path without being exported
again on the way."""

import inspect
import pickle
import pydoc

import numpy as np
import pytest
import torch

from runrun.common import collectives, handles, loader, state
from runrun.common.basics import NotInitializedError
from runrun.common.exceptions import InvalidArgumentError
from runrun.common.handles import CombinedHandle
from runrun.common.numpy_tensors import ADAPTER as NUMPY
from runrun.torch import collectives as torch_collectives
from runrun.torch.tensor_bridge import ADAPTER as TORCH


def bound_type():
    return type(loader.core().bound_wait(len))


def test_public_functions_are_bound_and_look_like_theirs(hvd):
    for name, function in [("allreduce_async_", hvd.allreduce_async_),
                           ("allreduce_async", hvd.allreduce_async),
                           ("synchronize", hvd.synchronize),
                           ("allreduce", collectives.allreduce)]:
        assert type(function) is bound_type(), name
        wrapped = function.__wrapped__
        assert inspect.isfunction(wrapped) and wrapped.__name__ == name
        assert function.__name__ == name and function.__doc__ == wrapped.__doc__
        assert inspect.signature(function) == inspect.signature(wrapped)
        assert inspect.isroutine(function)  # help() documents it as a function
        assert name + "(" in pydoc.render_doc(function, renderer=pydoc.plaintext)
        assert pickle.loads(pickle.dumps(function)) is function
    # The optimizer and `from ... import` see the same objects.
    assert torch_collectives.allreduce_async_ is hvd.allreduce_async_
    assert handles.synchronize is hvd.synchronize


# Every way a script passes the arguments: positional, by keyword, defaults, Horovod's
# deprecated `average`, an unnamed op (auto-named), scale factors, an explicit process set.
CALLS = [
    ((), {"name": "bound.kw", "op": "Sum"}),
    (("average_none", None, "bound.pos", "Sum", 2.0, 0.5), {}),
    ((), {"name": "bound.avg", "average": True}),
    ((), {"name": "bound.default_op"}),
    ((), {}),
    ((), {"op": "Max", "name": "bound.ps", "process_set": "global"}),
    ((), {"prescale_factor": 3.0, "name": "bound.pre", "op": "Sum"}),
]


def materialize(hvd, args, kwargs):
    args = tuple(None if a == "average_none" else getattr(hvd, a) if a in ("Sum", "Max")
                 else a for a in args)
    kwargs = {k: getattr(hvd, v) if v in ("Sum", "Max") else
              hvd.global_process_set if v == "global" else v for k, v in kwargs.items()}
    return args[1:] if args and args[0] is None else args, kwargs


@pytest.mark.parametrize("in_place", [True, False])
@pytest.mark.parametrize("call", range(len(CALLS)))
def test_same_results_as_the_python_function(hvd, in_place, call):
    args, kwargs = materialize(hvd, *CALLS[call])
    function = hvd.allreduce_async_ if in_place else hvd.allreduce_async
    values = torch.arange(6, dtype=torch.float32) * (hvd.rank() + 1)
    bound_input, python_input = values.clone(), values.clone()
    bound_out = hvd.synchronize(function(bound_input, *args, **kwargs))
    python_out = hvd.synchronize(function.__wrapped__(python_input, *args, **kwargs))
    assert torch.equal(bound_out, python_out)
    assert (bound_out is bound_input) == in_place
    assert not torch.equal(bound_out, values) or hvd.size() == 1 or kwargs.get("op") is hvd.Max


def test_common_allreduce_bound_with_numpy(hvd):
    a = np.arange(8, dtype=np.float32)
    out = collectives.allreduce(NUMPY, a, name="bound.numpy", op=hvd.Sum).wait()
    assert np.array_equal(out, a * hvd.size())
    inplace = a.copy()
    collectives.allreduce(NUMPY, inplace, None, "bound.numpy_", hvd.Sum, 1.0, 1.0,
                          hvd.global_process_set, True).wait()
    assert np.array_equal(inplace, a * hvd.size())


def call_error(function, *args, **kwargs):
    with pytest.raises(Exception) as info:
        function(*args, **kwargs)
    return type(info.value), str(info.value)


@pytest.mark.parametrize("args,kwargs", [
    ((), {"nme": "x"}),                                         # unknown keyword
    ((None, "x", None, 1.0, 1.0, None, True), {}),              # too many positionals
    ((None,), {"average": None}),                               # twice
    (("not a name",), {"op": "Adasum!"}),                       # an op that is none
    ((), {"name": "bound.bad", "prescale_factor": "two"}),      # not a number
])
def test_same_errors_as_the_python_function(hvd, args, kwargs):
    t = torch.ones(4)
    bound = call_error(hvd.allreduce_async_, t, *args, **kwargs)
    python = call_error(hvd.allreduce_async_.__wrapped__, t, *args, **kwargs)
    assert bound == python


def test_missing_tensor_and_not_initialized(hvd, monkeypatch):
    assert call_error(hvd.allreduce_async_) == call_error(hvd.allreduce_async_.__wrapped__)
    monkeypatch.setattr(state, "_runtime", None)  # what the bound call reads
    with pytest.raises(NotInitializedError):
        hvd.allreduce_async_(torch.ones(2), name="bound.uninitialized")


def test_name_in_flight_raised_by_the_bound_call(hvd):
    # This rank's op stays pending until the others join it below (as in test_errors.py).
    r, n = hvd.rank(), hvd.size()
    pending = [hvd.allreduce_async_(torch.ones(4), name=f"bound.twice.{r}", op=hvd.Sum)]
    with pytest.raises(InvalidArgumentError, match=f"bound.twice.{r}"):
        hvd.allreduce_async_(torch.ones(4), name=f"bound.twice.{r}", op=hvd.Sum)
    hvd.allreduce(torch.ones(1), name="bound.twice.all_checked")
    pending += [hvd.allreduce_async_(torch.ones(4), name=f"bound.twice.{q}", op=hvd.Sum)
                for q in range(n) if q != r]
    for handle in pending:
        assert torch.equal(hvd.synchronize(handle), torch.full((4,), float(n)))


def test_a_tensor_the_fast_path_refuses_is_exported_once(hvd, monkeypatch):
    # Out of place, not contiguous: the fast path exports it, refuses it and the general path
    # takes a contiguous copy. Through the Python functions it would be exported three times
    # (torch's bound call, common's, common's Python body).
    exports = []
    allocate, export, finish = TORCH._fast_members

    def counting_export(tensor):
        exports.append(tensor.shape)
        return export(tensor)

    monkeypatch.setattr(TORCH, "fast_export", counting_export)
    assert TORCH._fast_members == (allocate, counting_export, finish)
    strided = torch.arange(12, dtype=torch.float32)[::2]
    out = hvd.synchronize(hvd.allreduce_async(strided, name="bound.strided", op=hvd.Sum))
    assert torch.equal(out, strided * hvd.size())
    assert len(exports) == 1


def test_synchronize_takes_combined_handles_and_refuses_others(hvd):
    a = hvd.allreduce_async(torch.ones(2), name="bound.c1", op=hvd.Sum)
    b = hvd.allreduce_async(torch.ones(2), name="bound.c2", op=hvd.Sum)
    combined = CombinedHandle([a, b], lambda outs: outs[0] + outs[1])
    assert torch.equal(hvd.synchronize(combined), torch.full((2,), 2.0 * hvd.size()))
    with pytest.raises(InvalidArgumentError, match="expected a handle"):
        hvd.synchronize(5)
    with pytest.raises(TypeError):
        hvd.synchronize()
