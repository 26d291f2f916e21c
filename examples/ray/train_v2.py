"""A Ray Train V2 job with runrun as its backend (what Ray's removed HorovodTrainer did).

    python3 examples/ray/train_v2.py --num-workers 2
docs/ray.md, "Ray Train".
"""

import argparse
import tempfile

import ray.train
from ray.train import FailureConfig, RunConfig, ScalingConfig

from runrun.ray import RunrunTrainer


def train_loop(config):
    import torch

    import runrun.torch as hvd

    hvd.init()  # the backend formed the job already: a no-op
    torch.manual_seed(0)
    model = torch.nn.Linear(10, 1)
    optimizer = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=config["lr"]),
                                         named_parameters=model.named_parameters())
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    for step in range(config["steps"]):
        x = torch.randn(32, 10)
        loss = torch.nn.functional.mse_loss(model(x), x.sum(dim=1, keepdim=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        ray.train.report({"step": step, "loss": loss.item()})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--num-workers", type=int, default=2)
    parser.add_argument("--use-gpu", action="store_true")
    args = parser.parse_args()
    trainer = RunrunTrainer(
        train_loop, train_loop_config={"lr": 0.01, "steps": 20},
        scaling_config=ScalingConfig(num_workers=args.num_workers, use_gpu=args.use_gpu),
        run_config=RunConfig(storage_path=tempfile.mkdtemp(),
                             failure_config=FailureConfig(max_failures=2)))
    result = trainer.fit()
    print("finished:", result.error or "no error")


if __name__ == "__main__":
    main()
