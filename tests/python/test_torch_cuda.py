"""CUDA tensors through runrun.torch (issue 11, points 1 and 3): every op on tensors of the GPU
that hvd.local_rank() picks, outputs on that device, and the stream hand-over (work enqueued on
torch's current stream before the op is seen by it; the output is ready for that stream once
wait() returned). They need a GPU and are skipped with the reason "no CUDA device" elsewhere;
the same logic runs without a GPU against a fake CUDA runtime and a fake NCCL in tests/unit/gpu
(gpu.staging.*, gpu.nccl.*). With one GPU per rank and NCCL found (torch's nvidia-nccl wheel),
the ops run over NCCL (RUNRUN_GPU_OPERATIONS=auto); with several ranks on one GPU, without NCCL
or with RUNRUN_GPU_OPERATIONS=staging they are staged over MPI/Gloo: run this file both ways on a
GPU machine (docs/gpu.md)."""

import pytest
import torch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")

DTYPES = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
          torch.bfloat16, torch.float32, torch.float64, torch.bool)


@pytest.fixture
def device(hvd):
    index = hvd.local_rank() % torch.cuda.device_count()
    torch.cuda.set_device(index)
    return torch.device("cuda", index)


@pytest.mark.parametrize("dtype", DTYPES)
def test_allreduce_on_the_gpu(hvd, device, dtype):
    n = hvd.size()
    if dtype == torch.bool:
        t = torch.tensor([hvd.rank() == 0, False, True], device=device)
        out = hvd.allreduce(t, op=hvd.Sum, name=f"cuda.or.{dtype}")
        assert out.device == device
        assert out.tolist() == [True, False, True]
        return
    t = torch.arange(5, device=device).to(dtype) + 2 * hvd.rank()
    out = hvd.allreduce(t, op=hvd.Average, name=f"cuda.avg.{dtype}")
    assert out.device == device
    expected = torch.arange(5).to(dtype) + (n - 1)
    assert torch.equal(out.cpu(), expected)
    scaled = hvd.allreduce(t, op=hvd.Sum, prescale_factor=2.0, postscale_factor=0.5,
                           name=f"cuda.scaled.{dtype}")
    assert torch.equal(scaled.cpu(), torch.arange(5).to(dtype) * n + n * (n - 1))


@pytest.mark.parametrize("dtype", DTYPES)
def test_allgather_broadcast_alltoall_reducescatter_on_the_gpu(hvd, device, dtype):
    rank, n = hvd.rank(), hvd.size()
    rows = torch.full((rank + 1, 2), rank % 2, device=device).to(dtype)
    gathered = hvd.allgather(rows, name=f"cuda.gather.{dtype}")
    assert gathered.device == device
    expected = torch.cat([torch.full((r + 1, 2), r % 2).to(dtype) for r in range(n)])
    assert torch.equal(gathered.cpu(), expected)

    b = hvd.broadcast(torch.full((3,), rank % 2, device=device).to(dtype), root_rank=n - 1,
                      name=f"cuda.bcast.{dtype}")
    assert b.device == device
    assert torch.equal(b.cpu(), torch.full((3,), (n - 1) % 2).to(dtype))

    sent = torch.full((n,), rank % 2, device=device).to(dtype)
    received, splits = hvd.alltoall(sent, name=f"cuda.a2a.{dtype}")
    assert received.device == device
    assert torch.equal(received.cpu(), torch.tensor([r % 2 for r in range(n)]).to(dtype))
    assert splits.tolist() == [1] * n

    if dtype != torch.bool:
        mine = torch.arange(2 * n, device=device).to(dtype)
        scattered = hvd.reducescatter(mine, op=hvd.Sum, name=f"cuda.rs.{dtype}")
        assert scattered.device == device
        assert torch.equal(scattered.cpu(), (torch.arange(2 * rank, 2 * rank + 2) * n).to(dtype))


def test_the_op_sees_work_on_the_current_stream_and_the_stream_sees_the_result(hvd, device):
    side = torch.cuda.Stream(device)
    with torch.cuda.stream(side):
        t = torch.zeros(1 << 20, device=device)
        torch.cuda._sleep(50_000_000)  # the producer is late
        t += hvd.rank() + 1
        handle = hvd.allreduce_async_(t, op=hvd.Sum, name="cuda.stream.contract")
        hvd.synchronize(handle)
        total = t.sum()  # on `side`, after wait: must see the reduced values
    side.synchronize()
    n = hvd.size()
    assert total.item() == float((1 << 20) * n * (n + 1) // 2)


def _train(hvd, device, name):
    """Three SGD steps of a small model through DistributedOptimizer on `device`; each rank's
    batch differs, so the result depends on the allreduced (averaged) gradients."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    model = model.to(device=device, dtype=torch.float64)
    opt = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1),
                                   named_parameters=[(f"{name}.{k}", v) for k, v in
                                                     model.named_parameters()])
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    generator = torch.Generator().manual_seed(100 + hvd.rank())
    for _ in range(3):
        x = torch.randn(4, 8, generator=generator, dtype=torch.float64).to(device)
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
    return [p.detach().cpu() for p in model.parameters()]


def test_distributed_optimizer_on_the_gpu_matches_the_cpu(hvd, device):
    on_gpu = _train(hvd, device, "cuda.train")
    on_cpu = _train(hvd, torch.device("cpu"), "cpu.train")
    for g, c in zip(on_gpu, on_cpu):
        assert torch.allclose(g, c, rtol=1e-9, atol=1e-12)
