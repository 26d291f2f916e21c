"""init, topology and build queries, timeline."""

import json
import os
import shutil
import subprocess
import time

import pytest
import torch
from conftest import on_rank_0_only


def test_topology(hvd):
    assert hvd.is_initialized()
    assert 0 <= hvd.rank() < hvd.size()
    assert 0 <= hvd.local_rank() < hvd.local_size() <= hvd.size()
    assert 0 <= hvd.cross_rank() < hvd.cross_size()
    expected = os.environ.get("OMPI_COMM_WORLD_SIZE") or os.environ.get("RUNRUN_SIZE")
    if expected:
        assert hvd.size() == int(expected)
    ranks = hvd.allgather(torch.tensor([hvd.rank()]))
    assert ranks.tolist() == list(range(hvd.size()))
    # Homogeneous: every host has as many ranks as every other, i.e. all local sizes agree.
    local_sizes = hvd.allgather(torch.tensor([hvd.local_size()])).tolist()
    assert hvd.is_homogeneous() is (len(set(local_sizes)) == 1)


def test_build_and_backend_queries(hvd):
    # Horovod's types: bool for every query but nccl_built(), an int (bool is an int
    # subclass, hence `type(...) is`).
    for query in (hvd.mpi_built, hvd.gloo_built, hvd.cuda_built, hvd.ddl_built, hvd.ccl_built,
                  hvd.rocm_built, hvd.mpi_threads_supported, hvd.mpi_enabled,
                  hvd.gloo_enabled):
        assert type(query()) is bool, query.__name__
    assert type(hvd.nccl_built()) is int
    assert hvd.mpi_enabled() != hvd.gloo_enabled() or not (hvd.mpi_enabled() or
                                                           hvd.gloo_enabled())
    if hvd.mpi_enabled():
        assert hvd.mpi_built()
    # The launcher's mode picks the backend (RUNRUN_BACKEND=auto): runrun --gloo runs Gloo.
    if os.environ.get("RUNRUN_CONTROLLER") == "gloo":
        assert hvd.gloo_enabled() and hvd.gloo_built() and not hvd.mpi_enabled()
    elif os.environ.get("RUNRUN_CONTROLLER") == "mpi":
        assert hvd.mpi_enabled() and not hvd.gloo_enabled()
    hvd.init()  # idempotent


def test_built_queries_report_only_what_runs(hvd):
    # runrun implements MPI, Gloo (built from Debian's libgloo-dev, which `make test` installs)
    # and in-process local ranks; CUDA tensors are always built, their libraries loaded at run
    # time (docs/gpu.md), so cuda_built() is True even on this machine without a GPU.
    assert hvd.gloo_built() is True
    assert hvd.cuda_built() is True
    assert hvd.ddl_built() is False and hvd.ccl_built() is False and hvd.rocm_built() is False
    # nccl_built() is the version of the NCCL the runtime's search finds, 0 where none is
    # (as on a machine without one).
    from runrun.common import nccl_probe

    assert hvd.nccl_built() == nccl_probe.nccl_version()
    if nccl_probe.find_library() is None:
        assert hvd.nccl_built() == 0


# A stand-in for libnccl: every entry point the runtime resolves, ncclGetVersion reporting
# VERSION (or failing with RESULT); -DWITHOUT_PREMULSUM leaves one entry point out.
FAKE_NCCL = r"""
int ncclGetVersion(int* version) { *version = VERSION; return RESULT; }
#define STUB(name) int name(void) { return 0; }
STUB(ncclGetErrorString) STUB(ncclGetUniqueId) STUB(ncclCommInitRank) STUB(ncclCommDestroy)
STUB(ncclCommAbort) STUB(ncclCommGetAsyncError) STUB(ncclAllReduce) STUB(ncclBroadcast)
STUB(ncclAllGather) STUB(ncclReduce) STUB(ncclReduceScatter) STUB(ncclSend) STUB(ncclRecv)
STUB(ncclGroupStart) STUB(ncclGroupEnd) STUB(ncclRedOpDestroy)
#ifndef WITHOUT_PREMULSUM
STUB(ncclRedOpCreatePreMulSum)
#endif
"""


