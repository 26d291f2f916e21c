"""init, topology and build queries, timeline."""

import json
import os

import torch


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
    for query in (hvd.mpi_built, hvd.gloo_built, hvd.nccl_built, hvd.cuda_built,
                  hvd.mpi_threads_supported, hvd.mpi_enabled, hvd.gloo_enabled):
        assert isinstance(query(), bool)
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
    # and in-process local ranks; NCCL and CUDA tensors are always built, their libraries loaded
    # at run time (docs/gpu.md), so they are True even on this machine without a GPU.
    assert hvd.gloo_built() is True
    assert hvd.nccl_built() is True
    assert hvd.cuda_built() is True
    assert hvd.ddl_built() is False and hvd.ccl_built() is False and hvd.rocm_built() is False


def test_timeline_is_valid_json(hvd, tmp_path):
    path = tmp_path / f"timeline.{hvd.rank()}.json"
    hvd.start_timeline(str(path))
    hvd.allreduce(torch.ones(4), name="timeline_tensor")
    hvd.stop_timeline()
    text = path.read_text()
    json.loads(text)
    assert "timeline_tensor" in text
