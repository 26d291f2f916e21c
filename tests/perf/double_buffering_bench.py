"""Step time of DistributedOptimizer with and without double_buffering, in the same run.

A program, not a test: prints one JSON line per configuration (rank 0), first the same step
with a plain torch optimizer (no communication: the compute there is to overlap), and asserts
nothing about time. The model is communication-bound on purpose: a few wide Linear layers (many
gradient bytes) on a tiny batch (little compute), so waiting for the allreduce dominates a
plain step; double buffering overlaps it with the next step's forward and backward.
Run: runrun -np 2 python tests/perf/double_buffering_bench.py [--width 1024 --steps 20]
Reports the mean and the best of `rounds` timed runs of `steps` steps (flush included).
"""

import argparse
import json
import time

import torch

import runrun.torch as hvd


def make_model(width, layers):
    torch.manual_seed(0)
    mods = []
    for _ in range(layers):
        mods += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    return torch.nn.Sequential(*mods)


def time_steps(args, double_buffering, compression):
    """Seconds per step; compression=None: the plain torch optimizer (no communication)."""
    model = make_model(args.width, args.layers)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    if compression is not None:
        opt = hvd.DistributedOptimizer(opt, named_parameters=model.named_parameters(),
                                       compression=compression,
                                       double_buffering=double_buffering)
    x = torch.randn(args.batch, args.width)

    def run(steps):
        for _ in range(steps):
            opt.zero_grad()
            model(x).pow(2).mean().backward()
            opt.step()
        if compression is not None:
            opt.flush()  # the last allreduce counts too

    run(args.warmup)
    hvd.barrier()
    start = time.perf_counter()
    run(args.steps)
    return (time.perf_counter() - start) / args.steps


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3, help="alternations of the two modes")
    parser.add_argument("--threads", type=int, default=1, help="torch threads per rank")
    args = parser.parse_args()
    hvd.init()
    torch.set_num_threads(args.threads)
    params = sum(p.numel() for p in make_model(args.width, args.layers).parameters())
    local = [time_steps(args, False, None) for _ in range(args.rounds)]
    if hvd.rank() == 0:  # the same step without communication: the compute to overlap
        print(json.dumps({"size": hvd.size(), "params": params, "batch": args.batch,
                          "compression": "local (no allreduce)", "double_buffering": False,
                          "step_ms": round(1e3 * sum(local) / len(local), 2),
                          "step_min_ms": round(1e3 * min(local), 2)}), flush=True)
    for compression in ("none", "fp16"):
        results = {False: [], True: []}
        for _ in range(args.rounds):
            for double_buffering in (False, True):
                results[double_buffering].append(
                    time_steps(args, double_buffering, getattr(hvd.Compression, compression)))
        if hvd.rank() == 0:
            for double_buffering, runs in results.items():
                print(json.dumps({
                    "size": hvd.size(), "params": params, "batch": args.batch,
                    "compression": compression, "double_buffering": double_buffering,
                    "step_ms": round(1e3 * sum(runs) / len(runs), 2),
                    "step_min_ms": round(1e3 * min(runs), 2)}), flush=True)


if __name__ == "__main__":
    main()
