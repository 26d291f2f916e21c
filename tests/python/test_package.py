"""Parts of the package that need no running runtime (and no peer)."""

import os
import subprocess
import sys

import pytest
import torch
from conftest import on_rank_0_only

from runrun.common.exceptions import (
    HorovodInternalError,
    InvalidArgumentError,
    MismatchError,
    ShutDownError,
    UnsupportedError,
    exception_for_status,
)
from runrun.common.ops import Adasum, Average, Max, Min, Product, Sum, resolve_op
from runrun.torch.compression import Compression
from runrun.torch.names import group_names, op_name

PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__import__("runrun").__file__)))


def run_fresh_python(code, timeout):
    """`code` in a new interpreter (no runtime, nothing imported yet); asserts it exited 0."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=timeout, env=dict(os.environ, PYTHONPATH=PKG_DIR), cwd="/")
    assert out.returncode == 0, out.stdout + out.stderr
    return out


@on_rank_0_only
def test_init_refuses_a_comm_list_that_is_not_every_rank():
    """Horovod's init(comm=[ranks]) makes a smaller world; runrun's world is every launched
    rank, so another list is refused (and leaves nothing initialized), not silently ignored."""
    code = ("import os\n"
            "for k in [k for k in os.environ if k.startswith(('RUNRUN_', 'OMPI_', 'PMIX_'))]:\n"
            "    del os.environ[k]\n"
            "import runrun.torch as hvd\n"
            "from runrun.common.exceptions import InvalidArgumentError\n"
            "for comm in ([0, 1], [3], [0, 'a']):\n"
            "    try:\n"
            "        hvd.init(comm=comm)\n"
            "        raise SystemExit(f'init(comm={comm}) was accepted')\n"
            "    except InvalidArgumentError as e:\n"
            "        print(e)\n"
            "    assert not hvd.is_initialized()\n"
            "hvd.init(comm=[])\n"  # Horovod's "every rank", as None
            "assert hvd.size() == 1\n"
            "hvd.shutdown()\n"
            "hvd.init(comm=[0])\n"
            "assert hvd.size() == 1\n")
    lines = run_fresh_python(code, timeout=60).stdout.splitlines()
    assert "init(comm=[0, 1]): runrun's world is every launched rank" in lines[0]
    assert "must name all 1 ranks (0..0)" in lines[0] and "ProcessSet" not in lines[0]
    assert "init(comm=[3])" in lines[1]
    assert "init(comm=[0, 'a'])" in lines[2] and "ProcessSet" not in lines[2]


@on_rank_0_only
def test_import_runrun_without_torch():
    code = ("import sys; sys.modules['torch'] = None\n"
            "import runrun\n"
            "assert 'torch' not in [m for m in sys.modules if sys.modules[m] is not None]\n"
            "print(runrun.mpi_built(), runrun.Average)")
    out = run_fresh_python(code, timeout=60)
    assert out.stdout.split()[1] == "0"


@on_rank_0_only
def test_an_op_before_init_says_to_call_init():
    """Every adapter's ops before init(), eagerly and inside jax.jit, raise NotInitializedError
    (a ValueError, as Horovod's "has not been initialized") saying what to do, not an error
    about the process set the op would default to."""
    code = ("import jax, jax.numpy as jnp, torch\n"
            "import runrun.torch as hvd, runrun.jax as jhvd\n"
            "from runrun.common.basics import NotInitializedError\n"
            "calls = [lambda: hvd.allreduce(torch.ones(2)),\n"
            "         lambda: hvd.allreduce_async_(torch.ones(2), name='x'),\n"
            "         lambda: hvd.broadcast_(torch.ones(2), 0),\n"
            "         lambda: jhvd.allgather(jnp.ones(2)),\n"
            "         lambda: jax.jit(lambda a: jhvd.allreduce(a))(jnp.ones(2)),\n"
            "         lambda: hvd.ProcessSet([0]).size()]\n"
            "for call in calls:\n"
            "    try:\n"
            "        call()\n"
            "    except NotInitializedError as e:\n"
            "        assert isinstance(e, ValueError) and 'call init() first' in str(e), e\n"
            "        print('ok')\n")
    out = run_fresh_python(code, timeout=120)
    assert out.stdout.split() == ["ok"] * 6, out.stdout + out.stderr


def test_exception_hierarchy():
    assert issubclass(HorovodInternalError, RuntimeError)
    assert issubclass(InvalidArgumentError, ValueError)
    assert issubclass(UnsupportedError, NotImplementedError)
    # As in Horovod, argument errors are not failures of the runtime: code that catches
    # HorovodInternalError to recover (elastic training) must not swallow them.
    assert not issubclass(InvalidArgumentError, HorovodInternalError)
    assert not issubclass(UnsupportedError, HorovodInternalError)
    assert exception_for_status(5) is ShutDownError and issubclass(ShutDownError, RuntimeError)
    assert exception_for_status(2) is MismatchError
    assert exception_for_status(999) is HorovodInternalError


def test_resolve_op():
    assert resolve_op(None) == Average
    assert resolve_op(None, average=False) == Sum
    assert [resolve_op(o) for o in (Adasum, Min, Max, Product)] == [Adasum, Min, Max, Product]
    with pytest.raises(InvalidArgumentError):
        resolve_op(Sum, average=True)
    with pytest.raises(InvalidArgumentError, match="unknown reduction op 42"):
        resolve_op(42)
    # Horovod's numbers (horovod/common/message.h): a script passing a number means the same op.
    assert [int(o) for o in (Average, Sum, Adasum, Min, Max, Product)] == [0, 1, 2, 3, 4, 5]
    assert [resolve_op(n) for n in range(6)] == [Average, Sum, Adasum, Min, Max, Product]


def test_names_are_sequential_per_op():
    a, b = op_name("testop", None), op_name("testop", None)
    assert a.startswith("testop.noname.") and b != a
    assert op_name("testop", "given") == "given"
    assert group_names("testop", "g", 2) == ["g.0", "g.1"]


@pytest.mark.parametrize("compression,wire", [(Compression.fp16, torch.float16),
                                              (Compression.bf16, torch.bfloat16)])
def test_compression_round_trip(compression, wire):
    t = torch.tensor([1.5, -2.0, 3.25])
    compressed, ctx = compression.compress(t)
    assert compressed.dtype == wire
    restored = compression.decompress(compressed, ctx)
    assert restored.dtype == torch.float32 and torch.equal(restored, t)
    ints = torch.tensor([1, 2])
    assert compression.compress(ints)[0] is ints
    assert Compression.none.compress(t)[0] is t


def test_horovods_module_paths():
    """Scripts import from Horovod's inner modules: `from horovod.torch.mpi_ops import
    synchronize`, `from horovod.common.exceptions import HostsUpdatedInterrupt`."""
    import runrun.elastic
    import runrun.torch as hvd
    from runrun.common.exceptions import HostsUpdatedInterrupt
    from runrun.torch import mpi_ops

    for name in ("allreduce_async_", "synchronize", "poll", "Sum", "Average", "size", "rank",
                 "allgather", "broadcast_", "join", "barrier", "HorovodInternalError"):
        assert getattr(mpi_ops, name) is getattr(hvd, name), name
    assert runrun.elastic.HostsUpdatedInterrupt is HostsUpdatedInterrupt
    assert hvd.elastic.HostsUpdatedInterrupt is HostsUpdatedInterrupt