def build_fake_nccl(tmp_path, name, version, result=0, without_premulsum=False):
    # Not named libnccl.so*: a loaded copy of that name would be found by later searches.
    source = tmp_path / "fake_nccl.c"
    source.write_text(FAKE_NCCL)
    out = tmp_path / f"{name}.so"
    command = [shutil.which("cc") or "cc", "-shared", "-fPIC", "-o", str(out), str(source),
               f"-DVERSION={version}", f"-DRESULT={result}"]
    if without_premulsum:
        command.append("-DWITHOUT_PREMULSUM")
    subprocess.run(command, check=True, capture_output=True)
    return str(out)


@on_rank_0_only
@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler for a fake libnccl")
def test_nccl_built_is_the_version_of_the_nccl_the_runtime_would_open(tmp_path, monkeypatch):
    # No `hvd` fixture: this runs on rank 0 only, so it must not init (a collective); the
    # build queries, as Horovod's, need no init.
    import runrun.torch as hvd

    good = build_fake_nccl(tmp_path, "fake_nccl_22304", 22304)
    monkeypatch.setenv("RUNRUN_NCCL_LIBRARY", good)
    assert hvd.nccl_built() == 22304 and type(hvd.nccl_built()) is int
    # Scripts written for Horovod compare it: a usable NCCL is never "too old" (< 2700).
    assert not (hvd.nccl_built() and hvd.nccl_built() < 2700)
    # What the runtime would refuse counts as none: too old, an entry point missing, a
    # failing ncclGetVersion, a path that does not open (no fallback to another search).
    old = build_fake_nccl(tmp_path, "fake_nccl_2708", 2708)
    missing = build_fake_nccl(tmp_path, "fake_nccl_nopremul", 22304, without_premulsum=True)
    failing = build_fake_nccl(tmp_path, "fake_nccl_failing", 22304, result=3)
    for path in (old, missing, failing, str(tmp_path / "absent" / "libnccl.so.2")):
        monkeypatch.setenv("RUNRUN_NCCL_LIBRARY", path)
        assert hvd.nccl_built() == 0 and type(hvd.nccl_built()) is int, path
    from runrun.common import nccl_probe

    assert nccl_probe.nccl_version({"RUNRUN_NCCL_LIBRARY": good}) == 22304


def test_timeline_is_valid_json(hvd, tmp_path):
    path = tmp_path / f"timeline.{hvd.rank()}.json"
    hvd.start_timeline(str(path))
    hvd.allreduce(torch.ones(4), name="timeline_tensor")
    hvd.stop_timeline()
    text = path.read_text()
    json.loads(text)
    assert "timeline_tensor" in text


def test_timeline_speaks_horovods_vocabulary(hvd, tmp_path):
    # What tools built on Horovod's timeline read: a trace "process" per tensor named
    # "allreduce.<name>", NEGOTIATE_ALLREDUCE, then ALLREDUCE holding the queueing and the
    # transport's part, global CYCLE_START marks with mark_cycles; and the file follows the job
    # (the events are there before stop_timeline).
    path = tmp_path / f"horovod_timeline.{hvd.rank()}.json"
    hvd.start_timeline(str(path), mark_cycles=True)
    hvd.allreduce(torch.ones(4), name="test_allreduce")
    written = time.monotonic()
    while "test_allreduce" not in path.read_text() and time.monotonic() - written < 10:
        time.sleep(0.001)
    print(f"timeline: the op's row was in the file {time.monotonic() - written:.4f} s after it")
    assert "test_allreduce" in path.read_text()
    hvd.stop_timeline()
    events = json.loads(path.read_text())
    rows = {e["pid"]: e["args"]["name"] for e in events
            if e["ph"] == "M" and e["name"] == "process_name"}
    assert rows[0] == f"rank {hvd.rank()}"
    (pid,) = [p for p, name in rows.items() if name == "allreduce.test_allreduce"]
    spans = [e["name"] for e in events if e["pid"] == pid and e["ph"] == "B"]
    assert spans[:3] == ["NEGOTIATE_ALLREDUCE", "ALLREDUCE", "QUEUE"], spans
    assert any(s.endswith("_ALLREDUCE") and s not in ("NEGOTIATE_ALLREDUCE", "ALLREDUCE")
               for s in spans), spans
    marks = [e for e in events if e["ph"] == "i" and e["name"] == "CYCLE_START"]
    assert marks and all(m["s"] == "g" for m in marks)
