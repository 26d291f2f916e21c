"""One rank of a cluster-launch test: forms the job however it was started (runrun's launcher,
srun, torchrun), checks its size, trains a small model a few steps with DistributedOptimizer on
its slice of a global batch, and checks that (a) every rank ends with the same parameters and
(b) they equal one process trained on the whole global batch. Prints one line
'TRAIN_CHECK STARTED rank R of N pid P' after init() and 'TRAIN_CHECK OK rank R of N ...' on
success; any mismatch raises (the process exits non-zero).

Usage: python train_check.py EXPECTED_SIZE [--steps N] [--sleep S] [--tag TOKEN]
--sleep makes each step slow (for tests that cancel or kill the job mid-run).
"""
import argparse
import os
import socket
import sys
import time

import torch

import runrun.torch as hvd

GLOBAL_BATCH = 24  # divisible by 1, 2, 3, 4, 6, 8


def say(line):
    """One line in one write: ranks sharing a stdout (torchrun's, with PYTHONUNBUFFERED set, where
    print writes the text and the newline apart) must not interleave inside a line."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def make_model():
    torch.manual_seed(1234)
    return torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Tanh(), torch.nn.Linear(7, 1))


def global_batch(step):
    generator = torch.Generator().manual_seed(100 + step)
    x = torch.randn(GLOBAL_BATCH, 5, generator=generator, dtype=torch.float64).float()
    y = torch.randn(GLOBAL_BATCH, 1, generator=generator, dtype=torch.float64).float()
    return x, y


def train(model, optimizer, steps, rank, size, sleep_s):
    share = GLOBAL_BATCH // size
    for step in range(steps):
        x, y = global_batch(step)
        x, y = x[rank * share:(rank + 1) * share], y[rank * share:(rank + 1) * share]
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
        if sleep_s:
            time.sleep(sleep_s)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("expected_size", type=int)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--sleep", type=float, default=0.0)
    parser.add_argument("--tag", default="", help="ignored: marks the test's processes for pgrep")
    args = parser.parse_args()

    hvd.init()
    rank, size = hvd.rank(), hvd.size()
    say(f"TRAIN_CHECK STARTED rank {rank} of {size} pid {os.getpid()}")
    if size != args.expected_size:
        raise SystemExit(
            f"TRAIN_CHECK FAIL rank {rank}: size {size}, expected {args.expected_size}")
    if GLOBAL_BATCH % size:
        raise SystemExit(f"TRAIN_CHECK FAIL: global batch {GLOBAL_BATCH} not divisible by {size}")

    model = make_model()
    # A different start on every rank: the broadcast must make them equal.
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(0.01 * rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters())
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    hvd.broadcast_optimizer_state(optimizer, root_rank=0)
    train(model, optimizer, args.steps, rank, size, args.sleep)

    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    every = hvd.allgather(flat.unsqueeze(0), name="train_check.params")
    for other in range(size):
        if not torch.equal(every[other], flat):
            raise SystemExit(f"TRAIN_CHECK FAIL rank {rank}: parameters differ from rank {other}")

    reference = make_model()
    reference_optimizer = torch.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    train(reference, reference_optimizer, args.steps, 0, 1, 0.0)
    expected = torch.cat([p.detach().reshape(-1) for p in reference.parameters()])
    if not torch.allclose(flat, expected, rtol=1e-5, atol=1e-6):
        worst = (flat - expected).abs().max().item()
        raise SystemExit(f"TRAIN_CHECK FAIL rank {rank}: differs from one process on the global "
                         f"batch by {worst}")
    say(f"TRAIN_CHECK OK rank {rank} of {size} local_rank {hvd.local_rank()} of "
        f"{hvd.local_size()} cross_rank {hvd.cross_rank()} of {hvd.cross_size()} host "
        f"{socket.gethostname()} pid {os.getpid()}")
    hvd.shutdown()


if __name__ == "__main__":
    main()
