"""Synthetic data-parallel training benchmark (Horovod's pytorch_synthetic_benchmark.py).

Trains a ResNet-style model (defined here) on random data and reports images/second per
process and in total. `--ddp` runs the same loop with torch DistributedDataParallel over gloo
instead of runrun, for a side-by-side number:
    runrun -np 2 python examples/pytorch/synthetic_benchmark.py
    mpirun -np 2 python examples/pytorch/synthetic_benchmark.py --ddp
Under --ddp the rank and size come from RUNRUN_RANK/SIZE or OMPI_COMM_WORLD_RANK/SIZE;
MASTER_ADDR/MASTER_PORT default to 127.0.0.1:29533 (single host).
"""

import argparse
import os
import timeit

import torch
import torch.nn as nn
import torch.nn.functional as F


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                          nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(out)) + self.shortcut(x))


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, cin, width, stride):
        super().__init__()
        cout = width * 4
        self.body = nn.Sequential(
            nn.Conv2d(cin, width, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
            nn.Conv2d(width, width, 3, stride, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
            nn.Conv2d(width, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                          nn.BatchNorm2d(cout))

    def forward(self, x):
        return F.relu(self.body(x) + self.shortcut(x))


class ResNet(nn.Module):
    def __init__(self, block, layers, num_classes=1000):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64),
                                  nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        stages, cin = [], 64
        for i, blocks in enumerate(layers):
            width = 64 * 2 ** i
            for j in range(blocks):
                stages.append(block(cin, width, 2 if (j == 0 and i > 0) else 1))
                cin = width * block.expansion
        self.stages = nn.Sequential(*stages)
        self.fc = nn.Linear(cin, num_classes)

    def forward(self, x):
        x = self.stages(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


MODELS = {
    "resnet18": lambda: ResNet(BasicBlock, [2, 2, 2, 2]),
    "resnet34": lambda: ResNet(BasicBlock, [3, 4, 6, 3]),
    "resnet50": lambda: ResNet(Bottleneck, [3, 4, 6, 3]),
}


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="resnet18", choices=sorted(MODELS))
    parser.add_argument("--batch-size", type=int, default=16, help="per process")
    parser.add_argument("--image-size", type=int, default=64)
    parser.add_argument("--num-warmup-batches", type=int, default=2)
    parser.add_argument("--num-batches-per-iter", type=int, default=3)
    parser.add_argument("--num-iters", type=int, default=5)
    parser.add_argument("--fp16-allreduce", action="store_true")
    parser.add_argument("--ddp", action="store_true",
                        help="use torch DistributedDataParallel over gloo instead of runrun")
    return parser.parse_args()


def env_int(*names, default):
    for name in names:
        if name in os.environ:
            return int(os.environ[name])
    return default


class DdpWorld:
    """The few calls the loop needs, over torch.distributed (gloo)."""

    def __init__(self):
        import torch.distributed as dist

        self.dist = dist
        rank = env_int("RUNRUN_RANK", "OMPI_COMM_WORLD_RANK", "RANK", default=0)
        size = env_int("RUNRUN_SIZE", "OMPI_COMM_WORLD_SIZE", "WORLD_SIZE", default=1)
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29533")
        dist.init_process_group("gloo", rank=rank, world_size=size)

    def rank(self):
        return self.dist.get_rank()

    def size(self):
        return self.dist.get_world_size()

    def wrap(self, model, optimizer, _args):
        return nn.parallel.DistributedDataParallel(model), optimizer

    def shutdown(self):
        self.dist.destroy_process_group()


class RunrunWorld:
    def __init__(self):
        import runrun.torch as hvd

        self.hvd = hvd
        hvd.init()

    def rank(self):
        return self.hvd.rank()

    def size(self):
        return self.hvd.size()

    def wrap(self, model, optimizer, args):
        hvd = self.hvd
        compression = hvd.Compression.fp16 if args.fp16_allreduce else hvd.Compression.none
        optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters(),
                                             compression=compression)
        hvd.broadcast_parameters(model.state_dict(), root_rank=0)
        hvd.broadcast_optimizer_state(optimizer, root_rank=0)
        return model, optimizer

    def shutdown(self):
        self.hvd.shutdown()


def main():
    args = parse_args()
    world = DdpWorld() if args.ddp else RunrunWorld()
    threads = max(1, (os.cpu_count() or 1) // max(1, world.size()))
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = MODELS[args.model]()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01 * world.size())
    model, optimizer = world.wrap(model, optimizer, args)

    data = torch.randn(args.batch_size, 3, args.image_size, args.image_size)
    target = torch.randint(0, 1000, (args.batch_size,))

    def benchmark_step():
        optimizer.zero_grad()
        F.cross_entropy(model(data), target).backward()
        optimizer.step()

    def log(text):
        if world.rank() == 0:
            print(text, flush=True)

    engine = "DistributedDataParallel (gloo)" if args.ddp else "runrun"
    log(f"Model: {args.model}, batch size {args.batch_size}, image {args.image_size}px, "
        f"{world.size()} processes, {engine}, {threads} threads each")
    timeit.timeit(benchmark_step, number=args.num_warmup_batches)
    rates = []
    for i in range(args.num_iters):
        seconds = timeit.timeit(benchmark_step, number=args.num_batches_per_iter)
        rate = args.batch_size * args.num_batches_per_iter / seconds
        log(f"Iter #{i}: {rate:.1f} img/sec per process")
        rates.append(rate)
    mean = sum(rates) / len(rates)
    conf = 1.96 * (sum((r - mean) ** 2 for r in rates) / len(rates)) ** 0.5
    log(f"Img/sec per process: {mean:.1f} +-{conf:.1f}")
    log(f"Total img/sec on {world.size()} processes: {world.size() * mean:.1f} "
        f"+-{world.size() * conf:.1f}")
    world.shutdown()


if __name__ == "__main__":
    main()
