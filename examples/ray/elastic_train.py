"""Horovod's elastic Ray script on runrun: only the imports changed.

The job trains while Ray nodes come and go (docs/ray.md, "Elastic"): at least --min-workers,
at most --max-workers workers, one per --cpus-per-worker CPUs of each node; a lost node's
workers drop out and the others go on from the last commit, a new node's join.

Run on a Ray cluster (`ray start --head` first, or nothing for a local one):
    python3 examples/ray/elastic_train.py --min-workers 1 --max-workers 4
"""

import argparse

import ray

from runrun.ray import RayExecutor


def train(epochs, steps_per_epoch):
    import torch

    import runrun.torch as hvd

    hvd.init()
    torch.manual_seed(0)
    model = torch.nn.Linear(10, 1)
    optimizer = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.01),
                                         named_parameters=model.named_parameters())
    state = hvd.elastic.TorchState(model, optimizer, epoch=0, batch=0)

    @hvd.elastic.run
    def loop(state):
        generator = torch.Generator().manual_seed(hvd.rank())
        for state.epoch in range(state.epoch, epochs):
            for state.batch in range(state.batch, steps_per_epoch):
                x = torch.randn(32, 10, generator=generator)
                loss = torch.nn.functional.mse_loss(model(x), x.sum(dim=1, keepdim=True))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                state.commit()  # a lost node costs at most the step since this
            state.batch = 0
        return loss.item()

    loss = loop(state)
    return hvd.rank(), hvd.size(), loss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--min-workers", type=int, default=1)
    parser.add_argument("--max-workers", type=int, default=2)
    parser.add_argument("--cpus-per-worker", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--steps-per-epoch", type=int, default=10)
    args = parser.parse_args()
    ray.init()  # the running cluster (ray start, RAY_ADDRESS), else a local one
    executor = RayExecutor(RayExecutor.create_settings(timeout_s=60),
                           min_workers=args.min_workers, max_workers=args.max_workers,
                           cpus_per_worker=args.cpus_per_worker, elastic_timeout=120)
    executor.start()
    try:
        for rank, size, loss in executor.run(train, args=[args.epochs, args.steps_per_epoch]):
            print(f"rank {rank} of {size}: final loss {loss:.4f}")
    finally:
        executor.shutdown()


if __name__ == "__main__":
    main()
