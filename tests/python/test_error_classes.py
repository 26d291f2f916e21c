"""Each refusal's exception class against horovod.torch's (0.28.1): scripts written for Horovod
catch what Horovod raises. Where Horovod refuses with a ValueError, runrun raises an
InvalidArgumentError (a ValueError, not a RuntimeError); where Horovod's core refuses the op
once enqueued (a RuntimeError: HorovodInternalError), runrun raises an
InvalidArgumentRuntimeError, which is both, and never a HorovodInternalError (elastic training
must not retry a call that can only fail again)."""

import os
import subprocess
import sys

import pytest
import torch
from conftest import on_rank_0_only


def test_refusals_horovod_raises_as_runtime_errors(hvd):
    sparse = torch.ones(4).to_sparse()
    calls = {
        "reducescatter Adasum": lambda: hvd.reducescatter(torch.ones(4), op=hvd.Adasum),
        "reducescatter_async Max": lambda: hvd.reducescatter_async(torch.ones(4), op=hvd.Max),
        "grouped_reducescatter Product":
            lambda: hvd.grouped_reducescatter([torch.ones(4)], op=hvd.Product),
        "reducescatter of a 0-d tensor": lambda: hvd.reducescatter(torch.tensor(1.0)),
        "allgather_async of a 0-d tensor": lambda: hvd.allgather_async(torch.tensor(1.0)),
        "sparse_allreduce_async of a dense tensor":
            lambda: hvd.sparse_allreduce_async(torch.ones(4), "dense", hvd.Sum),
        "sparse_allreduce_async Adasum":
            lambda: hvd.sparse_allreduce_async(sparse, "adasum", hvd.Adasum),
    }
    for what, call in calls.items():
        with pytest.raises(RuntimeError) as info:
            call()
        error = info.value
        assert isinstance(error, hvd.InvalidArgumentRuntimeError), what
        assert isinstance(error, hvd.InvalidArgumentError) and isinstance(error, ValueError), what
        assert not isinstance(error, hvd.HorovodInternalError), what
    # Nothing was enqueued: the runtime goes on.
    assert hvd.allreduce(torch.ones(1), op=hvd.Sum, name="after_refusals").item() == hvd.size()


def test_refusals_horovod_raises_as_value_errors(hvd):
    model = torch.nn.Linear(2, 1)
    calls = {
        "unsupported dtype": lambda: hvd.allreduce(torch.ones(2, dtype=torch.complex64)),
        "non-contiguous in place": lambda: hvd.allreduce_(torch.ones(3, 3).t()),
        "op and average": lambda: hvd.allreduce(torch.ones(2), op=hvd.Sum, average=True),
        "broadcast_parameters of a bad type": lambda: hvd.broadcast_parameters(3),
        "broadcast_optimizer_state of LBFGS":
            lambda: hvd.broadcast_optimizer_state(torch.optim.LBFGS(model.parameters())),
        "duplicate parameter names": lambda: hvd.DistributedOptimizer(
            torch.optim.SGD(model.parameters(), lr=1),
            named_parameters=[("w", model.weight), ("w", model.bias)]),
        "predivide without Average": lambda: hvd.DistributedOptimizer(
            torch.optim.SGD(model.parameters(), lr=1), op=hvd.Sum,
            gradient_predivide_factor=2.0),
        "unregistered process set":
            lambda: hvd.allreduce(torch.ones(1), process_set=hvd.ProcessSet([0])),
    }
    for what, call in calls.items():
        with pytest.raises(ValueError) as info:
            call()
        assert not isinstance(info.value, RuntimeError), what


@on_rank_0_only
def test_not_initialized_is_a_value_error_for_queries_and_a_runtime_error_for_ops():
    # Horovod: rank() before init() raises ValueError; a collective raises
    # HorovodInternalError (its core's "not initialized" precondition), a RuntimeError.
    # In an interpreter of its own: this one's runtime is running.
    script = (
        "import torch, runrun.torch as hvd\n"
        "for call in (hvd.rank, lambda: hvd.allreduce(torch.ones(1)),\n"
        "             lambda: hvd.broadcast_(torch.ones(1), 0)):\n"
        "    try:\n"
        "        call()\n"
        "    except Exception as e:\n"
        "        print(isinstance(e, ValueError), isinstance(e, RuntimeError),\n"
        "              isinstance(e, hvd.HorovodInternalError))\n")
    package_dir = os.path.dirname(os.path.dirname(os.path.abspath(
        __import__("runrun").__file__)))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, timeout=120, cwd="/",
                         env=dict(os.environ, PYTHONPATH=package_dir)).stdout.split("\n")
    assert out[:3] == ["True True False"] * 3, out
