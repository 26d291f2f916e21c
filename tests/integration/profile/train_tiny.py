"""A tiny data-parallel training loop for the --profile tests (profile_plot.sh), unchanged by
profiling: DistributedOptimizer by default, or a custom loop (allreduce + hvd.profile_step())
with --custom, or DistributedOptimizer(double_buffering=True) with --double-buffering (flushed
after the last step). --late-rank R makes rank R sleep --late-ms before its backward every step, so
the others wait for it in their exposed wait."""

import argparse
import time

import torch

import runrun.torch as hvd


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--custom", action="store_true")
    parser.add_argument("--double-buffering", action="store_true")
    parser.add_argument("--late-rank", type=int, default=-1)
    parser.add_argument("--late-ms", type=float, default=0)
    args = parser.parse_args()
    hvd.init()
    torch.set_num_threads(1)  # two ranks share the cores: no thread pool fighting for them
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    if not args.custom:
        optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters(),
                                             double_buffering=args.double_buffering)
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    data, target = torch.randn(64, 256), torch.randint(0, 10, (64,))
    for _ in range(args.steps):
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(data), target)
        if hvd.rank() == args.late_rank:
            time.sleep(args.late_ms / 1e3)
        loss.backward()
        if args.custom:
            handles = [hvd.allreduce_async_(p.grad, name=f"grad.{i}")
                       for i, p in enumerate(model.parameters())]
            for handle in handles:
                hvd.synchronize(handle)
            optimizer.step()
            hvd.profile_step()
        else:
            optimizer.step()
    if args.double_buffering:
        optimizer.flush()
    print(f"TRAINED rank={hvd.rank()} loss={loss.item():.4f}", flush=True)
    hvd.shutdown()


if __name__ == "__main__":
    main()
