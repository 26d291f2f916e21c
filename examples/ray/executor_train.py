"""Horovod's horovod.ray.RayExecutor script on runrun: only the imports changed.

Run on a Ray cluster (`ray start --head` first, or nothing for a local one):
    python3 examples/ray/executor_train.py --num-workers 2
docs/ray.md.
"""

import argparse

import ray

from runrun.ray import RayExecutor


def train(steps):
    import torch

    import runrun.torch as hvd

    hvd.init()
    torch.manual_seed(0)
    model = torch.nn.Linear(10, 1)
    optimizer = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.01),
                                         named_parameters=model.named_parameters())
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    generator = torch.Generator().manual_seed(hvd.rank())
    for _ in range(steps):
        x = torch.randn(32, 10, generator=generator)
        loss = torch.nn.functional.mse_loss(model(x), x.sum(dim=1, keepdim=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return hvd.rank(), loss.item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--num-workers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--use-gpu", action="store_true")
    args = parser.parse_args()
    ray.init()  # the running cluster (ray start, RAY_ADDRESS), else a local one
    settings = RayExecutor.create_settings(timeout_s=60)
    executor = RayExecutor(settings, num_workers=args.num_workers, use_gpu=args.use_gpu)
    executor.start()
    try:
        for rank, loss in executor.run(train, args=[args.steps]):
            print(f"rank {rank}: final loss {loss:.4f}")
    finally:
        executor.shutdown()


if __name__ == "__main__":
    main()
